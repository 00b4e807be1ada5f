-- +goose Up

-- An operator asked to stop a running job; the engine running it (in any
-- process) sees the flag within seconds and ends the attempt.
ALTER TABLE jobs ADD COLUMN cancel_requested INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE jobs DROP COLUMN cancel_requested;
