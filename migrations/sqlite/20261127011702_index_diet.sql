-- +goose Up
-- disable the enforcement of foreign-keys constraints
PRAGMA foreign_keys = off;
-- create "new_transactions" table
CREATE TABLE `new_transactions` (`id` text NOT NULL, `merchant_id` text NOT NULL, `mode` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `reference` text NOT NULL, `merchant_reference` text NULL, `merchant_reference_key` text NULL, `type` text NOT NULL, `purpose` text NOT NULL, `status` text NOT NULL, `from_amount` integer NOT NULL, `from_currency` text NOT NULL, `amount` integer NOT NULL, `currency` text NOT NULL, `amount_charged` integer NOT NULL, `amount_settled` integer NOT NULL, `to_amount` integer NULL, `to_currency` text NULL, `fee` integer NOT NULL DEFAULT (0), `fee_currency` text NULL, `trx_rate` text NULL, `rate_id` text NULL, `from_party` text NOT NULL DEFAULT ('SELF'), `to_party` text NOT NULL DEFAULT ('OTHER'), `channel` text NOT NULL DEFAULT ('API'), `narration` text NOT NULL DEFAULT (''), `beneficiary` text NULL, `fee_bearer` text NOT NULL DEFAULT ('merchant'), `destination` text NOT NULL DEFAULT ('main_balance'), `payment_slug` text NOT NULL, `from_merchant` text NOT NULL DEFAULT (''), `to_merchant` text NULL, `settled_at` datetime NULL, `settlement_time` text NULL, `settlement_date` datetime NULL, `reject_reason` text NULL, `trace_id` text NULL, `payment_proof` text NULL, `wallet_reference` text NULL, `account_reference` text NULL, `account_id` text NULL, `sender_name` text NULL, `sender_bank` text NULL, `prepay_id` text NULL, `links` json NULL, `expires_at` datetime NULL, `next_run_at` datetime NULL, `attempts` integer NOT NULL DEFAULT (0), `lease_owner` text NULL, `lease_until` datetime NULL, `rails_reference` text NULL, `submitted_at` datetime NULL, `trace_parent` text NULL, `provider` text NULL, `provider_reference` text NULL, `rails_flag` text NULL, PRIMARY KEY (`id`));
-- copy rows from old table "transactions" to new temporary table "new_transactions"
INSERT INTO `new_transactions` (`id`, `merchant_id`, `mode`, `created_at`, `updated_at`, `reference`, `merchant_reference`, `merchant_reference_key`, `type`, `purpose`, `status`, `from_amount`, `from_currency`, `amount`, `currency`, `amount_charged`, `amount_settled`, `to_amount`, `to_currency`, `fee`, `fee_currency`, `trx_rate`, `rate_id`, `from_party`, `to_party`, `channel`, `narration`, `beneficiary`, `fee_bearer`, `destination`, `payment_slug`, `from_merchant`, `to_merchant`, `settled_at`, `settlement_time`, `settlement_date`, `reject_reason`, `trace_id`, `payment_proof`, `wallet_reference`, `account_reference`, `account_id`, `sender_name`, `sender_bank`, `prepay_id`, `links`, `expires_at`, `next_run_at`, `attempts`, `lease_owner`, `lease_until`, `rails_reference`, `submitted_at`, `trace_parent`, `provider`, `provider_reference`, `rails_flag`) SELECT `id`, `merchant_id`, `mode`, `created_at`, `updated_at`, `reference`, `merchant_reference`, `merchant_reference_key`, `type`, `purpose`, `status`, `from_amount`, `from_currency`, `amount`, `currency`, `amount_charged`, `amount_settled`, `to_amount`, `to_currency`, `fee`, `fee_currency`, `trx_rate`, `rate_id`, `from_party`, `to_party`, `channel`, `narration`, `beneficiary`, `fee_bearer`, `destination`, `payment_slug`, `from_merchant`, `to_merchant`, `settled_at`, `settlement_time`, `settlement_date`, `reject_reason`, `trace_id`, `payment_proof`, `wallet_reference`, `account_reference`, `account_id`, `sender_name`, `sender_bank`, `prepay_id`, `links`, `expires_at`, `next_run_at`, `attempts`, `lease_owner`, `lease_until`, `rails_reference`, `submitted_at`, `trace_parent`, `provider`, `provider_reference`, `rails_flag` FROM `transactions`;
-- drop "transactions" table after copying rows
DROP TABLE `transactions`;
-- rename temporary table "new_transactions" to "transactions"
ALTER TABLE `new_transactions` RENAME TO `transactions`;
-- create index "transactions_reference_key" to table: "transactions"
CREATE UNIQUE INDEX `transactions_reference_key` ON `transactions` (`reference`);
-- create index "transaction_merchant_id_mode_merchant_reference_key" to table: "transactions"
CREATE UNIQUE INDEX `transaction_merchant_id_mode_merchant_reference_key` ON `transactions` (`merchant_id`, `mode`, `merchant_reference_key`) WHERE merchant_reference_key IS NOT NULL;
-- create index "transaction_prepay_id" to table: "transactions"
CREATE UNIQUE INDEX `transaction_prepay_id` ON `transactions` (`prepay_id`) WHERE prepay_id IS NOT NULL;
-- create index "transaction_provider_reference" to table: "transactions"
CREATE UNIQUE INDEX `transaction_provider_reference` ON `transactions` (`provider_reference`) WHERE provider_reference IS NOT NULL;
-- create index "transaction_merchant_id_mode_created_at_id" to table: "transactions"
CREATE INDEX `transaction_merchant_id_mode_created_at_id` ON `transactions` (`merchant_id`, `mode`, `created_at`, `id`);
-- create index "transaction_type_next_run_at" to table: "transactions"
CREATE INDEX `transaction_type_next_run_at` ON `transactions` (`type`, `next_run_at`) WHERE next_run_at IS NOT NULL;
-- enable back the enforcement of foreign-keys constraints
PRAGMA foreign_keys = on;

-- +goose Down
-- reverse: create index "transaction_type_next_run_at" to table: "transactions"
DROP INDEX `transaction_type_next_run_at`;
-- reverse: create index "transaction_merchant_id_mode_created_at_id" to table: "transactions"
DROP INDEX `transaction_merchant_id_mode_created_at_id`;
-- reverse: create index "transaction_provider_reference" to table: "transactions"
DROP INDEX `transaction_provider_reference`;
-- reverse: create index "transaction_prepay_id" to table: "transactions"
DROP INDEX `transaction_prepay_id`;
-- reverse: create index "transaction_merchant_id_mode_merchant_reference_key" to table: "transactions"
DROP INDEX `transaction_merchant_id_mode_merchant_reference_key`;
-- reverse: create index "transactions_reference_key" to table: "transactions"
DROP INDEX `transactions_reference_key`;
-- reverse: create "new_transactions" table
DROP TABLE `new_transactions`;
