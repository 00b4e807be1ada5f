-- +goose Up

-- Attempts cut short because our own process stopped (a crash, kill -9, a
-- power cut, a shutdown) are not the device's fault: they are counted here
-- instead of in attempt, so they never use up the device's retries. Their
-- own, larger bound still ends a job whose backup stops the process every
-- time.
ALTER TABLE jobs ADD COLUMN interruptions INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE jobs DROP COLUMN interruptions;
