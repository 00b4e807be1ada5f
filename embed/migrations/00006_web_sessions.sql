-- +goose Up

-- Web interface sessions, kept on the server. The cookie carries a random
-- token; only its SHA-256 (hex) is stored, so a copy of the database does
-- not hold usable sessions. A session ends at expires_at (absolute), after
-- a period without requests (idle, measured from last_seen_at, which is
-- written at most once a minute), at logout, or when its user changes
-- password or is disabled. Times are UTC 'YYYY-MM-DDTHH:MM:SS'.
CREATE TABLE web_sessions (
    id           TEXT    PRIMARY KEY,
    user_id      INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    -- The secret every state-changing request of this session must echo
    -- (hidden form field or X-CSRF-Token header).
    csrf_secret  TEXT    NOT NULL,
    created_at   TEXT    NOT NULL,
    last_seen_at TEXT    NOT NULL,
    expires_at   TEXT    NOT NULL,
    remote_addr  TEXT    NOT NULL DEFAULT '',
    user_agent   TEXT    NOT NULL DEFAULT ''
) WITHOUT ROWID;
CREATE INDEX web_sessions_user ON web_sessions(user_id);
CREATE INDEX web_sessions_expires ON web_sessions(expires_at);
CREATE INDEX web_sessions_last_seen ON web_sessions(last_seen_at);

-- The dashboard lists enabled devices whose last backup failed, newest
-- failure first: a partial index holds just those, however large the
-- inventory.
CREATE INDEX devices_last_failed ON devices(last_backup_at) WHERE last_backup_success = 0;

-- +goose Down
DROP INDEX devices_last_failed;
DROP TABLE web_sessions;
