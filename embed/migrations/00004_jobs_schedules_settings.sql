-- +goose Up

-- The backup queue. A job is one device to back up; it lives on through
-- its retries (attempt counts them) and keeps its last outcome. Times are
-- UTC with milliseconds, like backups.
CREATE TABLE jobs (
    id          INTEGER PRIMARY KEY,
    device_id   INTEGER NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
    trigger     TEXT    NOT NULL,
    state       TEXT    NOT NULL DEFAULT 'queued'
                CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
    attempt     INTEGER NOT NULL DEFAULT 0,
    not_before  TEXT    NOT NULL,
    created_at  TEXT    NOT NULL,
    started_at  TEXT,
    finished_at TEXT,
    -- The worker process running it, while running.
    owner       TEXT,
    -- The backups row of the latest attempt.
    backup_id   TEXT,
    error       TEXT
);
-- At most one job per device is waiting or running, whichever process
-- enqueues it: a second request for the same device joins the first.
CREATE UNIQUE INDEX jobs_active_device ON jobs(device_id) WHERE state IN ('queued', 'running');
CREATE INDEX jobs_ready ON jobs(not_before, id) WHERE state = 'queued';
CREATE INDEX jobs_running_owner ON jobs(owner) WHERE state = 'running';
CREATE INDEX jobs_created ON jobs(created_at);

-- Cron schedules. target_ids is a JSON array of group or device IDs.
CREATE TABLE schedules (
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

-- Settings: one JSON value per key (noise rules, retention, ...).
CREATE TABLE settings (
    key        TEXT PRIMARY KEY,
    value      TEXT NOT NULL,
    updated_at TEXT NOT NULL
) WITHOUT ROWID;

-- The last good backup per device is looked up for change detection and
-- kept by retention.
CREATE INDEX backups_device_success ON backups(device_id, success, started_at DESC);

-- A host key a device presented that differs from its pinned one; the
-- backup fails until an operator accepts it.
ALTER TABLE devices ADD COLUMN pending_host_key BLOB;

-- +goose Down
ALTER TABLE devices DROP COLUMN pending_host_key;
DROP INDEX backups_device_success;
DROP TABLE settings;
DROP TABLE schedules;
DROP TABLE jobs;
