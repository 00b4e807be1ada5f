-- +goose Up

-- On PostgreSQL backups_started_outcome is rebuilt to carry finished_at
-- (see embed/migrations/postgres/00022_outcome_index_covering.sql), so
-- that the dashboard's outcome counts read the index alone. SQLite's
-- index on the expression finished_at IS NOT NULL already covers them:
-- nothing changes here, and the version only keeps both engines' schemas
-- numbered alike.
SELECT 1;

-- +goose Down
SELECT 1;
