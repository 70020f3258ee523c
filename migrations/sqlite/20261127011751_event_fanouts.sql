-- +goose Up
-- Fan-out progress leaves the event row for a queue of its own: an event's
-- event_fanouts row is written with it and deleted by the transaction that
-- creates its deliveries, so events are only ever inserted.
-- The fanned_out column stays for one release, never updated: rows are
-- inserted with true, so that a rollback to the release before (after this
-- migration's down part, which marks the events still queued false) fans
-- out exactly the events this release had not. Dropping it here would also
-- copy the whole events table. The next release drops it.
-- create "event_fanouts" table
CREATE TABLE `event_fanouts` (`event_id` integer NOT NULL, PRIMARY KEY (`event_id`));
-- queue every event not yet fanned out, so that an upgrade loses none
INSERT INTO `event_fanouts` (`event_id`) SELECT `id` FROM `events` WHERE NOT `fanned_out`;
-- drop index "event_fanned_out_id" from table: "events"
DROP INDEX `event_fanned_out_id`;

-- +goose Down
-- reverse: drop index "event_fanned_out_id" from table: "events"
CREATE INDEX `event_fanned_out_id` ON `events` (`fanned_out`, `id`);
-- the events still queued are the ones not fanned out
UPDATE `events` SET `fanned_out` = false WHERE `id` IN (SELECT `event_id` FROM `event_fanouts`);
-- reverse: create "event_fanouts" table
DROP TABLE `event_fanouts`;
