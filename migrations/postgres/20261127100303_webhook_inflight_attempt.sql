-- +goose Up
-- The attempt a claim leased a delivery for, until its outcome is recorded:
-- a claim that finds it still set records that attempt as interrupted. The
-- release before neither sets nor clears it; a mark it leaves behind names
-- an attempt number already recorded and is ignored.
-- modify "webhook_deliveries" table
ALTER TABLE "webhook_deliveries" ADD COLUMN "inflight_attempt" bigint NULL, ADD COLUMN "inflight_started_at" timestamptz NULL;

-- +goose Down
-- reverse: modify "webhook_deliveries" table
ALTER TABLE "webhook_deliveries" DROP COLUMN "inflight_started_at", DROP COLUMN "inflight_attempt";
