-- +goose Up

-- An enrolment token that has not been used can be revoked (a leaked
-- one stays valid for its whole lifetime otherwise): revoked_at is when,
-- and a revoked token enrols nothing.
ALTER TABLE collector_tokens ADD COLUMN revoked_at TEXT;

-- +goose Down
ALTER TABLE collector_tokens DROP COLUMN revoked_at;
