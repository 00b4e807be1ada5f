-- +goose Up
-- Timestamps are UTC text 'YYYY-MM-DDTHH:MM:SS' so that they sort and compare
-- as strings and read the same in every SQLite tool.

CREATE TABLE roles (
    id              INTEGER PRIMARY KEY,
    name            TEXT    NOT NULL UNIQUE COLLATE NOCASE,
    description     TEXT    NOT NULL DEFAULT '',
    builtin         INTEGER NOT NULL DEFAULT 0,
    -- all_permissions roles hold every permission, including ones added by
    -- later releases.
    all_permissions INTEGER NOT NULL DEFAULT 0,
    created_at      TEXT    NOT NULL
);

CREATE TABLE role_permissions (
    role_id    INTEGER NOT NULL REFERENCES roles(id) ON DELETE CASCADE,
    permission TEXT    NOT NULL,
    PRIMARY KEY (role_id, permission)
) WITHOUT ROWID;

CREATE TABLE device_groups (
    id         INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL UNIQUE COLLATE NOCASE,
    parent_id  INTEGER REFERENCES device_groups(id),
    path       TEXT    NOT NULL,
    depth      INTEGER NOT NULL,
    sort_order INTEGER NOT NULL,
    created_at TEXT    NOT NULL
);
CREATE INDEX device_groups_parent ON device_groups(parent_id);
CREATE INDEX device_groups_path ON device_groups(path);

CREATE TABLE users (
    id                   INTEGER PRIMARY KEY,
    username             TEXT    NOT NULL UNIQUE COLLATE NOCASE,
    password_hash        TEXT    NOT NULL,
    active               INTEGER NOT NULL DEFAULT 1,
    -- all_groups users see every device group; others see user_groups and
    -- all their descendants.
    all_groups           INTEGER NOT NULL DEFAULT 0,
    must_change_password INTEGER NOT NULL DEFAULT 0,
    created_at           TEXT    NOT NULL,
    updated_at           TEXT    NOT NULL
);

CREATE TABLE user_roles (
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    role_id INTEGER NOT NULL REFERENCES roles(id) ON DELETE CASCADE,
    PRIMARY KEY (user_id, role_id)
) WITHOUT ROWID;

CREATE TABLE user_groups (
    user_id  INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    group_id INTEGER NOT NULL REFERENCES device_groups(id) ON DELETE CASCADE,
    PRIMARY KEY (user_id, group_id)
) WITHOUT ROWID;

CREATE TABLE api_keys (
    id           INTEGER PRIMARY KEY,
    user_id      INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name         TEXT    NOT NULL,
    -- prefix is the visible, non-secret head of the key used to find its row.
    prefix       TEXT    NOT NULL UNIQUE,
    -- hash is SHA-256 of the whole key; the key itself is never stored.
    hash         BLOB    NOT NULL,
    -- narrowed keys hold only api_key_permissions (intersected with the
    -- owner's); others hold whatever their owner holds.
    narrowed     INTEGER NOT NULL DEFAULT 0,
    expires_at   TEXT,
    revoked_at   TEXT,
    last_used_at TEXT,
    created_at   TEXT    NOT NULL
);
CREATE INDEX api_keys_user ON api_keys(user_id);

CREATE TABLE api_key_permissions (
    key_id     INTEGER NOT NULL REFERENCES api_keys(id) ON DELETE CASCADE,
    permission TEXT    NOT NULL,
    PRIMARY KEY (key_id, permission)
) WITHOUT ROWID;

CREATE TABLE credentials (
    id              INTEGER PRIMARY KEY,
    name            TEXT    NOT NULL UNIQUE COLLATE NOCASE,
    username        TEXT    NOT NULL,
    -- sealed secrets (see app/secret); NULL when not set.
    password        BLOB,
    enable_password BLOB,
    private_key     BLOB,
    remarks         TEXT,
    created_at      TEXT    NOT NULL,
    updated_at      TEXT    NOT NULL
);

CREATE TABLE templates (
    id         INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL,
    platform   TEXT    NOT NULL,
    commands   TEXT    NOT NULL,
    created_at TEXT    NOT NULL,
    updated_at TEXT    NOT NULL
);

CREATE TABLE devices (
    id                  INTEGER PRIMARY KEY,
    name                TEXT    NOT NULL UNIQUE COLLATE NOCASE,
    host                TEXT    NOT NULL,
    port                INTEGER NOT NULL,
    platform            TEXT    NOT NULL,
    login_method        TEXT    NOT NULL CHECK (login_method IN ('ssh', 'telnet')),
    group_id            INTEGER REFERENCES device_groups(id),
    credential_id       INTEGER REFERENCES credentials(id),
    template_id         INTEGER REFERENCES templates(id) ON DELETE SET NULL,
    encoding            TEXT    NOT NULL DEFAULT 'utf-8',
    enabled             INTEGER NOT NULL DEFAULT 1,
    remarks             TEXT,
    status              TEXT    NOT NULL DEFAULT 'unknown'
                        CHECK (status IN ('unknown', 'reachable', 'unreachable')),
    last_checked_at     TEXT,
    last_backup_at      TEXT,
    last_backup_success INTEGER,
    host_key            BLOB,
    created_at          TEXT    NOT NULL,
    updated_at          TEXT    NOT NULL
);
CREATE INDEX devices_group ON devices(group_id);
CREATE INDEX devices_credential ON devices(credential_id);
CREATE INDEX devices_template ON devices(template_id);

-- +goose Down
DROP TABLE devices;
DROP TABLE templates;
DROP TABLE credentials;
DROP TABLE api_key_permissions;
DROP TABLE api_keys;
DROP TABLE user_groups;
DROP TABLE user_roles;
DROP TABLE users;
DROP TABLE device_groups;
DROP TABLE role_permissions;
DROP TABLE roles;
