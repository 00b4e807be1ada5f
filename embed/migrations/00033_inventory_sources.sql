-- +goose Up

-- A source of truth the device list follows: a NetBox, or any HTTP JSON
-- inventory (kind). config holds its settings as a JSON object, never a
-- secret; token the sealed bytes of its API token (app/secret), NULL when
-- it has none, as credentials keep their passwords. interval_minutes is
-- how often it is synced (0: on demand only). last_sync_at, last_status
-- ('ok', 'failed', '' while it never ran), last_error and last_counts
-- (JSON object: what the last sync did) say how its last sync went.
CREATE TABLE inventory_sources (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    name             TEXT    NOT NULL UNIQUE COLLATE NOCASE,
    kind             TEXT    NOT NULL CHECK (kind IN ('netbox', 'http')),
    config           TEXT    NOT NULL DEFAULT '{}',
    token            BLOB,
    interval_minutes INTEGER NOT NULL DEFAULT 60 CHECK (interval_minutes >= 0),
    enabled          INTEGER NOT NULL DEFAULT 1,
    created_at       TEXT    NOT NULL,
    updated_at       TEXT    NOT NULL,
    last_sync_at     TEXT,
    last_status      TEXT    NOT NULL DEFAULT '' CHECK (last_status IN ('', 'ok', 'failed')),
    last_error       TEXT    NOT NULL DEFAULT '',
    last_counts      TEXT    NOT NULL DEFAULT '{}'
);

-- The source a device was synced from, and the source's own stable id
-- for it (inventory_key); both NULL for a device made by hand or
-- imported, which no sync touches unless one claims it. Deleting a
-- source leaves its devices, made by hand from then on.
-- disabled_by_sync tells a device the sync disabled (it vanished from
-- the source; enabled again when it comes back) from one a person
-- disabled, which no sync enables: it is set only while the device is
-- disabled.
ALTER TABLE devices ADD COLUMN inventory_source_id INTEGER REFERENCES inventory_sources(id) ON DELETE SET NULL;
ALTER TABLE devices ADD COLUMN inventory_key TEXT;
ALTER TABLE devices ADD COLUMN disabled_by_sync INTEGER NOT NULL DEFAULT 0 CHECK (disabled_by_sync = 0 OR enabled = 0);
CREATE UNIQUE INDEX devices_inventory_key ON devices(inventory_source_id, inventory_key)
    WHERE inventory_source_id IS NOT NULL;

-- +goose Down
DROP INDEX devices_inventory_key;
ALTER TABLE devices DROP COLUMN disabled_by_sync;
ALTER TABLE devices DROP COLUMN inventory_key;
ALTER TABLE devices DROP COLUMN inventory_source_id;
DROP TABLE inventory_sources;
