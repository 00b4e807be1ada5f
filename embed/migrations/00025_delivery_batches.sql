-- +goose Up

-- A delivery batch is one message to one channel: the deliveries it holds
-- and the events as rendered when it was first sent. A retry, also after
-- a crash or a restart, sends the same batch again: the same
-- X-Backupd-Delivery (delivery_key) and the same body, so that a
-- receiver can drop what it already processed; events recorded since go
-- into a batch of their own. events is cleared once every delivery of
-- the batch is settled (sent or given up).
CREATE TABLE delivery_batches (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    channel_id   INTEGER NOT NULL REFERENCES notification_channels(id) ON DELETE CASCADE,
    delivery_key TEXT    NOT NULL,
    events       TEXT,
    created_at   TEXT    NOT NULL
);
CREATE INDEX delivery_batches_channel ON delivery_batches(channel_id);
-- batch_id is no reference (SQLite cannot drop a column that is one):
-- a batch is deleted only once no delivery names it, or with its channel
-- and so with its deliveries.
ALTER TABLE deliveries ADD COLUMN batch_id INTEGER;
CREATE INDEX deliveries_batch ON deliveries(batch_id) WHERE batch_id IS NOT NULL;

-- How each channel's last real delivery went, for the Notifications
-- page: when it last took one, when it last failed and since when it has
-- been failing (NULL while it works), with the last answer and the
-- secret-free error.
CREATE TABLE notification_channel_health (
    channel_id     INTEGER PRIMARY KEY REFERENCES notification_channels(id) ON DELETE CASCADE,
    last_ok_at     TEXT,
    last_failed_at TEXT,
    failing_since  TEXT,
    last_status    TEXT,
    last_error     TEXT
);

-- +goose Down
DROP TABLE notification_channel_health;
DROP INDEX deliveries_batch;
ALTER TABLE deliveries DROP COLUMN batch_id;
DROP TABLE delivery_batches;
