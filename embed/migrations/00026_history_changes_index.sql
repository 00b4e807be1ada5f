-- +goose Up

-- A device's history can show its changes only (the changed versions and
-- the first one). A device backed up every five minutes that changes
-- once a month keeps about 8,600 attempts a month for one change: without
-- an index of its own, counting and paging its changes reads every
-- attempt of the device. The partial index holds only the changes. Its
-- condition is spelt as the history's query spells it (a sum of the two
-- 0/1 flags), so that no other query's "changed = 1" implies it: the
-- fleet-wide counts keep their range on backups_started_outcome.
CREATE INDEX backups_device_changes ON backups(device_id, started_at DESC)
    WHERE changed + first_backup > 0;

-- +goose Down
DROP INDEX backups_device_changes;
