-- +goose Up
-- modify "email_notifications" table
ALTER TABLE "email_notifications" ADD COLUMN "trace_parent" character varying NULL;
-- modify "events" table
ALTER TABLE "events" ADD COLUMN "trace_parent" character varying NULL;
-- modify "transactions" table
ALTER TABLE "transactions" ADD COLUMN "trace_parent" character varying NULL;

-- +goose Down
-- reverse: modify "transactions" table
ALTER TABLE "transactions" DROP COLUMN "trace_parent";
-- reverse: modify "events" table
ALTER TABLE "events" DROP COLUMN "trace_parent";
-- reverse: modify "email_notifications" table
ALTER TABLE "email_notifications" DROP COLUMN "trace_parent";
