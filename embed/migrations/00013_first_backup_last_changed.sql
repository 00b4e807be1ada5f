-- +goose Up

-- A device's first backup is not a change: there was nothing to compare it
-- with. Until now it was recorded as changed, so it counted in "Changed in
-- 24 h", the config-changes counter and the history's "Changed" badge.
-- first_backup says so explicitly, and changed keeps its one meaning: this
-- version differs from the one before it, noise ignored.
ALTER TABLE backups ADD COLUMN first_backup INTEGER NOT NULL DEFAULT 0;

-- Existing histories: each device's oldest version was recorded as changed
-- because nothing came before it. Where retention has already removed a
-- device's first version, its oldest kept version has none before it
-- either; it is marked the same way when it was marked changed. The
-- config-changes counter is left as it is (a Prometheus counter never goes
-- down); from now on it counts real changes only.
UPDATE backups SET first_backup = 1, changed = 0
 WHERE changed = 1 AND id IN (
    SELECT (SELECT b.id FROM backups b
             WHERE b.device_id = d.id AND b.success = 1 AND b.snapshot_hash IS NOT NULL
             ORDER BY b.started_at, b.id LIMIT 1)
      FROM devices d);

-- When the device's configuration last changed: the start, UTC to the
-- second like the other device times, of its newest backup that found a
-- change. NULL while none has (a device with only its first backup). It is
-- a fact about the device, so it stays when retention later removes that
-- backup from the history.
ALTER TABLE devices ADD COLUMN last_changed_at TEXT;
UPDATE devices SET last_changed_at =
    (SELECT substr(MAX(started_at), 1, 19) FROM backups WHERE device_id = devices.id AND changed = 1);
-- The devices list filters by it ("changed in the last N days") and sorts
-- by it both ways, devices that never changed last: each order read off
-- its own index rather than sorting the whole inventory for every page.
CREATE INDEX devices_last_changed ON devices(last_changed_at);
CREATE INDEX devices_last_changed_newest ON devices(last_changed_at IS NULL, last_changed_at DESC, id);
CREATE INDEX devices_last_changed_oldest ON devices(last_changed_at IS NULL, last_changed_at, id);

-- With one more column on devices, SQLite's planner (no statistics) took
-- devices_enabled_last_good, every enabled device, to count the enabled
-- devices whose last backup failed. Narrowed to exactly those devices,
-- devices_last_failed is the plain choice again for the dashboard and the
-- metrics scrape.
DROP INDEX devices_last_failed;
CREATE INDEX devices_last_failed ON devices(last_backup_at) WHERE last_backup_success = 0 AND enabled = 1;

-- +goose StatementBegin
CREATE TRIGGER backups_last_changed_insert AFTER INSERT ON backups WHEN NEW.changed = 1 BEGIN
    UPDATE devices SET last_changed_at = substr(NEW.started_at, 1, 19)
     WHERE id = NEW.device_id AND (last_changed_at IS NULL OR last_changed_at < substr(NEW.started_at, 1, 19));
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER backups_last_changed_update AFTER UPDATE OF changed ON backups
    WHEN OLD.changed = 0 AND NEW.changed = 1 BEGIN
    UPDATE devices SET last_changed_at = substr(NEW.started_at, 1, 19)
     WHERE id = NEW.device_id AND (last_changed_at IS NULL OR last_changed_at < substr(NEW.started_at, 1, 19));
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER backups_last_changed_update;
DROP TRIGGER backups_last_changed_insert;
DROP INDEX devices_last_failed;
CREATE INDEX devices_last_failed ON devices(last_backup_at) WHERE last_backup_success = 0;
DROP INDEX devices_last_changed_oldest;
DROP INDEX devices_last_changed_newest;
DROP INDEX devices_last_changed;
ALTER TABLE devices DROP COLUMN last_changed_at;
UPDATE backups SET changed = 1 WHERE first_backup = 1;
ALTER TABLE backups DROP COLUMN first_backup;
