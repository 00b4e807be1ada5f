-- +goose Up

-- The metrics endpoint reads the fleet's health at every scrape, whichever
-- process did the backups. What it needs is kept here so that a scrape
-- costs a few index lookups however long the history is.

-- The start of each device's newest successful backup: "how stale is the
-- fleet" is then the smallest of these among enabled devices, read off an
-- index instead of one history lookup per device.
ALTER TABLE devices ADD COLUMN last_good_backup_at TEXT;
UPDATE devices SET last_good_backup_at =
    (SELECT MAX(started_at) FROM backups WHERE device_id = devices.id AND success = 1);
CREATE INDEX devices_enabled_last_good ON devices(last_good_backup_at, created_at) WHERE enabled = 1;

-- +goose StatementBegin
CREATE TRIGGER backups_last_good_insert AFTER INSERT ON backups WHEN NEW.success = 1 BEGIN
    UPDATE devices SET last_good_backup_at = NEW.started_at
     WHERE id = NEW.device_id AND (last_good_backup_at IS NULL OR last_good_backup_at < NEW.started_at);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER backups_last_good_update AFTER UPDATE OF success ON backups WHEN NEW.success = 1 BEGIN
    UPDATE devices SET last_good_backup_at = NEW.started_at
     WHERE id = NEW.device_id AND (last_good_backup_at IS NULL OR last_good_backup_at < NEW.started_at);
END;
-- +goose StatementEnd

-- Retention keeps each device's newest good backup, so this recomputes
-- only when that one goes (an operator's prune, a device deleted).
-- +goose StatementBegin
CREATE TRIGGER backups_last_good_delete AFTER DELETE ON backups WHEN OLD.success = 1 BEGIN
    UPDATE devices SET last_good_backup_at =
        (SELECT MAX(started_at) FROM backups WHERE device_id = OLD.device_id AND success = 1)
     WHERE id = OLD.device_id AND last_good_backup_at = OLD.started_at;
END;
-- +goose StatementEnd

-- Counters for Prometheus: finished attempts by result and configuration
-- changes found, ever recorded. Unlike backups_succeeded and backups_failed
-- (what the history holds now) they never go down when retention deletes
-- old records, as a Prometheus counter must not. They start from what the
-- history holds today.
INSERT INTO counters (name, value)
    SELECT 'backups_succeeded_ever', value FROM counters WHERE name = 'backups_succeeded';
INSERT INTO counters (name, value)
    SELECT 'backups_failed_ever', value FROM counters WHERE name = 'backups_failed';
INSERT INTO counters (name, value)
    SELECT 'backups_changed_ever', COUNT(*) FROM backups WHERE changed = 1;

-- +goose StatementBegin
CREATE TRIGGER backups_ever_insert AFTER INSERT ON backups BEGIN
    UPDATE counters SET value = value + 1
     WHERE NEW.finished_at IS NOT NULL
       AND name = CASE WHEN NEW.success = 1 THEN 'backups_succeeded_ever' ELSE 'backups_failed_ever' END;
    UPDATE counters SET value = value + 1 WHERE name = 'backups_changed_ever' AND NEW.changed = 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER backups_ever_finished AFTER UPDATE OF finished_at ON backups
    WHEN OLD.finished_at IS NULL AND NEW.finished_at IS NOT NULL BEGIN
    UPDATE counters SET value = value + 1
     WHERE name = CASE WHEN NEW.success = 1 THEN 'backups_succeeded_ever' ELSE 'backups_failed_ever' END;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER backups_ever_changed AFTER UPDATE OF changed ON backups
    WHEN OLD.changed = 0 AND NEW.changed = 1 BEGIN
    UPDATE counters SET value = value + 1 WHERE name = 'backups_changed_ever';
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER backups_ever_changed;
DROP TRIGGER backups_ever_finished;
DROP TRIGGER backups_ever_insert;
DELETE FROM counters WHERE name IN ('backups_succeeded_ever', 'backups_failed_ever', 'backups_changed_ever');
DROP TRIGGER backups_last_good_delete;
DROP TRIGGER backups_last_good_update;
DROP TRIGGER backups_last_good_insert;
DROP INDEX devices_enabled_last_good;
ALTER TABLE devices DROP COLUMN last_good_backup_at;
