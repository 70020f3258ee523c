-- +goose Up
-- add column "trace_parent" to table: "email_notifications"
ALTER TABLE `email_notifications` ADD COLUMN `trace_parent` text NULL;
-- add column "trace_parent" to table: "events"
ALTER TABLE `events` ADD COLUMN `trace_parent` text NULL;
-- add column "trace_parent" to table: "transactions"
ALTER TABLE `transactions` ADD COLUMN `trace_parent` text NULL;

-- +goose Down
-- reverse: add column "trace_parent" to table: "transactions"
ALTER TABLE `transactions` DROP COLUMN `trace_parent`;
-- reverse: add column "trace_parent" to table: "events"
ALTER TABLE `events` DROP COLUMN `trace_parent`;
-- reverse: add column "trace_parent" to table: "email_notifications"
ALTER TABLE `email_notifications` DROP COLUMN `trace_parent`;
