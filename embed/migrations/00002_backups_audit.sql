-- +goose Up

-- A configuration text is stored once per distinct content, addressed by
-- the SHA-256 (hex) of the text, zstd-compressed.
CREATE TABLE snapshots (
    id          INTEGER PRIMARY KEY,
    hash        TEXT    NOT NULL UNIQUE,
    size        INTEGER NOT NULL,
    stored_size INTEGER NOT NULL,
    data        BLOB    NOT NULL,
    created_at  TEXT    NOT NULL
);

-- One row per backup attempt. started_at/finished_at are UTC with
-- milliseconds, 'YYYY-MM-DDTHH:MM:SS.sss', so they sort as text.
CREATE TABLE backups (
    id            TEXT    PRIMARY KEY,
    device_id     INTEGER NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
    started_at    TEXT    NOT NULL,
    finished_at   TEXT,
    success       INTEGER NOT NULL DEFAULT 0,
    error_message TEXT,
    snapshot_hash TEXT REFERENCES snapshots(hash),
    trigger       TEXT    NOT NULL DEFAULT 'manual',
    changed       INTEGER NOT NULL DEFAULT 0,
    duration_ms   INTEGER,
    bytes         INTEGER
);
CREATE INDEX backups_device_started ON backups(device_id, started_at DESC);
CREATE INDEX backups_started ON backups(started_at);
CREATE INDEX backups_snapshot ON backups(snapshot_hash);

-- Running totals kept by triggers, so statistics never scan the history.
CREATE TABLE counters (
    name  TEXT    PRIMARY KEY,
    value INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO counters (name, value) VALUES
    ('backups_total', 0), ('backups_succeeded', 0), ('backups_failed', 0),
    ('snapshots', 0), ('snapshot_bytes', 0), ('snapshot_stored_bytes', 0);

-- +goose StatementBegin
CREATE TRIGGER backups_counted_insert AFTER INSERT ON backups BEGIN
    UPDATE counters SET value = value + 1 WHERE name = 'backups_total';
    UPDATE counters SET value = value + 1 WHERE name = 'backups_succeeded' AND NEW.success = 1;
    UPDATE counters SET value = value + 1 WHERE name = 'backups_failed' AND NEW.success = 0 AND NEW.finished_at IS NOT NULL;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER backups_counted_update AFTER UPDATE OF success, finished_at ON backups BEGIN
    UPDATE counters SET value = value - 1 WHERE name = 'backups_succeeded' AND OLD.success = 1;
    UPDATE counters SET value = value - 1 WHERE name = 'backups_failed' AND OLD.success = 0 AND OLD.finished_at IS NOT NULL;
    UPDATE counters SET value = value + 1 WHERE name = 'backups_succeeded' AND NEW.success = 1;
    UPDATE counters SET value = value + 1 WHERE name = 'backups_failed' AND NEW.success = 0 AND NEW.finished_at IS NOT NULL;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER backups_counted_delete AFTER DELETE ON backups BEGIN
    UPDATE counters SET value = value - 1 WHERE name = 'backups_total';
    UPDATE counters SET value = value - 1 WHERE name = 'backups_succeeded' AND OLD.success = 1;
    UPDATE counters SET value = value - 1 WHERE name = 'backups_failed' AND OLD.success = 0 AND OLD.finished_at IS NOT NULL;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER snapshots_counted_insert AFTER INSERT ON snapshots BEGIN
    UPDATE counters SET value = value + 1 WHERE name = 'snapshots';
    UPDATE counters SET value = value + NEW.size WHERE name = 'snapshot_bytes';
    UPDATE counters SET value = value + NEW.stored_size WHERE name = 'snapshot_stored_bytes';
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER snapshots_counted_delete AFTER DELETE ON snapshots BEGIN
    UPDATE counters SET value = value - 1 WHERE name = 'snapshots';
    UPDATE counters SET value = value - OLD.size WHERE name = 'snapshot_bytes';
    UPDATE counters SET value = value - OLD.stored_size WHERE name = 'snapshot_stored_bytes';
END;
-- +goose StatementEnd

CREATE INDEX devices_status ON devices(status);

-- Every change through any interface: who (user, key or session), what,
-- when, from where. Never secret values.
CREATE TABLE audit_log (
    id          INTEGER PRIMARY KEY,
    at          TEXT    NOT NULL,
    user_id     INTEGER,
    username    TEXT    NOT NULL,
    key_id      INTEGER,
    session_id  TEXT,
    interface   TEXT    NOT NULL,
    action      TEXT    NOT NULL,
    target_type TEXT    NOT NULL,
    target_id   TEXT,
    request_id  TEXT,
    remote_addr TEXT,
    details     TEXT
);
CREATE INDEX audit_log_at ON audit_log(at);

-- +goose Down
DROP TABLE audit_log;
DROP INDEX devices_status;
DROP TABLE counters;
DROP TABLE backups;
DROP TABLE snapshots;
