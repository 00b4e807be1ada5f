-- +goose Up

-- Zones: the networks devices live in. Zone 1, 'local', is the server's
-- own: its engines back its devices up. A device of any other zone is
-- backed up by a remote collector of that zone, which dials out to the
-- server (`backupd collector`). A device is (zone, host): two zones may
-- hold the same address. Device names stay unique across zones.
CREATE TABLE zones (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    name       TEXT    NOT NULL UNIQUE COLLATE NOCASE,
    created_at TEXT    NOT NULL
);
INSERT INTO zones (id, name, created_at) VALUES (1, 'local', strftime('%Y-%m-%dT%H:%M:%S', 'now'));

-- SQLite adds a column with a reference only with a NULL default: the
-- store checks the zone exists, and a zone with devices is not deleted.
ALTER TABLE devices ADD COLUMN zone_id INTEGER NOT NULL DEFAULT 1;
CREATE INDEX devices_zone ON devices(zone_id);

-- A job carries its device's zone (set when queued, moved with the
-- device): the server's engines claim zone 1's, a collector its own
-- zone's. A job leased to a collector names it and holds the lease until
-- lease_until; a lease that runs out queues the job again.
ALTER TABLE jobs ADD COLUMN zone_id INTEGER NOT NULL DEFAULT 1;
ALTER TABLE jobs ADD COLUMN collector_id INTEGER;
ALTER TABLE jobs ADD COLUMN lease_until TEXT;
CREATE INDEX jobs_ready_zone ON jobs(zone_id, not_before, id) WHERE state = 'queued';
CREATE INDEX jobs_leased ON jobs(collector_id, lease_until) WHERE state = 'running' AND collector_id IS NOT NULL;

-- Collectors enrolled in a zone. Only hashes of their bearer tokens are
-- stored; public_key is the X25519 key the server seals each job's
-- device secrets to. A revoked collector keeps its row (revoked_at) for
-- the record and is refused.
CREATE TABLE collectors (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    zone_id      INTEGER NOT NULL REFERENCES zones(id),
    name         TEXT    NOT NULL,
    public_key   TEXT    NOT NULL,
    token_hash   BLOB    NOT NULL UNIQUE,
    enrolled_at  TEXT    NOT NULL,
    last_seen_at TEXT,
    last_address TEXT    NOT NULL DEFAULT '',
    version      TEXT    NOT NULL DEFAULT '',
    revoked_at   TEXT
);
CREATE INDEX collectors_zone ON collectors(zone_id);

-- One-time enrolment tokens (their hashes): a token enrols one collector
-- in its zone before it expires.
CREATE TABLE collector_tokens (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    zone_id      INTEGER NOT NULL REFERENCES zones(id) ON DELETE CASCADE,
    hash         BLOB    NOT NULL UNIQUE,
    created_at   TEXT    NOT NULL,
    expires_at   TEXT    NOT NULL,
    used_at      TEXT,
    collector_id INTEGER REFERENCES collectors(id)
);

-- +goose Down
DROP TABLE collector_tokens;
DROP TABLE collectors;
DROP INDEX jobs_leased;
DROP INDEX jobs_ready_zone;
ALTER TABLE jobs DROP COLUMN lease_until;
ALTER TABLE jobs DROP COLUMN collector_id;
ALTER TABLE jobs DROP COLUMN zone_id;
DROP INDEX devices_zone;
ALTER TABLE devices DROP COLUMN zone_id;
DROP TABLE zones;
