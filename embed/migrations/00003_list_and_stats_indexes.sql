-- +goose Up

-- /stats groups devices by status and enabled: covered by one index
-- instead of reading every device row.
CREATE INDEX devices_status_enabled ON devices(status, enabled);

-- /stats counts the last 24 hours' outcomes: covered by the index instead
-- of one table lookup per backup in the window.
CREATE INDEX backups_started_outcome ON backups(started_at, success, changed, finished_at IS NOT NULL);
DROP INDEX backups_started;

-- Substring search on device name and host (the device list's q) without
-- reading every device: a trigram index kept by triggers.
CREATE VIRTUAL TABLE devices_search USING fts5(name, host, content='devices', content_rowid='id', tokenize='trigram');
INSERT INTO devices_search(devices_search) VALUES ('rebuild');

-- +goose StatementBegin
CREATE TRIGGER devices_search_insert AFTER INSERT ON devices BEGIN
    INSERT INTO devices_search(rowid, name, host) VALUES (NEW.id, NEW.name, NEW.host);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER devices_search_delete AFTER DELETE ON devices BEGIN
    INSERT INTO devices_search(devices_search, rowid, name, host) VALUES ('delete', OLD.id, OLD.name, OLD.host);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER devices_search_update AFTER UPDATE OF name, host ON devices BEGIN
    INSERT INTO devices_search(devices_search, rowid, name, host) VALUES ('delete', OLD.id, OLD.name, OLD.host);
    INSERT INTO devices_search(rowid, name, host) VALUES (NEW.id, NEW.name, NEW.host);
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER devices_search_update;
DROP TRIGGER devices_search_delete;
DROP TRIGGER devices_search_insert;
DROP TABLE devices_search;
CREATE INDEX backups_started ON backups(started_at);
DROP INDEX backups_started_outcome;
DROP INDEX devices_status_enabled;
