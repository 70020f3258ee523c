-- +goose Up
-- disable the enforcement of foreign-keys constraints
PRAGMA foreign_keys = off;
-- add column "provider" to table: "fiat_accounts"
ALTER TABLE `fiat_accounts` ADD COLUMN `provider` text NULL;
-- add column "provider_customer" to table: "fiat_accounts"
ALTER TABLE `fiat_accounts` ADD COLUMN `provider_customer` text NULL;
-- create "new_transactions" table
CREATE TABLE `new_transactions` (`id` text NOT NULL, `merchant_id` text NOT NULL, `mode` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `reference` text NOT NULL, `merchant_reference` text NULL, `merchant_reference_key` text NULL, `type` text NOT NULL, `purpose` text NOT NULL, `status` text NOT NULL, `from_amount` integer NOT NULL, `from_currency` text NOT NULL, `amount` integer NOT NULL, `currency` text NOT NULL, `amount_charged` integer NOT NULL, `amount_settled` integer NOT NULL, `to_amount` integer NULL, `to_currency` text NULL, `fee` integer NOT NULL DEFAULT (0), `fee_currency` text NULL, `trx_rate` text NULL, `rate_id` text NULL, `from_party` text NOT NULL DEFAULT ('SELF'), `to_party` text NOT NULL DEFAULT ('OTHER'), `channel` text NOT NULL DEFAULT ('API'), `narration` text NOT NULL DEFAULT (''), `beneficiary` text NULL, `fee_bearer` text NOT NULL DEFAULT ('merchant'), `destination` text NOT NULL DEFAULT ('main_balance'), `payment_slug` text NOT NULL, `from_merchant` text NOT NULL DEFAULT (''), `to_merchant` text NULL, `settled_at` datetime NULL, `settlement_time` text NULL, `settlement_date` datetime NULL, `reject_reason` text NULL, `trace_id` text NULL, `payment_proof` text NULL, `wallet_reference` text NULL, `account_reference` text NULL, `account_id` text NULL, `sender_name` text NULL, `sender_bank` text NULL, `prepay_id` text NULL, `links` json NULL, `expires_at` datetime NULL, `next_run_at` datetime NULL, `attempts` integer NOT NULL DEFAULT (0), `lease_owner` text NULL, `lease_until` datetime NULL, `rails_reference` text NULL, `submitted_at` datetime NULL, `trace_parent` text NULL, `provider` text NULL, `provider_reference` text NULL, `rails_flag` text NULL, PRIMARY KEY (`id`));
-- copy rows from old table "transactions" to new temporary table "new_transactions"
INSERT INTO `new_transactions` (`id`, `merchant_id`, `mode`, `created_at`, `updated_at`, `reference`, `merchant_reference`, `merchant_reference_key`, `type`, `purpose`, `status`, `from_amount`, `from_currency`, `amount`, `currency`, `amount_charged`, `amount_settled`, `to_amount`, `to_currency`, `fee`, `fee_currency`, `trx_rate`, `rate_id`, `from_party`, `to_party`, `channel`, `narration`, `beneficiary`, `fee_bearer`, `destination`, `payment_slug`, `from_merchant`, `to_merchant`, `settled_at`, `settlement_time`, `settlement_date`, `reject_reason`, `trace_id`, `payment_proof`, `wallet_reference`, `account_reference`, `account_id`, `sender_name`, `sender_bank`, `prepay_id`, `links`, `expires_at`, `next_run_at`, `attempts`, `lease_owner`, `lease_until`, `rails_reference`, `submitted_at`, `trace_parent`) SELECT `id`, `merchant_id`, `mode`, `created_at`, `updated_at`, `reference`, `merchant_reference`, `merchant_reference_key`, `type`, `purpose`, `status`, `from_amount`, `from_currency`, `amount`, `currency`, `amount_charged`, `amount_settled`, `to_amount`, `to_currency`, `fee`, `fee_currency`, `trx_rate`, `rate_id`, `from_party`, `to_party`, `channel`, `narration`, `beneficiary`, `fee_bearer`, `destination`, `payment_slug`, `from_merchant`, `to_merchant`, `settled_at`, `settlement_time`, `settlement_date`, `reject_reason`, `trace_id`, `payment_proof`, `wallet_reference`, `account_reference`, `account_id`, `sender_name`, `sender_bank`, `prepay_id`, `links`, `expires_at`, `next_run_at`, `attempts`, `lease_owner`, `lease_until`, `rails_reference`, `submitted_at`, `trace_parent` FROM `transactions`;
-- drop "transactions" table after copying rows
DROP TABLE `transactions`;
-- rename temporary table "new_transactions" to "transactions"
ALTER TABLE `new_transactions` RENAME TO `transactions`;
-- create index "transactions_reference_key" to table: "transactions"
CREATE UNIQUE INDEX `transactions_reference_key` ON `transactions` (`reference`);
-- create index "transactions_prepay_id_key" to table: "transactions"
CREATE UNIQUE INDEX `transactions_prepay_id_key` ON `transactions` (`prepay_id`);
-- create index "transactions_provider_reference_key" to table: "transactions"
CREATE UNIQUE INDEX `transactions_provider_reference_key` ON `transactions` (`provider_reference`);
-- create index "transaction_merchant_id_mode_merchant_reference_key" to table: "transactions"
CREATE UNIQUE INDEX `transaction_merchant_id_mode_merchant_reference_key` ON `transactions` (`merchant_id`, `mode`, `merchant_reference_key`);
-- create index "transaction_merchant_id_mode_created_at_id" to table: "transactions"
CREATE INDEX `transaction_merchant_id_mode_created_at_id` ON `transactions` (`merchant_id`, `mode`, `created_at`, `id`);
-- create index "transaction_type_next_run_at" to table: "transactions"
CREATE INDEX `transaction_type_next_run_at` ON `transactions` (`type`, `next_run_at`) WHERE next_run_at IS NOT NULL;
-- create "rails_notices" table
CREATE TABLE `rails_notices` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `provider` text NOT NULL, `key` text NOT NULL, `kind` text NOT NULL, `reference` text NULL, `outcome` text NOT NULL, `detail` text NULL, `body` text NULL, `created_at` datetime NOT NULL);
-- create index "railsnotice_provider_key" to table: "rails_notices"
CREATE UNIQUE INDEX `railsnotice_provider_key` ON `rails_notices` (`provider`, `key`);
-- create index "railsnotice_outcome_created_at" to table: "rails_notices"
CREATE INDEX `railsnotice_outcome_created_at` ON `rails_notices` (`outcome`, `created_at`);
-- enable back the enforcement of foreign-keys constraints
PRAGMA foreign_keys = on;

-- +goose Down
-- reverse: create index "railsnotice_outcome_created_at" to table: "rails_notices"
DROP INDEX `railsnotice_outcome_created_at`;
-- reverse: create index "railsnotice_provider_key" to table: "rails_notices"
DROP INDEX `railsnotice_provider_key`;
-- reverse: create "rails_notices" table
DROP TABLE `rails_notices`;
-- Written by hand: the generator's down part reversed its up part's copy
-- of the whole table, dropping the five indexes that "transactions" had
-- before this migration (the up part only created them again on the copy)
-- and a "new_transactions" table that no longer exists after the rename,
-- and kept the three columns the up part added. Only the index on
-- provider_reference and those columns are this migration's; the index
-- goes first, since SQLite cannot drop an indexed column.
-- reverse: create index "transactions_provider_reference_key" to table: "transactions"
DROP INDEX `transactions_provider_reference_key`;
-- reverse: add column "rails_flag" to table: "transactions"
ALTER TABLE `transactions` DROP COLUMN `rails_flag`;
-- reverse: add column "provider_reference" to table: "transactions"
ALTER TABLE `transactions` DROP COLUMN `provider_reference`;
-- reverse: add column "provider" to table: "transactions"
ALTER TABLE `transactions` DROP COLUMN `provider`;
-- reverse: add column "provider_customer" to table: "fiat_accounts"
ALTER TABLE `fiat_accounts` DROP COLUMN `provider_customer`;
-- reverse: add column "provider" to table: "fiat_accounts"
ALTER TABLE `fiat_accounts` DROP COLUMN `provider`;
