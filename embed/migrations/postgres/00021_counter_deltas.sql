-- +goose Up

-- Counting is insert-only. The triggers used to UPDATE the few rows of
-- counters in every transaction that added, finished or deleted backups
-- and snapshots: transactions of several nodes queued on those rows, and
-- two that took them in another order deadlocked (a finishing job inserts
-- a snapshot, then updates its backup; retention deletes backups, then
-- snapshots). Now each change appends a row to counter_deltas, which
-- locks nothing another transaction waits for; counters is a view that
-- adds the deltas to counter_totals, so readers are unchanged, and the
-- leader folds the deltas into the totals now and then
-- (bd_fold_counters, db.Store.FoldCounters).
ALTER TABLE counters RENAME TO counter_totals;

CREATE TABLE counter_deltas (
    name  TEXT COLLATE "C" NOT NULL,
    value BIGINT NOT NULL
);

CREATE VIEW counters AS
    SELECT t.name, t.value + COALESCE(d.value, 0) AS value
      FROM counter_totals t
      LEFT JOIN (SELECT name, SUM(value)::bigint AS value FROM counter_deltas GROUP BY name) d ON d.name = t.name;

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION bd_count(counter text, delta bigint) RETURNS void
LANGUAGE sql AS $$ INSERT INTO counter_deltas (name, value) SELECT counter, delta WHERE delta <> 0 $$;
-- +goose StatementEnd

-- bd_fold_counters moves the deltas into the totals and returns how many
-- it moved. The DELETE takes exactly the deltas its snapshot sees and adds
-- exactly those, in one statement: a delta committed meanwhile stays for
-- the next fold, and a reader sees the totals and deltas either both
-- before or both after the fold. Folds take turns (the lock does not
-- conflict with readers or with the triggers' inserts).
-- +goose StatementBegin
CREATE FUNCTION bd_fold_counters() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    moved_rows bigint;
BEGIN
    LOCK TABLE counter_totals IN SHARE ROW EXCLUSIVE MODE;
    WITH moved AS (DELETE FROM counter_deltas RETURNING name, value),
    summed AS (SELECT name, SUM(value)::bigint AS value, COUNT(*) AS n FROM moved GROUP BY name),
    folded AS (
        INSERT INTO counter_totals AS t (name, value) SELECT name, value FROM summed
        ON CONFLICT (name) DO UPDATE SET value = t.value + excluded.value
        RETURNING 1)
    SELECT COALESCE(SUM(n), 0)::bigint INTO moved_rows FROM summed;
    RETURN moved_rows;
END $$;
-- +goose StatementEnd

-- +goose Down
-- Writers wait until counters is a table again, so that no delta is
-- added after the last fold.
LOCK TABLE counter_deltas IN ACCESS EXCLUSIVE MODE;
SELECT bd_fold_counters();
DROP FUNCTION bd_fold_counters();
DROP VIEW counters;
ALTER TABLE counter_totals RENAME TO counters;
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION bd_count(counter text, delta bigint) RETURNS void
LANGUAGE sql AS $$ UPDATE counters SET value = value + delta WHERE name = counter AND delta <> 0 $$;
-- +goose StatementEnd
DROP TABLE counter_deltas;
