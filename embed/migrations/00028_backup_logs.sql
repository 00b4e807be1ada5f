-- +goose Up

-- The session log of a failed attempt: what backupd sent and the device
-- answered, passwords masked, bounded (app/backup.SessionLogMax), as
-- JSON segments. Kept with the attempt and deleted with it.
CREATE TABLE backup_logs (
    backup_id TEXT PRIMARY KEY REFERENCES backups(id) ON DELETE CASCADE,
    segments  TEXT NOT NULL,
    truncated INTEGER NOT NULL DEFAULT 0
);

-- +goose Down
DROP TABLE backup_logs;
