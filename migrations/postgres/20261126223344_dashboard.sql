-- +goose Up
-- modify "api_keys" table
ALTER TABLE "api_keys" ADD COLUMN "expires_at" timestamptz NULL, ADD COLUMN "last_used_at" timestamptz NULL;
-- create index "event_transaction_ref" to table: "events"
CREATE INDEX "event_transaction_ref" ON "events" ("transaction_ref");
-- drop index "ledgerentry_account_id" from table: "ledger_entries"
DROP INDEX "ledgerentry_account_id";
-- create index "ledgerentry_account_id_id" to table: "ledger_entries"
CREATE INDEX "ledgerentry_account_id_id" ON "ledger_entries" ("account_id", "id");
-- drop index "webhookdelivery_merchant_id_mode" from table: "webhook_deliveries"
DROP INDEX "webhookdelivery_merchant_id_mode";
-- create index "webhookdelivery_merchant_id_mode_created_at_id" to table: "webhook_deliveries"
CREATE INDEX "webhookdelivery_merchant_id_mode_created_at_id" ON "webhook_deliveries" ("merchant_id", "mode", "created_at", "id");
-- create "export_tokens" table
CREATE TABLE "export_tokens" ("id" character varying NOT NULL, "merchant_id" character varying NOT NULL, "mode" character varying NOT NULL, "filter" bytea NOT NULL, "created_at" timestamptz NOT NULL, "expires_at" timestamptz NOT NULL, "used_at" timestamptz NULL, PRIMARY KEY ("id"));
-- create index "exporttoken_expires_at" to table: "export_tokens"
CREATE INDEX "exporttoken_expires_at" ON "export_tokens" ("expires_at");

-- +goose Down
-- reverse: create index "exporttoken_expires_at" to table: "export_tokens"
DROP INDEX "exporttoken_expires_at";
-- reverse: create "export_tokens" table
DROP TABLE "export_tokens";
-- reverse: create index "webhookdelivery_merchant_id_mode_created_at_id" to table: "webhook_deliveries"
DROP INDEX "webhookdelivery_merchant_id_mode_created_at_id";
-- reverse: drop index "webhookdelivery_merchant_id_mode" from table: "webhook_deliveries"
CREATE INDEX "webhookdelivery_merchant_id_mode" ON "webhook_deliveries" ("merchant_id", "mode");
-- reverse: create index "ledgerentry_account_id_id" to table: "ledger_entries"
DROP INDEX "ledgerentry_account_id_id";
-- reverse: drop index "ledgerentry_account_id" from table: "ledger_entries"
CREATE INDEX "ledgerentry_account_id" ON "ledger_entries" ("account_id");
-- reverse: create index "event_transaction_ref" to table: "events"
DROP INDEX "event_transaction_ref";
-- reverse: modify "api_keys" table
ALTER TABLE "api_keys" DROP COLUMN "last_used_at", DROP COLUMN "expires_at";
