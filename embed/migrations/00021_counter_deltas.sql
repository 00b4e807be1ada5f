-- +goose Up

-- On PostgreSQL the counters became totals plus insert-only deltas (see
-- embed/migrations/postgres/00021_counter_deltas.sql), so that concurrent
-- transactions of several nodes neither wait for nor deadlock on the same
-- counter rows. SQLite has one writer, so its triggers keep updating the
-- counters table in place: nothing changes here, and the version only
-- keeps both engines' schemas numbered alike.
SELECT 1;

-- +goose Down
SELECT 1;
