-- +goose Up

-- How many syncs of an inventory source failed in a row (0 after one
-- that applied): the hysteresis of inventory.sync_failed and
-- inventory.sync_recovered, as the git mirror keeps its failed pushes.
ALTER TABLE inventory_sources ADD COLUMN sync_failures BIGINT NOT NULL DEFAULT 0 CHECK (sync_failures >= 0);

-- +goose Down
ALTER TABLE inventory_sources DROP COLUMN sync_failures;
