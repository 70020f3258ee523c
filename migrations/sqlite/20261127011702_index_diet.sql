-- +goose Up
-- Written by hand, as the PostgreSQL migration of the same name: the
-- generator rebuilt the whole transactions table (copying every row) to
-- change three of its unique indexes, whose columns and table are
-- otherwise unchanged. The unique indexes on prepay_id, provider_reference
-- and the merchant reference key become partial (WHERE ... IS NOT NULL):
-- NULLs never conflicted, so what they allow is the same, and rows without
-- the value take no entry.
DROP INDEX `transactions_prepay_id_key`;
DROP INDEX `transactions_provider_reference_key`;
DROP INDEX `transaction_merchant_id_mode_merchant_reference_key`;
CREATE UNIQUE INDEX `transaction_merchant_id_mode_merchant_reference_key` ON `transactions` (`merchant_id`, `mode`, `merchant_reference_key`) WHERE merchant_reference_key IS NOT NULL;
CREATE UNIQUE INDEX `transaction_prepay_id` ON `transactions` (`prepay_id`) WHERE prepay_id IS NOT NULL;
CREATE UNIQUE INDEX `transaction_provider_reference` ON `transactions` (`provider_reference`) WHERE provider_reference IS NOT NULL;

-- +goose Down
DROP INDEX `transaction_provider_reference`;
DROP INDEX `transaction_prepay_id`;
DROP INDEX `transaction_merchant_id_mode_merchant_reference_key`;
CREATE UNIQUE INDEX `transaction_merchant_id_mode_merchant_reference_key` ON `transactions` (`merchant_id`, `mode`, `merchant_reference_key`);
CREATE UNIQUE INDEX `transactions_provider_reference_key` ON `transactions` (`provider_reference`);
CREATE UNIQUE INDEX `transactions_prepay_id_key` ON `transactions` (`prepay_id`);
