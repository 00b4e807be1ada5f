-- +goose Up

-- What the person who decided a change set decided: approved, or
-- rejected (a cancel by an approver before it ran); '' while nobody has.
-- A cancel by its author is no decision.
ALTER TABLE change_sets ADD COLUMN decision TEXT COLLATE "C" NOT NULL DEFAULT ''
    CHECK (decision IN ('', 'approved', 'rejected'));
UPDATE change_sets SET decision = 'approved' WHERE decided_at IS NOT NULL AND started_at IS NOT NULL;
UPDATE change_sets SET decision = 'rejected' WHERE decided_at IS NOT NULL AND started_at IS NULL AND state = 'cancelled';
UPDATE change_sets SET decision = 'approved' WHERE decided_at IS NOT NULL AND decision = '';

-- +goose Down
ALTER TABLE change_sets DROP COLUMN decision;
