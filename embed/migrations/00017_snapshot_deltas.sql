-- +goose Up

-- A snapshot may be stored as a delta: a zstd frame whose raw dictionary
-- is the text of the snapshot base_id names (db/snapshots.go). A device's
-- newest version stays whole and older ones point at a newer one, so
-- reading the newest decodes one frame; a whole "key frame" is kept often
-- enough that no chain is longer than 64 deltas. base_id is NULL for a
-- whole frame. It is not declared a foreign key, so the column can be
-- dropped again on the way down; the trigger below keeps a base from being
-- deleted under a delta instead.
ALTER TABLE snapshots ADD COLUMN base_id INTEGER;
CREATE INDEX snapshots_base ON snapshots(base_id) WHERE base_id IS NOT NULL;

-- +goose StatementBegin
CREATE TRIGGER snapshots_base_kept BEFORE DELETE ON snapshots
WHEN EXISTS (SELECT 1 FROM snapshots d WHERE d.base_id = OLD.id) BEGIN
    SELECT RAISE(ABORT, 'snapshot is the base of a stored delta');
END;
-- +goose StatementEnd

-- Packing rewrites data and stored_size in place: the running total
-- follows, and a count of the snapshots stored as deltas is kept beside it.
INSERT INTO counters (name, value) VALUES ('snapshot_deltas', 0);

-- +goose StatementBegin
CREATE TRIGGER snapshots_counted_update AFTER UPDATE OF stored_size, base_id ON snapshots BEGIN
    UPDATE counters SET value = value + NEW.stored_size - OLD.stored_size WHERE name = 'snapshot_stored_bytes';
    UPDATE counters SET value = value + (NEW.base_id IS NOT NULL) - (OLD.base_id IS NOT NULL) WHERE name = 'snapshot_deltas';
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER snapshots_deltas_counted_delete AFTER DELETE ON snapshots WHEN OLD.base_id IS NOT NULL BEGIN
    UPDATE counters SET value = value - 1 WHERE name = 'snapshot_deltas';
END;
-- +goose StatementEnd

-- +goose Down
-- Every delta was expanded back to a whole frame before this runs
-- (db.Migrate does it), so dropping the column loses nothing.
DROP TRIGGER snapshots_deltas_counted_delete;
DROP TRIGGER snapshots_counted_update;
DELETE FROM counters WHERE name = 'snapshot_deltas';
DROP TRIGGER snapshots_base_kept;
DROP INDEX snapshots_base;
ALTER TABLE snapshots DROP COLUMN base_id;
