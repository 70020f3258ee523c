-- +goose Up
-- Fan-out progress leaves the event row for a queue of its own: an event's
-- event_fanouts row is written with it and deleted by the transaction that
-- creates its deliveries, so events are only ever inserted (taking one no
-- longer rewrites its payload and five index entries).
-- The fanned_out column stays for one release, never updated: rows are
-- inserted with true, so that a rollback to the release before (after this
-- migration's down part, which marks the events still queued false) fans
-- out exactly the events this release had not. The next release drops it.
-- create "event_fanouts" table
CREATE TABLE "event_fanouts" ("event_id" bigint NOT NULL, PRIMARY KEY ("event_id"));
-- Written by hand (ent cannot describe a trigger, so the schema diff never
-- sees it): during a rolling upgrade, instances of the release before still
-- write events with fanned_out false and no queue row; this queues them, so
-- that they are fanned out after those instances are gone. This release
-- writes fanned_out true, so the trigger never fires for its own events.
-- The release before's dispatcher may fan such an event out too (it reads
-- fanned_out): harmless, since both releases insert deliveries with
-- ON CONFLICT DO NOTHING on the unique (event_id, endpoint_id) of
-- webhook_deliveries and e-mails on the unique event_id of
-- email_notifications. Created before the backfill below: its lock on events
-- holds the release before's inserts until this migration commits, so each
-- of their events is either backfilled or queued by the trigger. The release
-- that drops fanned_out drops the trigger and its function first.
-- +goose StatementBegin
CREATE FUNCTION "event_fanouts_queue_legacy"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "event_fanouts" ("event_id") VALUES (NEW."id") ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER "events_queue_legacy_fanout" AFTER INSERT ON "events"
  FOR EACH ROW WHEN (NOT NEW."fanned_out") EXECUTE FUNCTION "event_fanouts_queue_legacy"();
-- queue every event not yet fanned out, so that an upgrade loses none
INSERT INTO "event_fanouts" ("event_id") SELECT "id" FROM "events" WHERE NOT "fanned_out";
-- drop index "event_fanned_out_id" from table: "events"
DROP INDEX "event_fanned_out_id";

-- +goose Down
DROP TRIGGER "events_queue_legacy_fanout" ON "events";
DROP FUNCTION "event_fanouts_queue_legacy"();
-- reverse: drop index "event_fanned_out_id" from table: "events"
CREATE INDEX "event_fanned_out_id" ON "events" ("fanned_out", "id");
-- the events still queued are the ones not fanned out
UPDATE "events" SET "fanned_out" = false WHERE "id" IN (SELECT "event_id" FROM "event_fanouts");
-- reverse: create "event_fanouts" table
DROP TABLE "event_fanouts";
