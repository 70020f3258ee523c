-- +goose Up
-- create "api_keys" table
CREATE TABLE `api_keys` (`id` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `merchant_id` text NOT NULL, `mode` text NOT NULL, `kind` text NOT NULL, `hash` text NOT NULL, `prefix` text NOT NULL, `revoked_at` datetime NULL, PRIMARY KEY (`id`));
-- create index "api_keys_hash_key" to table: "api_keys"
CREATE UNIQUE INDEX `api_keys_hash_key` ON `api_keys` (`hash`);
-- create index "apikey_merchant_id_mode_kind" to table: "api_keys"
CREATE INDEX `apikey_merchant_id_mode_kind` ON `api_keys` (`merchant_id`, `mode`, `kind`);
-- create "balance_slots" table
CREATE TABLE `balance_slots` (`id` text NOT NULL, `account_id` text NOT NULL, `available` integer NOT NULL DEFAULT (0), `updated_at` datetime NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `balance_slots_nonnegative` CHECK (available >= 0));
-- create index "balanceslot_account_id" to table: "balance_slots"
CREATE INDEX `balanceslot_account_id` ON `balance_slots` (`account_id`);
-- create "crypto_pay_enrolments" table
CREATE TABLE `crypto_pay_enrolments` (`id` text NOT NULL, `merchant_id` text NOT NULL, `mode` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `business_name` text NOT NULL, `logo_url` text NOT NULL, `website` text NOT NULL, `success_url` text NOT NULL, `failure_url` text NOT NULL, `status` text NOT NULL, `approved_at` datetime NULL, PRIMARY KEY (`id`));
-- create index "crypto_pay_enrolments_tenant_unique" to table: "crypto_pay_enrolments"
CREATE UNIQUE INDEX `crypto_pay_enrolments_tenant_unique` ON `crypto_pay_enrolments` (`merchant_id`, `mode`);
-- create "email_notifications" table
CREATE TABLE `email_notifications` (`id` text NOT NULL, `merchant_id` text NOT NULL, `mode` text NOT NULL, `event_id` text NOT NULL, `event_type` text NOT NULL, `to_address` text NOT NULL, `subject` text NOT NULL, `body` text NOT NULL, `status` text NOT NULL, `attempts` integer NOT NULL DEFAULT (0), `next_attempt_at` datetime NULL, `lease_owner` text NULL, `lease_until` datetime NULL, `last_error` text NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `sent_at` datetime NULL, PRIMARY KEY (`id`));
-- create index "email_notifications_event_id_key" to table: "email_notifications"
CREATE UNIQUE INDEX `email_notifications_event_id_key` ON `email_notifications` (`event_id`);
-- create index "emailnotification_status_next_attempt_at" to table: "email_notifications"
CREATE INDEX `emailnotification_status_next_attempt_at` ON `email_notifications` (`status`, `next_attempt_at`);
-- create index "emailnotification_merchant_id_mode" to table: "email_notifications"
CREATE INDEX `emailnotification_merchant_id_mode` ON `email_notifications` (`merchant_id`, `mode`);
-- create "events" table
CREATE TABLE `events` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `merchant_id` text NOT NULL, `mode` text NOT NULL, `event_id` text NOT NULL, `type` text NOT NULL, `transaction_ref` text NULL, `payload` blob NOT NULL, `created_at` datetime NOT NULL, `fanned_out` bool NOT NULL DEFAULT (false));
-- create index "events_event_id_key" to table: "events"
CREATE UNIQUE INDEX `events_event_id_key` ON `events` (`event_id`);
-- create index "event_fanned_out_id" to table: "events"
CREATE INDEX `event_fanned_out_id` ON `events` (`fanned_out`, `id`);
-- create index "event_merchant_id_mode_id" to table: "events"
CREATE INDEX `event_merchant_id_mode_id` ON `events` (`merchant_id`, `mode`, `id`);
-- create "fiat_accounts" table
CREATE TABLE `fiat_accounts` (`id` text NOT NULL, `merchant_id` text NOT NULL, `mode` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `reference` text NOT NULL, `wallet_id` text NULL, `wallet_reference` text NULL, `account_type` text NOT NULL, `currency` text NOT NULL, `amount` integer NULL, `expires_at` datetime NULL, `reject_amount_criteria` text NULL, `account_number` text NOT NULL, `account_name` text NOT NULL, `bank_name` text NOT NULL, `bank_code` text NOT NULL, `status` text NOT NULL DEFAULT ('active'), PRIMARY KEY (`id`));
-- create index "fiat_accounts_account_number_key" to table: "fiat_accounts"
CREATE UNIQUE INDEX `fiat_accounts_account_number_key` ON `fiat_accounts` (`account_number`);
-- create index "fiataccount_merchant_id_mode_reference" to table: "fiat_accounts"
CREATE UNIQUE INDEX `fiataccount_merchant_id_mode_reference` ON `fiat_accounts` (`merchant_id`, `mode`, `reference`);
-- create index "fiataccount_wallet_id" to table: "fiat_accounts"
CREATE INDEX `fiataccount_wallet_id` ON `fiat_accounts` (`wallet_id`);
-- create "idempotency_records" table
CREATE TABLE `idempotency_records` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `merchant_id` text NOT NULL, `mode` text NOT NULL, `key` text NOT NULL, `request_hash` text NOT NULL, `status_code` integer NOT NULL, `body` blob NOT NULL, `content_type` text NOT NULL, `created_at` datetime NOT NULL, `expires_at` datetime NOT NULL);
-- create index "idempotencyrecord_merchant_id_mode_key" to table: "idempotency_records"
CREATE UNIQUE INDEX `idempotencyrecord_merchant_id_mode_key` ON `idempotency_records` (`merchant_id`, `mode`, `key`);
-- create index "idempotencyrecord_expires_at" to table: "idempotency_records"
CREATE INDEX `idempotencyrecord_expires_at` ON `idempotency_records` (`expires_at`);
-- create "ledger_accounts" table
CREATE TABLE `ledger_accounts` (`id` text NOT NULL, `owner` text NOT NULL, `mode` text NOT NULL, `currency` text NOT NULL, `kind` text NOT NULL, `tracks_balance` bool NOT NULL DEFAULT (true), `available` integer NOT NULL DEFAULT (0), `pending` integer NOT NULL DEFAULT (0), `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `ledger_accounts_nonnegative` CHECK (available >= 0 AND pending >= 0));
-- create index "ledgeraccount_owner_mode_kind" to table: "ledger_accounts"
CREATE INDEX `ledgeraccount_owner_mode_kind` ON `ledger_accounts` (`owner`, `mode`, `kind`);
-- create "ledger_entries" table
CREATE TABLE `ledger_entries` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `posting_id` text NOT NULL, `seq` integer NOT NULL, `account_id` text NOT NULL, `currency` text NOT NULL, `bucket` text NOT NULL, `amount` integer NOT NULL, `transaction_ref` text NULL, `memo` text NULL, `created_at` datetime NOT NULL);
-- create index "ledgerentry_account_id" to table: "ledger_entries"
CREATE INDEX `ledgerentry_account_id` ON `ledger_entries` (`account_id`);
-- create index "ledgerentry_posting_id_seq" to table: "ledger_entries"
CREATE UNIQUE INDEX `ledgerentry_posting_id_seq` ON `ledger_entries` (`posting_id`, `seq`);
-- create "merchants" table
CREATE TABLE `merchants` (`id` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `name` text NOT NULL, `email` text NOT NULL, PRIMARY KEY (`id`));
-- create "merchant_pairs" table
CREATE TABLE `merchant_pairs` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `merchant_id` text NOT NULL, `pair_id` text NOT NULL, `enabled` bool NOT NULL, `updated_at` datetime NOT NULL);
-- create index "merchantpair_merchant_id_pair_id" to table: "merchant_pairs"
CREATE UNIQUE INDEX `merchantpair_merchant_id_pair_id` ON `merchant_pairs` (`merchant_id`, `pair_id`);
-- create "pairs" table
CREATE TABLE `pairs` (`id` text NOT NULL, `asset` text NOT NULL, `fiat` text NOT NULL, `mid` text NOT NULL, `spread` text NOT NULL, `fees` json NOT NULL, `default_enabled` bool NOT NULL DEFAULT (true), `config_hash` text NOT NULL DEFAULT (''), `updated_at` datetime NOT NULL, PRIMARY KEY (`id`));
-- create "quotes" table
CREATE TABLE `quotes` (`id` text NOT NULL, `merchant_id` text NOT NULL, `mode` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `pair_id` text NOT NULL, `market` text NOT NULL, `from_currency` text NOT NULL, `to_currency` text NOT NULL, `from_amount` integer NOT NULL, `to_amount` integer NOT NULL, `fee` integer NOT NULL, `fixed_side` text NOT NULL, `rate` text NOT NULL, `transaction_type` text NOT NULL, `deposit_method` text NULL, `withdrawal_method` text NULL, `expires_at` datetime NOT NULL, `used` bool NOT NULL DEFAULT (false), `used_by` text NULL, PRIMARY KEY (`id`));
-- create index "quote_merchant_id_mode" to table: "quotes"
CREATE INDEX `quote_merchant_id_mode` ON `quotes` (`merchant_id`, `mode`);
-- create "transactions" table
CREATE TABLE `transactions` (`id` text NOT NULL, `merchant_id` text NOT NULL, `mode` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `reference` text NOT NULL, `merchant_reference` text NULL, `merchant_reference_key` text NULL, `type` text NOT NULL, `purpose` text NOT NULL, `status` text NOT NULL, `from_amount` integer NOT NULL, `from_currency` text NOT NULL, `amount` integer NOT NULL, `currency` text NOT NULL, `amount_charged` integer NOT NULL, `amount_settled` integer NOT NULL, `to_amount` integer NULL, `to_currency` text NULL, `fee` integer NOT NULL DEFAULT (0), `fee_currency` text NULL, `trx_rate` text NULL, `rate_id` text NULL, `from_party` text NOT NULL DEFAULT ('SELF'), `to_party` text NOT NULL DEFAULT ('OTHER'), `channel` text NOT NULL DEFAULT ('API'), `narration` text NOT NULL DEFAULT (''), `beneficiary` text NULL, `fee_bearer` text NOT NULL DEFAULT ('merchant'), `destination` text NOT NULL DEFAULT ('main_balance'), `payment_slug` text NOT NULL, `from_merchant` text NOT NULL DEFAULT (''), `to_merchant` text NULL, `settled_at` datetime NULL, `settlement_time` text NULL, `settlement_date` datetime NULL, `reject_reason` text NULL, `trace_id` text NULL, `payment_proof` text NULL, `wallet_reference` text NULL, `account_reference` text NULL, `account_id` text NULL, `sender_name` text NULL, `sender_bank` text NULL, `prepay_id` text NULL, `links` json NULL, `expires_at` datetime NULL, `next_run_at` datetime NULL, `attempts` integer NOT NULL DEFAULT (0), `lease_owner` text NULL, `lease_until` datetime NULL, `rails_reference` text NULL, `submitted_at` datetime NULL, PRIMARY KEY (`id`));
-- create index "transactions_reference_key" to table: "transactions"
CREATE UNIQUE INDEX `transactions_reference_key` ON `transactions` (`reference`);
-- create index "transactions_prepay_id_key" to table: "transactions"
CREATE UNIQUE INDEX `transactions_prepay_id_key` ON `transactions` (`prepay_id`);
-- create index "transaction_merchant_id_mode_merchant_reference_key" to table: "transactions"
CREATE UNIQUE INDEX `transaction_merchant_id_mode_merchant_reference_key` ON `transactions` (`merchant_id`, `mode`, `merchant_reference_key`);
-- create index "transaction_merchant_id_mode_created_at_id" to table: "transactions"
CREATE INDEX `transaction_merchant_id_mode_created_at_id` ON `transactions` (`merchant_id`, `mode`, `created_at`, `id`);
-- create index "transaction_type_next_run_at" to table: "transactions"
CREATE INDEX `transaction_type_next_run_at` ON `transactions` (`type`, `next_run_at`) WHERE next_run_at IS NOT NULL;
-- create "wallets" table
CREATE TABLE `wallets` (`id` text NOT NULL, `merchant_id` text NOT NULL, `mode` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `reference` text NOT NULL, `firstname` text NOT NULL, `lastname` text NOT NULL, `email` text NOT NULL, `phone` text NOT NULL, `documents` json NOT NULL, PRIMARY KEY (`id`));
-- create index "wallet_merchant_id_mode_reference" to table: "wallets"
CREATE UNIQUE INDEX `wallet_merchant_id_mode_reference` ON `wallets` (`merchant_id`, `mode`, `reference`);
-- create index "wallet_merchant_id_mode_created_at_id" to table: "wallets"
CREATE INDEX `wallet_merchant_id_mode_created_at_id` ON `wallets` (`merchant_id`, `mode`, `created_at`, `id`);
-- create "webhook_attempts" table
CREATE TABLE `webhook_attempts` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `merchant_id` text NOT NULL, `mode` text NOT NULL, `delivery_id` text NOT NULL, `number` integer NOT NULL, `started_at` datetime NOT NULL, `latency_ms` integer NOT NULL, `status_code` integer NULL, `error` text NULL, `response_body` text NULL, `success` bool NOT NULL);
-- create index "webhookattempt_delivery_id_number" to table: "webhook_attempts"
CREATE INDEX `webhookattempt_delivery_id_number` ON `webhook_attempts` (`delivery_id`, `number`);
-- create index "webhookattempt_merchant_id_mode" to table: "webhook_attempts"
CREATE INDEX `webhookattempt_merchant_id_mode` ON `webhook_attempts` (`merchant_id`, `mode`);
-- create "webhook_deliveries" table
CREATE TABLE `webhook_deliveries` (`id` text NOT NULL, `merchant_id` text NOT NULL, `mode` text NOT NULL, `event_seq` integer NOT NULL, `event_id` text NOT NULL, `event_type` text NOT NULL, `endpoint_id` text NOT NULL, `url` text NOT NULL, `status` text NOT NULL, `attempts` integer NOT NULL DEFAULT (0), `run_attempts` integer NOT NULL DEFAULT (0), `generation` integer NOT NULL DEFAULT (0), `next_attempt_at` datetime NULL, `lease_owner` text NULL, `lease_until` datetime NULL, `last_status_code` integer NULL, `last_error` text NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `completed_at` datetime NULL, PRIMARY KEY (`id`));
-- create index "webhookdelivery_event_id_endpoint_id" to table: "webhook_deliveries"
CREATE UNIQUE INDEX `webhookdelivery_event_id_endpoint_id` ON `webhook_deliveries` (`event_id`, `endpoint_id`);
-- create index "webhookdelivery_status_next_attempt_at" to table: "webhook_deliveries"
CREATE INDEX `webhookdelivery_status_next_attempt_at` ON `webhook_deliveries` (`status`, `next_attempt_at`);
-- create index "webhookdelivery_endpoint_id_status" to table: "webhook_deliveries"
CREATE INDEX `webhookdelivery_endpoint_id_status` ON `webhook_deliveries` (`endpoint_id`, `status`);
-- create index "webhookdelivery_merchant_id_mode" to table: "webhook_deliveries"
CREATE INDEX `webhookdelivery_merchant_id_mode` ON `webhook_deliveries` (`merchant_id`, `mode`);
-- create "webhook_endpoints" table
CREATE TABLE `webhook_endpoints` (`id` text NOT NULL, `merchant_id` text NOT NULL, `mode` text NOT NULL, `url` text NOT NULL, `events` json NULL, `secret` text NOT NULL, `enabled` bool NOT NULL DEFAULT (true), `disabled_reason` text NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `deleted_at` datetime NULL, PRIMARY KEY (`id`));
-- create index "webhookendpoint_merchant_id_mode_created_at_id" to table: "webhook_endpoints"
CREATE INDEX `webhookendpoint_merchant_id_mode_created_at_id` ON `webhook_endpoints` (`merchant_id`, `mode`, `created_at`, `id`);

-- +goose Down
-- reverse: create index "webhookendpoint_merchant_id_mode_created_at_id" to table: "webhook_endpoints"
DROP INDEX `webhookendpoint_merchant_id_mode_created_at_id`;
-- reverse: create "webhook_endpoints" table
DROP TABLE `webhook_endpoints`;
-- reverse: create index "webhookdelivery_merchant_id_mode" to table: "webhook_deliveries"
DROP INDEX `webhookdelivery_merchant_id_mode`;
-- reverse: create index "webhookdelivery_endpoint_id_status" to table: "webhook_deliveries"
DROP INDEX `webhookdelivery_endpoint_id_status`;
-- reverse: create index "webhookdelivery_status_next_attempt_at" to table: "webhook_deliveries"
DROP INDEX `webhookdelivery_status_next_attempt_at`;
-- reverse: create index "webhookdelivery_event_id_endpoint_id" to table: "webhook_deliveries"
DROP INDEX `webhookdelivery_event_id_endpoint_id`;
-- reverse: create "webhook_deliveries" table
DROP TABLE `webhook_deliveries`;
-- reverse: create index "webhookattempt_merchant_id_mode" to table: "webhook_attempts"
DROP INDEX `webhookattempt_merchant_id_mode`;
-- reverse: create index "webhookattempt_delivery_id_number" to table: "webhook_attempts"
DROP INDEX `webhookattempt_delivery_id_number`;
-- reverse: create "webhook_attempts" table
DROP TABLE `webhook_attempts`;
-- reverse: create index "wallet_merchant_id_mode_created_at_id" to table: "wallets"
DROP INDEX `wallet_merchant_id_mode_created_at_id`;
-- reverse: create index "wallet_merchant_id_mode_reference" to table: "wallets"
DROP INDEX `wallet_merchant_id_mode_reference`;
-- reverse: create "wallets" table
DROP TABLE `wallets`;
-- reverse: create index "transaction_type_next_run_at" to table: "transactions"
DROP INDEX `transaction_type_next_run_at`;
-- reverse: create index "transaction_merchant_id_mode_created_at_id" to table: "transactions"
DROP INDEX `transaction_merchant_id_mode_created_at_id`;
-- reverse: create index "transaction_merchant_id_mode_merchant_reference_key" to table: "transactions"
DROP INDEX `transaction_merchant_id_mode_merchant_reference_key`;
-- reverse: create index "transactions_prepay_id_key" to table: "transactions"
DROP INDEX `transactions_prepay_id_key`;
-- reverse: create index "transactions_reference_key" to table: "transactions"
DROP INDEX `transactions_reference_key`;
-- reverse: create "transactions" table
DROP TABLE `transactions`;
-- reverse: create index "quote_merchant_id_mode" to table: "quotes"
DROP INDEX `quote_merchant_id_mode`;
-- reverse: create "quotes" table
DROP TABLE `quotes`;
-- reverse: create "pairs" table
DROP TABLE `pairs`;
-- reverse: create index "merchantpair_merchant_id_pair_id" to table: "merchant_pairs"
DROP INDEX `merchantpair_merchant_id_pair_id`;
-- reverse: create "merchant_pairs" table
DROP TABLE `merchant_pairs`;
-- reverse: create "merchants" table
DROP TABLE `merchants`;
-- reverse: create index "ledgerentry_posting_id_seq" to table: "ledger_entries"
DROP INDEX `ledgerentry_posting_id_seq`;
-- reverse: create index "ledgerentry_account_id" to table: "ledger_entries"
DROP INDEX `ledgerentry_account_id`;
-- reverse: create "ledger_entries" table
DROP TABLE `ledger_entries`;
-- reverse: create index "ledgeraccount_owner_mode_kind" to table: "ledger_accounts"
DROP INDEX `ledgeraccount_owner_mode_kind`;
-- reverse: create "ledger_accounts" table
DROP TABLE `ledger_accounts`;
-- reverse: create index "idempotencyrecord_expires_at" to table: "idempotency_records"
DROP INDEX `idempotencyrecord_expires_at`;
-- reverse: create index "idempotencyrecord_merchant_id_mode_key" to table: "idempotency_records"
DROP INDEX `idempotencyrecord_merchant_id_mode_key`;
-- reverse: create "idempotency_records" table
DROP TABLE `idempotency_records`;
-- reverse: create index "fiataccount_wallet_id" to table: "fiat_accounts"
DROP INDEX `fiataccount_wallet_id`;
-- reverse: create index "fiataccount_merchant_id_mode_reference" to table: "fiat_accounts"
DROP INDEX `fiataccount_merchant_id_mode_reference`;
-- reverse: create index "fiat_accounts_account_number_key" to table: "fiat_accounts"
DROP INDEX `fiat_accounts_account_number_key`;
-- reverse: create "fiat_accounts" table
DROP TABLE `fiat_accounts`;
-- reverse: create index "event_merchant_id_mode_id" to table: "events"
DROP INDEX `event_merchant_id_mode_id`;
-- reverse: create index "event_fanned_out_id" to table: "events"
DROP INDEX `event_fanned_out_id`;
-- reverse: create index "events_event_id_key" to table: "events"
DROP INDEX `events_event_id_key`;
-- reverse: create "events" table
DROP TABLE `events`;
-- reverse: create index "emailnotification_merchant_id_mode" to table: "email_notifications"
DROP INDEX `emailnotification_merchant_id_mode`;
-- reverse: create index "emailnotification_status_next_attempt_at" to table: "email_notifications"
DROP INDEX `emailnotification_status_next_attempt_at`;
-- reverse: create index "email_notifications_event_id_key" to table: "email_notifications"
DROP INDEX `email_notifications_event_id_key`;
-- reverse: create "email_notifications" table
DROP TABLE `email_notifications`;
-- reverse: create index "crypto_pay_enrolments_tenant_unique" to table: "crypto_pay_enrolments"
DROP INDEX `crypto_pay_enrolments_tenant_unique`;
-- reverse: create "crypto_pay_enrolments" table
DROP TABLE `crypto_pay_enrolments`;
-- reverse: create index "balanceslot_account_id" to table: "balance_slots"
DROP INDEX `balanceslot_account_id`;
-- reverse: create "balance_slots" table
DROP TABLE `balance_slots`;
-- reverse: create index "apikey_merchant_id_mode_kind" to table: "api_keys"
DROP INDEX `apikey_merchant_id_mode_kind`;
-- reverse: create index "api_keys_hash_key" to table: "api_keys"
DROP INDEX `api_keys_hash_key`;
-- reverse: create "api_keys" table
DROP TABLE `api_keys`;
