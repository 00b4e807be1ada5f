-- +goose NO TRANSACTION
-- +goose Up

-- Ids are never handed out twice. External systems hold the ids of
-- devices, groups, credentials, templates, schedules, jobs, users, roles
-- and API keys; a plain INTEGER PRIMARY KEY gives a deleted row's id to the
-- next row when that row had the highest id. AUTOINCREMENT never does, and
-- SQLite can only add it by rebuilding the table (create the new table,
-- copy, drop the old one, rename), with every index and trigger recreated.
-- (audit_log is only ever appended to and snapshots are addressed by hash,
-- so their ids cannot come back and they are left as they are.)
--
-- Foreign keys are off for the rebuild: with them on, dropping a parent
-- table deletes its rows one by one first, cascading to backups, jobs,
-- sessions and the rest. The pragma does nothing inside a transaction,
-- hence NO TRANSACTION and the explicit BEGIN ... COMMIT below.
PRAGMA foreign_keys = OFF;

BEGIN IMMEDIATE;

-- These triggers on backups name devices; renaming the new devices table
-- into place checks every trigger, and they would name a missing table
-- while it is rebuilt. They are recreated below exactly as 00011 made them.
DROP TRIGGER backups_last_good_insert;
DROP TRIGGER backups_last_good_update;
DROP TRIGGER backups_last_good_delete;

CREATE TABLE new_roles (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    name            TEXT    NOT NULL UNIQUE COLLATE NOCASE,
    description     TEXT    NOT NULL DEFAULT '',
    builtin         INTEGER NOT NULL DEFAULT 0,
    -- all_permissions roles hold every permission, including ones added by
    -- later releases.
    all_permissions INTEGER NOT NULL DEFAULT 0,
    created_at      TEXT    NOT NULL
);
INSERT INTO new_roles (id, name, description, builtin, all_permissions, created_at)
    SELECT id, name, description, builtin, all_permissions, created_at FROM roles;
DROP TABLE roles;
ALTER TABLE new_roles RENAME TO roles;

CREATE TABLE new_device_groups (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    name       TEXT    NOT NULL UNIQUE COLLATE NOCASE,
    parent_id  INTEGER REFERENCES device_groups(id),
    path       TEXT    NOT NULL,
    depth      INTEGER NOT NULL,
    sort_order INTEGER NOT NULL,
    created_at TEXT    NOT NULL
);
INSERT INTO new_device_groups (id, name, parent_id, path, depth, sort_order, created_at)
    SELECT id, name, parent_id, path, depth, sort_order, created_at FROM device_groups;
DROP TABLE device_groups;
ALTER TABLE new_device_groups RENAME TO device_groups;
CREATE INDEX device_groups_parent ON device_groups(parent_id);
CREATE INDEX device_groups_path ON device_groups(path);

CREATE TABLE new_users (
    id                   INTEGER PRIMARY KEY AUTOINCREMENT,
    username             TEXT    NOT NULL UNIQUE COLLATE NOCASE,
    password_hash        TEXT    NOT NULL,
    active               INTEGER NOT NULL DEFAULT 1,
    -- all_groups users see every device group; others see user_groups and
    -- all their descendants.
    all_groups           INTEGER NOT NULL DEFAULT 0,
    must_change_password INTEGER NOT NULL DEFAULT 0,
    created_at           TEXT    NOT NULL,
    updated_at           TEXT    NOT NULL
);
INSERT INTO new_users (id, username, password_hash, active, all_groups, must_change_password, created_at, updated_at)
    SELECT id, username, password_hash, active, all_groups, must_change_password, created_at, updated_at FROM users;
DROP TABLE users;
ALTER TABLE new_users RENAME TO users;

CREATE TABLE new_api_keys (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id      INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name         TEXT    NOT NULL,
    -- prefix is the visible, non-secret head of the key used to find its row.
    prefix       TEXT    NOT NULL UNIQUE,
    -- hash is SHA-256 of the whole key; the key itself is never stored.
    hash         BLOB    NOT NULL,
    -- narrowed keys hold only api_key_permissions (intersected with the
    -- owner's); others hold whatever their owner holds.
    narrowed     INTEGER NOT NULL DEFAULT 0,
    expires_at   TEXT,
    revoked_at   TEXT,
    last_used_at TEXT,
    created_at   TEXT    NOT NULL
);
INSERT INTO new_api_keys (id, user_id, name, prefix, hash, narrowed, expires_at, revoked_at, last_used_at, created_at)
    SELECT id, user_id, name, prefix, hash, narrowed, expires_at, revoked_at, last_used_at, created_at FROM api_keys;
DROP TABLE api_keys;
ALTER TABLE new_api_keys RENAME TO api_keys;
CREATE INDEX api_keys_user ON api_keys(user_id);

CREATE TABLE new_credentials (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    name            TEXT    NOT NULL UNIQUE COLLATE NOCASE,
    username        TEXT    NOT NULL,
    -- sealed secrets (see app/secret); NULL when not set.
    password        BLOB,
    enable_password BLOB,
    private_key     BLOB,
    remarks         TEXT,
    created_at      TEXT    NOT NULL,
    updated_at      TEXT    NOT NULL
);
INSERT INTO new_credentials (id, name, username, password, enable_password, private_key, remarks, created_at, updated_at)
    SELECT id, name, username, password, enable_password, private_key, remarks, created_at, updated_at FROM credentials;
DROP TABLE credentials;
ALTER TABLE new_credentials RENAME TO credentials;

CREATE TABLE new_templates (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    name       TEXT    NOT NULL,
    platform   TEXT    NOT NULL,
    commands   TEXT    NOT NULL,
    created_at TEXT    NOT NULL,
    updated_at TEXT    NOT NULL
);
INSERT INTO new_templates (id, name, platform, commands, created_at, updated_at)
    SELECT id, name, platform, commands, created_at, updated_at FROM templates;
DROP TABLE templates;
ALTER TABLE new_templates RENAME TO templates;

-- The search index (devices_search) holds device ids as rowids; they do
-- not change, so only its triggers, dropped with the old table, return.
CREATE TABLE new_devices (
    id                  INTEGER PRIMARY KEY AUTOINCREMENT,
    name                TEXT    NOT NULL UNIQUE COLLATE NOCASE,
    host                TEXT    NOT NULL,
    port                INTEGER NOT NULL,
    platform            TEXT    NOT NULL,
    login_method        TEXT    NOT NULL CHECK (login_method IN ('ssh', 'telnet')),
    group_id            INTEGER REFERENCES device_groups(id),
    credential_id       INTEGER REFERENCES credentials(id),
    template_id         INTEGER REFERENCES templates(id) ON DELETE SET NULL,
    encoding            TEXT    NOT NULL DEFAULT 'utf-8',
    enabled             INTEGER NOT NULL DEFAULT 1,
    remarks             TEXT,
    status              TEXT    NOT NULL DEFAULT 'unknown'
                        CHECK (status IN ('unknown', 'reachable', 'unreachable')),
    last_checked_at     TEXT,
    last_backup_at      TEXT,
    last_backup_success INTEGER,
    host_key            BLOB,
    created_at          TEXT    NOT NULL,
    updated_at          TEXT    NOT NULL,
    pending_host_key    BLOB,
    last_good_backup_at TEXT
);
INSERT INTO new_devices (id, name, host, port, platform, login_method, group_id, credential_id, template_id,
        encoding, enabled, remarks, status, last_checked_at, last_backup_at, last_backup_success, host_key,
        created_at, updated_at, pending_host_key, last_good_backup_at)
    SELECT id, name, host, port, platform, login_method, group_id, credential_id, template_id,
        encoding, enabled, remarks, status, last_checked_at, last_backup_at, last_backup_success, host_key,
        created_at, updated_at, pending_host_key, last_good_backup_at FROM devices;
DROP TABLE devices;
ALTER TABLE new_devices RENAME TO devices;
CREATE INDEX devices_group ON devices(group_id);
CREATE INDEX devices_credential ON devices(credential_id);
CREATE INDEX devices_template ON devices(template_id);
CREATE INDEX devices_status ON devices(status);
CREATE INDEX devices_status_enabled ON devices(status, enabled);
CREATE INDEX devices_last_failed ON devices(last_backup_at) WHERE last_backup_success = 0;
CREATE INDEX devices_enabled_last_good ON devices(last_good_backup_at, created_at) WHERE enabled = 1;

-- +goose StatementBegin
CREATE TRIGGER devices_search_insert AFTER INSERT ON devices BEGIN
    INSERT INTO devices_search(rowid, name, host) VALUES (NEW.id, NEW.name, NEW.host);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER devices_search_delete AFTER DELETE ON devices BEGIN
    INSERT INTO devices_search(devices_search, rowid, name, host) VALUES ('delete', OLD.id, OLD.name, OLD.host);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER devices_search_update AFTER UPDATE OF name, host ON devices BEGIN
    INSERT INTO devices_search(devices_search, rowid, name, host) VALUES ('delete', OLD.id, OLD.name, OLD.host);
    INSERT INTO devices_search(rowid, name, host) VALUES (NEW.id, NEW.name, NEW.host);
END;
-- +goose StatementEnd

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

-- +goose StatementBegin
CREATE TRIGGER backups_last_good_delete AFTER DELETE ON backups WHEN OLD.success = 1 BEGIN
    UPDATE devices SET last_good_backup_at =
        (SELECT MAX(started_at) FROM backups WHERE device_id = OLD.device_id AND success = 1)
     WHERE id = OLD.device_id AND last_good_backup_at = OLD.started_at;
END;
-- +goose StatementEnd

CREATE TABLE new_jobs (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    device_id        INTEGER NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
    trigger          TEXT    NOT NULL,
    state            TEXT    NOT NULL DEFAULT 'queued'
                     CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
    attempt          INTEGER NOT NULL DEFAULT 0,
    not_before       TEXT    NOT NULL,
    created_at       TEXT    NOT NULL,
    started_at       TEXT,
    finished_at      TEXT,
    -- The worker process running it, while running.
    owner            TEXT,
    -- The backups row of the latest attempt.
    backup_id        TEXT,
    error            TEXT,
    cancel_requested INTEGER NOT NULL DEFAULT 0
);
INSERT INTO new_jobs (id, device_id, trigger, state, attempt, not_before, created_at, started_at, finished_at,
        owner, backup_id, error, cancel_requested)
    SELECT id, device_id, trigger, state, attempt, not_before, created_at, started_at, finished_at,
        owner, backup_id, error, cancel_requested FROM jobs;
DROP TABLE jobs;
ALTER TABLE new_jobs RENAME TO jobs;
CREATE UNIQUE INDEX jobs_active_device ON jobs(device_id) WHERE state IN ('queued', 'running');
CREATE INDEX jobs_ready ON jobs(not_before, id) WHERE state = 'queued';
CREATE INDEX jobs_running_owner ON jobs(owner) WHERE state = 'running';
CREATE INDEX jobs_created ON jobs(created_at);
CREATE INDEX jobs_finished ON jobs(finished_at) WHERE state IN ('succeeded', 'failed', 'cancelled');
CREATE INDEX jobs_device ON jobs(device_id, id);

CREATE TABLE new_schedules (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    name           TEXT    NOT NULL UNIQUE COLLATE NOCASE,
    cron           TEXT    NOT NULL,
    timezone       TEXT    NOT NULL DEFAULT 'UTC',
    target         TEXT    NOT NULL DEFAULT 'all' CHECK (target IN ('all', 'groups', 'devices')),
    target_ids     TEXT    NOT NULL DEFAULT '[]',
    spread_seconds INTEGER NOT NULL DEFAULT 0 CHECK (spread_seconds >= 0),
    enabled        INTEGER NOT NULL DEFAULT 1,
    last_run_at    TEXT,
    next_run_at    TEXT,
    created_at     TEXT    NOT NULL,
    updated_at     TEXT    NOT NULL
);
INSERT INTO new_schedules (id, name, cron, timezone, target, target_ids, spread_seconds, enabled,
        last_run_at, next_run_at, created_at, updated_at)
    SELECT id, name, cron, timezone, target, target_ids, spread_seconds, enabled,
        last_run_at, next_run_at, created_at, updated_at FROM schedules;
DROP TABLE schedules;
ALTER TABLE new_schedules RENAME TO schedules;

-- Each table's sequence starts at its highest id, or higher when the audit
-- log shows a larger id was handed out and deleted before this upgrade:
-- someone outside may still hold that one too.
DELETE FROM sqlite_sequence
 WHERE name IN ('roles', 'device_groups', 'users', 'api_keys', 'credentials', 'templates', 'devices', 'jobs', 'schedules');
INSERT INTO sqlite_sequence (name, seq)
SELECT t.name, MAX(COALESCE(t.max_id, 0), COALESCE(
        (SELECT MAX(CAST(a.target_id AS INTEGER)) FROM audit_log a
          WHERE a.target_type = t.audit_type
            AND a.target_id GLOB '[1-9]*' AND a.target_id NOT GLOB '*[^0-9]*' AND length(a.target_id) <= 15), 0))
  FROM (
    SELECT 'roles' AS name, 'role' AS audit_type, (SELECT MAX(id) FROM roles) AS max_id
    UNION ALL SELECT 'device_groups', 'group', (SELECT MAX(id) FROM device_groups)
    UNION ALL SELECT 'users', 'user', (SELECT MAX(id) FROM users)
    UNION ALL SELECT 'api_keys', 'api_key', (SELECT MAX(id) FROM api_keys)
    UNION ALL SELECT 'credentials', 'credential', (SELECT MAX(id) FROM credentials)
    UNION ALL SELECT 'templates', 'template', (SELECT MAX(id) FROM templates)
    UNION ALL SELECT 'devices', 'device', (SELECT MAX(id) FROM devices)
    UNION ALL SELECT 'jobs', 'job', (SELECT MAX(id) FROM jobs)
    UNION ALL SELECT 'schedules', 'schedule', (SELECT MAX(id) FROM schedules)
  ) AS t;

COMMIT;

PRAGMA foreign_keys = ON;

-- +goose Down
-- The same rebuild back to plain INTEGER PRIMARY KEY; the sequences go.
PRAGMA foreign_keys = OFF;

BEGIN IMMEDIATE;

DROP TRIGGER backups_last_good_insert;
DROP TRIGGER backups_last_good_update;
DROP TRIGGER backups_last_good_delete;

CREATE TABLE new_roles (
    id              INTEGER PRIMARY KEY,
    name            TEXT    NOT NULL UNIQUE COLLATE NOCASE,
    description     TEXT    NOT NULL DEFAULT '',
    builtin         INTEGER NOT NULL DEFAULT 0,
    -- all_permissions roles hold every permission, including ones added by
    -- later releases.
    all_permissions INTEGER NOT NULL DEFAULT 0,
    created_at      TEXT    NOT NULL
);
INSERT INTO new_roles (id, name, description, builtin, all_permissions, created_at)
    SELECT id, name, description, builtin, all_permissions, created_at FROM roles;
DROP TABLE roles;
ALTER TABLE new_roles RENAME TO roles;

CREATE TABLE new_device_groups (
    id         INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL UNIQUE COLLATE NOCASE,
    parent_id  INTEGER REFERENCES device_groups(id),
    path       TEXT    NOT NULL,
    depth      INTEGER NOT NULL,
    sort_order INTEGER NOT NULL,
    created_at TEXT    NOT NULL
);
INSERT INTO new_device_groups (id, name, parent_id, path, depth, sort_order, created_at)
    SELECT id, name, parent_id, path, depth, sort_order, created_at FROM device_groups;
DROP TABLE device_groups;
ALTER TABLE new_device_groups RENAME TO device_groups;
CREATE INDEX device_groups_parent ON device_groups(parent_id);
CREATE INDEX device_groups_path ON device_groups(path);

CREATE TABLE new_users (
    id                   INTEGER PRIMARY KEY,
    username             TEXT    NOT NULL UNIQUE COLLATE NOCASE,
    password_hash        TEXT    NOT NULL,
    active               INTEGER NOT NULL DEFAULT 1,
    -- all_groups users see every device group; others see user_groups and
    -- all their descendants.
    all_groups           INTEGER NOT NULL DEFAULT 0,
    must_change_password INTEGER NOT NULL DEFAULT 0,
    created_at           TEXT    NOT NULL,
    updated_at           TEXT    NOT NULL
);
INSERT INTO new_users (id, username, password_hash, active, all_groups, must_change_password, created_at, updated_at)
    SELECT id, username, password_hash, active, all_groups, must_change_password, created_at, updated_at FROM users;
DROP TABLE users;
ALTER TABLE new_users RENAME TO users;

CREATE TABLE new_api_keys (
    id           INTEGER PRIMARY KEY,
    user_id      INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name         TEXT    NOT NULL,
    -- prefix is the visible, non-secret head of the key used to find its row.
    prefix       TEXT    NOT NULL UNIQUE,
    -- hash is SHA-256 of the whole key; the key itself is never stored.
    hash         BLOB    NOT NULL,
    -- narrowed keys hold only api_key_permissions (intersected with the
    -- owner's); others hold whatever their owner holds.
    narrowed     INTEGER NOT NULL DEFAULT 0,
    expires_at   TEXT,
    revoked_at   TEXT,
    last_used_at TEXT,
    created_at   TEXT    NOT NULL
);
INSERT INTO new_api_keys (id, user_id, name, prefix, hash, narrowed, expires_at, revoked_at, last_used_at, created_at)
    SELECT id, user_id, name, prefix, hash, narrowed, expires_at, revoked_at, last_used_at, created_at FROM api_keys;
DROP TABLE api_keys;
ALTER TABLE new_api_keys RENAME TO api_keys;
CREATE INDEX api_keys_user ON api_keys(user_id);

CREATE TABLE new_credentials (
    id              INTEGER PRIMARY KEY,
    name            TEXT    NOT NULL UNIQUE COLLATE NOCASE,
    username        TEXT    NOT NULL,
    -- sealed secrets (see app/secret); NULL when not set.
    password        BLOB,
    enable_password BLOB,
    private_key     BLOB,
    remarks         TEXT,
    created_at      TEXT    NOT NULL,
    updated_at      TEXT    NOT NULL
);
INSERT INTO new_credentials (id, name, username, password, enable_password, private_key, remarks, created_at, updated_at)
    SELECT id, name, username, password, enable_password, private_key, remarks, created_at, updated_at FROM credentials;
DROP TABLE credentials;
ALTER TABLE new_credentials RENAME TO credentials;

CREATE TABLE new_templates (
    id         INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL,
    platform   TEXT    NOT NULL,
    commands   TEXT    NOT NULL,
    created_at TEXT    NOT NULL,
    updated_at TEXT    NOT NULL
);
INSERT INTO new_templates (id, name, platform, commands, created_at, updated_at)
    SELECT id, name, platform, commands, created_at, updated_at FROM templates;
DROP TABLE templates;
ALTER TABLE new_templates RENAME TO templates;

CREATE TABLE new_devices (
    id                  INTEGER PRIMARY KEY,
    name                TEXT    NOT NULL UNIQUE COLLATE NOCASE,
    host                TEXT    NOT NULL,
    port                INTEGER NOT NULL,
    platform            TEXT    NOT NULL,
    login_method        TEXT    NOT NULL CHECK (login_method IN ('ssh', 'telnet')),
    group_id            INTEGER REFERENCES device_groups(id),
    credential_id       INTEGER REFERENCES credentials(id),
    template_id         INTEGER REFERENCES templates(id) ON DELETE SET NULL,
    encoding            TEXT    NOT NULL DEFAULT 'utf-8',
    enabled             INTEGER NOT NULL DEFAULT 1,
    remarks             TEXT,
    status              TEXT    NOT NULL DEFAULT 'unknown'
                        CHECK (status IN ('unknown', 'reachable', 'unreachable')),
    last_checked_at     TEXT,
    last_backup_at      TEXT,
    last_backup_success INTEGER,
    host_key            BLOB,
    created_at          TEXT    NOT NULL,
    updated_at          TEXT    NOT NULL,
    pending_host_key    BLOB,
    last_good_backup_at TEXT
);
INSERT INTO new_devices (id, name, host, port, platform, login_method, group_id, credential_id, template_id,
        encoding, enabled, remarks, status, last_checked_at, last_backup_at, last_backup_success, host_key,
        created_at, updated_at, pending_host_key, last_good_backup_at)
    SELECT id, name, host, port, platform, login_method, group_id, credential_id, template_id,
        encoding, enabled, remarks, status, last_checked_at, last_backup_at, last_backup_success, host_key,
        created_at, updated_at, pending_host_key, last_good_backup_at FROM devices;
DROP TABLE devices;
ALTER TABLE new_devices RENAME TO devices;
CREATE INDEX devices_group ON devices(group_id);
CREATE INDEX devices_credential ON devices(credential_id);
CREATE INDEX devices_template ON devices(template_id);
CREATE INDEX devices_status ON devices(status);
CREATE INDEX devices_status_enabled ON devices(status, enabled);
CREATE INDEX devices_last_failed ON devices(last_backup_at) WHERE last_backup_success = 0;
CREATE INDEX devices_enabled_last_good ON devices(last_good_backup_at, created_at) WHERE enabled = 1;

-- +goose StatementBegin
CREATE TRIGGER devices_search_insert AFTER INSERT ON devices BEGIN
    INSERT INTO devices_search(rowid, name, host) VALUES (NEW.id, NEW.name, NEW.host);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER devices_search_delete AFTER DELETE ON devices BEGIN
    INSERT INTO devices_search(devices_search, rowid, name, host) VALUES ('delete', OLD.id, OLD.name, OLD.host);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER devices_search_update AFTER UPDATE OF name, host ON devices BEGIN
    INSERT INTO devices_search(devices_search, rowid, name, host) VALUES ('delete', OLD.id, OLD.name, OLD.host);
    INSERT INTO devices_search(rowid, name, host) VALUES (NEW.id, NEW.name, NEW.host);
END;
-- +goose StatementEnd

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

-- +goose StatementBegin
CREATE TRIGGER backups_last_good_delete AFTER DELETE ON backups WHEN OLD.success = 1 BEGIN
    UPDATE devices SET last_good_backup_at =
        (SELECT MAX(started_at) FROM backups WHERE device_id = OLD.device_id AND success = 1)
     WHERE id = OLD.device_id AND last_good_backup_at = OLD.started_at;
END;
-- +goose StatementEnd

CREATE TABLE new_jobs (
    id               INTEGER PRIMARY KEY,
    device_id        INTEGER NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
    trigger          TEXT    NOT NULL,
    state            TEXT    NOT NULL DEFAULT 'queued'
                     CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
    attempt          INTEGER NOT NULL DEFAULT 0,
    not_before       TEXT    NOT NULL,
    created_at       TEXT    NOT NULL,
    started_at       TEXT,
    finished_at      TEXT,
    -- The worker process running it, while running.
    owner            TEXT,
    -- The backups row of the latest attempt.
    backup_id        TEXT,
    error            TEXT,
    cancel_requested INTEGER NOT NULL DEFAULT 0
);
INSERT INTO new_jobs (id, device_id, trigger, state, attempt, not_before, created_at, started_at, finished_at,
        owner, backup_id, error, cancel_requested)
    SELECT id, device_id, trigger, state, attempt, not_before, created_at, started_at, finished_at,
        owner, backup_id, error, cancel_requested FROM jobs;
DROP TABLE jobs;
ALTER TABLE new_jobs RENAME TO jobs;
CREATE UNIQUE INDEX jobs_active_device ON jobs(device_id) WHERE state IN ('queued', 'running');
CREATE INDEX jobs_ready ON jobs(not_before, id) WHERE state = 'queued';
CREATE INDEX jobs_running_owner ON jobs(owner) WHERE state = 'running';
CREATE INDEX jobs_created ON jobs(created_at);
CREATE INDEX jobs_finished ON jobs(finished_at) WHERE state IN ('succeeded', 'failed', 'cancelled');
CREATE INDEX jobs_device ON jobs(device_id, id);

CREATE TABLE new_schedules (
    id             INTEGER PRIMARY KEY,
    name           TEXT    NOT NULL UNIQUE COLLATE NOCASE,
    cron           TEXT    NOT NULL,
    timezone       TEXT    NOT NULL DEFAULT 'UTC',
    target         TEXT    NOT NULL DEFAULT 'all' CHECK (target IN ('all', 'groups', 'devices')),
    target_ids     TEXT    NOT NULL DEFAULT '[]',
    spread_seconds INTEGER NOT NULL DEFAULT 0 CHECK (spread_seconds >= 0),
    enabled        INTEGER NOT NULL DEFAULT 1,
    last_run_at    TEXT,
    next_run_at    TEXT,
    created_at     TEXT    NOT NULL,
    updated_at     TEXT    NOT NULL
);
INSERT INTO new_schedules (id, name, cron, timezone, target, target_ids, spread_seconds, enabled,
        last_run_at, next_run_at, created_at, updated_at)
    SELECT id, name, cron, timezone, target, target_ids, spread_seconds, enabled,
        last_run_at, next_run_at, created_at, updated_at FROM schedules;
DROP TABLE schedules;
ALTER TABLE new_schedules RENAME TO schedules;

COMMIT;

PRAGMA foreign_keys = ON;
