-- +goose Up

-- What a job does: 'backup' (every job before this release), 'restore'
-- (puts a stored version back on the device) or 'push' (sends a change
-- set's commands to it). work_id is the row the job works on: the
-- restores row of a restore, the change_set_targets row of a push; NULL
-- for a backup. Restores and pushes run as jobs so that the unique index
-- jobs_active_device, one queued or running job per device, keeps a
-- backup, a restore and a push from ever touching a device at once.
ALTER TABLE jobs ADD COLUMN kind TEXT NOT NULL DEFAULT 'backup' CHECK (kind IN ('backup', 'restore', 'push'));
ALTER TABLE jobs ADD COLUMN work_id INTEGER;

-- A request to put a stored version (target_backup_id, its text pinned
-- by target_hash) back on a device, from the request through preview,
-- approval and the run to its end. state is where it stands (see the
-- CHECK); stage the step a running restore is at (pre_backup, apply,
-- verify, rollback, ...). The backups it takes are named here:
-- preview_backup_id the fresh backup the preview compares with,
-- pre_backup_id the one just before the change, post_backup_id the one
-- that verifies it, rollback_backup_id the one that verifies a rollback.
-- No foreign key names a backup or a job: a finished restore's history
-- outlives them; retention keeps those of an open restore. Who asked and
-- who decided are kept by id and name, as the audit log keeps them.
-- outcome is the runner's summary (JSON, never configuration text);
-- transcript the session's segments (JSON, secrets masked by the
-- caller), bounded, transcript_truncated when cut short.
CREATE TABLE restores (
    id                   INTEGER PRIMARY KEY AUTOINCREMENT,
    device_id            INTEGER NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
    target_backup_id     TEXT    NOT NULL,
    target_hash          TEXT    NOT NULL,
    method               TEXT    NOT NULL,
    options              TEXT    NOT NULL DEFAULT '{}',
    state                TEXT    NOT NULL DEFAULT 'previewing'
                         CHECK (state IN ('previewing', 'pending', 'approved', 'queued', 'running', 'succeeded',
                             'rolled_back', 'rollback_failed', 'failed', 'rejected', 'cancelled', 'expired', 'interrupted')),
    stage                TEXT    NOT NULL DEFAULT '',
    preview_backup_id    TEXT,
    preview_hash         TEXT,
    pre_backup_id        TEXT,
    post_backup_id       TEXT,
    rollback_backup_id   TEXT,
    requested_by         INTEGER,
    requested_by_name    TEXT    NOT NULL,
    requested_at         TEXT    NOT NULL,
    reason               TEXT    NOT NULL DEFAULT '',
    decided_by           INTEGER,
    decided_by_name      TEXT,
    decided_at           TEXT,
    decision_note        TEXT    NOT NULL DEFAULT '',
    expires_at           TEXT,
    job_id               INTEGER,
    started_at           TEXT,
    finished_at          TEXT,
    outcome              TEXT,
    error                TEXT,
    error_reason         TEXT,
    transcript           TEXT    NOT NULL DEFAULT '[]',
    transcript_truncated INTEGER NOT NULL DEFAULT 0,
    updated_at           TEXT    NOT NULL
);
-- One open restore per device.
CREATE UNIQUE INDEX restores_open_device ON restores(device_id)
    WHERE state IN ('previewing', 'pending', 'approved', 'queued', 'running');
CREATE INDEX restores_device ON restores(device_id, id);
CREATE INDEX restores_state ON restores(state, id);
-- The expiry sweep's, and retention's look at the versions open
-- restores need.
CREATE INDEX restores_expiry ON restores(expires_at) WHERE state IN ('pending', 'approved');
CREATE INDEX restores_open_target ON restores(target_hash)
    WHERE state IN ('previewing', 'pending', 'approved', 'queued', 'running');

-- A change set: commands (body; kind 'template' renders it per device
-- with variables, JSON) to send to many devices, concurrency at a time,
-- stopping after stop_after_failures failures (0: never stops early).
-- confirm_seconds is the undo window a platform's commit takes (0: the
-- platform's default). Who made it and who decided, as for restores.
CREATE TABLE change_sets (
    id                  INTEGER PRIMARY KEY AUTOINCREMENT,
    name                TEXT    NOT NULL,
    body                TEXT    NOT NULL,
    kind                TEXT    NOT NULL DEFAULT 'snippet' CHECK (kind IN ('snippet', 'template')),
    variables           TEXT    NOT NULL DEFAULT '{}',
    state               TEXT    NOT NULL DEFAULT 'draft'
                        CHECK (state IN ('draft', 'ready', 'approved', 'running', 'done', 'stopped', 'cancelled', 'expired')),
    concurrency         INTEGER NOT NULL DEFAULT 1 CHECK (concurrency >= 1),
    stop_after_failures INTEGER NOT NULL DEFAULT 0 CHECK (stop_after_failures >= 0),
    confirm_seconds     INTEGER NOT NULL DEFAULT 0 CHECK (confirm_seconds >= 0),
    created_by          INTEGER,
    created_by_name     TEXT    NOT NULL,
    created_at          TEXT    NOT NULL,
    decided_by          INTEGER,
    decided_by_name     TEXT,
    decided_at          TEXT,
    decision_note       TEXT    NOT NULL DEFAULT '',
    expires_at          TEXT,
    started_at          TEXT,
    finished_at         TEXT,
    error               TEXT,
    updated_at          TEXT    NOT NULL
);
CREATE INDEX change_sets_state ON change_sets(state, id);
CREATE INDEX change_sets_expiry ON change_sets(expires_at) WHERE state IN ('ready', 'approved');

-- One device of a change set, in position order: its own variables
-- (JSON), what the dry run rendered for it (or why it could not), and
-- its run, kept as a restore's is.
CREATE TABLE change_set_targets (
    id                   INTEGER PRIMARY KEY AUTOINCREMENT,
    change_set_id        INTEGER NOT NULL REFERENCES change_sets(id) ON DELETE CASCADE,
    device_id            INTEGER NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
    position             INTEGER NOT NULL,
    variables            TEXT    NOT NULL DEFAULT '{}',
    rendered             TEXT,
    render_error         TEXT,
    state                TEXT    NOT NULL DEFAULT 'pending'
                         CHECK (state IN ('pending', 'queued', 'running', 'succeeded', 'failed', 'skipped', 'interrupted')),
    stage                TEXT    NOT NULL DEFAULT '',
    job_id               INTEGER,
    pre_backup_id        TEXT,
    post_backup_id       TEXT,
    started_at           TEXT,
    finished_at          TEXT,
    error                TEXT,
    error_reason         TEXT,
    transcript           TEXT    NOT NULL DEFAULT '[]',
    transcript_truncated INTEGER NOT NULL DEFAULT 0,
    UNIQUE (change_set_id, device_id)
);
CREATE INDEX change_set_targets_order ON change_set_targets(change_set_id, position, id);
CREATE INDEX change_set_targets_device ON change_set_targets(device_id);

-- +goose Down
DROP TABLE change_set_targets;
DROP TABLE change_sets;
DROP TABLE restores;
ALTER TABLE jobs DROP COLUMN work_id;
ALTER TABLE jobs DROP COLUMN kind;
