-- +goose Up

-- Why an attempt failed, as a class the interface translates ("connect",
-- "auth", "timeout", "no_credential", ...): the message beside it is the
-- device's or the network's own words, in English, and stays as it is.
-- NULL for a success and for attempts recorded before this column.
ALTER TABLE backups ADD COLUMN error_reason TEXT COLLATE "C";
ALTER TABLE jobs ADD COLUMN error_reason TEXT COLLATE "C";

-- +goose Down
ALTER TABLE jobs DROP COLUMN error_reason;
ALTER TABLE backups DROP COLUMN error_reason;
