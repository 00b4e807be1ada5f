-- +goose Up

-- The lines of the version a restore by merge (a platform without a
-- full replace) types: a JSON array of line numbers of the version's
-- text, from 1, sorted. NULL for a restore of the whole version.
ALTER TABLE restores ADD COLUMN lines TEXT;

-- +goose Down
ALTER TABLE restores DROP COLUMN lines;
