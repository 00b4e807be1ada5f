-- +goose Up

-- Using a credential is a right of its own (credentials.use): a role
-- holds it for every credential (role_permissions) or for the ones listed
-- here. Attaching a credential to a device, or sending a device's
-- credential somewhere new (another host, port, login method or zone),
-- needs it.
CREATE TABLE role_credentials (
    role_id       INTEGER NOT NULL REFERENCES roles(id) ON DELETE CASCADE,
    credential_id INTEGER NOT NULL REFERENCES credentials(id) ON DELETE CASCADE,
    PRIMARY KEY (role_id, credential_id)
);
CREATE INDEX role_credentials_credential ON role_credentials(credential_id);

-- address_pin is the address ("method|host|port|zone") a device's
-- credential was last sent to or confirmed for. A device whose address
-- differs from it does not get its credential until a user allowed to
-- use the credential confirms the new address (an SSH device with a
-- pinned host key proves itself by the key instead). NULL: the
-- credential was never sent; the first backup pins the address. Devices
-- that have a credential today keep the address they have.
ALTER TABLE devices ADD COLUMN address_pin TEXT;
UPDATE devices SET address_pin = login_method || '|' || host || '|' || port || '|' || zone_id
    WHERE credential_id IS NOT NULL;

-- The devices an audit entry names, so that a user scoped to some device
-- groups sees only the entries about devices of those groups.
CREATE TABLE audit_devices (
    audit_id  INTEGER NOT NULL REFERENCES audit_log(id) ON DELETE CASCADE,
    device_id INTEGER NOT NULL,
    PRIMARY KEY (audit_id, device_id)
);
INSERT OR IGNORE INTO audit_devices (audit_id, device_id)
    SELECT id, CAST(target_id AS INTEGER) FROM audit_log
    WHERE target_type = 'device' AND target_id <> '' AND target_id NOT GLOB '*[^0-9]*';
INSERT OR IGNORE INTO audit_devices (audit_id, device_id)
    SELECT id, json_extract(d, '$.device_id')
    FROM (SELECT id, CASE WHEN json_valid(details) THEN details ELSE '{}' END AS d FROM audit_log)
    WHERE json_type(d, '$.device_id') = 'integer';
INSERT OR IGNORE INTO audit_devices (audit_id, device_id)
    SELECT a.id, j.value
    FROM (SELECT id, CASE WHEN json_valid(details) THEN details ELSE '{}' END AS d FROM audit_log) a,
        json_each(a.d, '$.device_ids') j
    WHERE j.type = 'integer';

-- +goose Down
DROP TABLE audit_devices;
ALTER TABLE devices DROP COLUMN address_pin;
DROP INDEX role_credentials_credential;
DROP TABLE role_credentials;
