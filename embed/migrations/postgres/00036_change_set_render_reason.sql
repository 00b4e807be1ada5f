-- +goose Up

-- Why a change set's dry run rendered nothing for a device, as a code
-- (app/restore's Render* constants) beside render_error, the service's
-- own words: the pages say it in the reader's language from the code
-- rather than from the English sentence. The dry runs recorded before
-- this migration are classified once here, from the sentences the
-- service wrote then; a dry run run again writes its code itself.
ALTER TABLE change_set_targets ADD COLUMN render_reason TEXT COLLATE "C";
UPDATE change_set_targets SET render_reason = CASE
        WHEN render_error LIKE '%cannot take a push' THEN 'no_push'
        WHEN render_error LIKE '%leave it out of the change set' THEN 'block'
        WHEN render_error LIKE '%the device is disabled; enable it to push to it' THEN 'disabled'
        WHEN render_error LIKE '%restores run from the server only' THEN 'remote_zone'
        WHEN render_error LIKE '%nothing to send' THEN 'nothing_to_send'
        ELSE 'template'
    END
    WHERE render_error IS NOT NULL;

-- +goose Down
ALTER TABLE change_set_targets DROP COLUMN render_reason;
