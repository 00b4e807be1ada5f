-- +goose Up

-- When an inventory source's last sync that applied ended (NULL: none
-- yet), as devices keep last_good_backup_at: last_sync_at moves on with
-- failed syncs too, so it cannot say how out of date the device list is.
-- A source whose last sync applied takes that sync's time; one failing
-- since before this migration has no such time recorded and stays NULL.
ALTER TABLE inventory_sources ADD COLUMN last_good_sync_at TEXT;
UPDATE inventory_sources SET last_good_sync_at = last_sync_at WHERE last_status = 'ok';

-- +goose Down
ALTER TABLE inventory_sources DROP COLUMN last_good_sync_at;
