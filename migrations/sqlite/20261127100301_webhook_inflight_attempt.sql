-- +goose Up
-- The attempt a claim leased a delivery for, until its outcome is recorded:
-- a claim that finds it still set records that attempt as interrupted. The
-- release before neither sets nor clears it; a mark it leaves behind names
-- an attempt number already recorded and is ignored.
-- add column "inflight_attempt" to table: "webhook_deliveries"
ALTER TABLE `webhook_deliveries` ADD COLUMN `inflight_attempt` integer NULL;
-- add column "inflight_started_at" to table: "webhook_deliveries"
ALTER TABLE `webhook_deliveries` ADD COLUMN `inflight_started_at` datetime NULL;

-- +goose Down
-- reverse: add column "inflight_started_at" to table: "webhook_deliveries"
ALTER TABLE `webhook_deliveries` DROP COLUMN `inflight_started_at`;
-- reverse: add column "inflight_attempt" to table: "webhook_deliveries"
ALTER TABLE `webhook_deliveries` DROP COLUMN `inflight_attempt`;
