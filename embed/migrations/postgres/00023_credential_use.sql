-- +goose Up

-- Credential use, address pins and the devices of audit entries: see
-- embed/migrations/00023_credential_use.sql.
CREATE TABLE role_credentials (
    role_id       BIGINT NOT NULL REFERENCES roles(id) ON DELETE CASCADE,
    credential_id BIGINT NOT NULL REFERENCES credentials(id) ON DELETE CASCADE,
    PRIMARY KEY (role_id, credential_id)
);
CREATE INDEX role_credentials_credential ON role_credentials(credential_id);

ALTER TABLE devices ADD COLUMN address_pin TEXT COLLATE "C";
UPDATE devices SET address_pin = login_method || '|' || host || '|' || port::text || '|' || zone_id::text
    WHERE credential_id IS NOT NULL;

CREATE TABLE audit_devices (
    audit_id  BIGINT NOT NULL REFERENCES audit_log(id) ON DELETE CASCADE,
    device_id BIGINT NOT NULL,
    PRIMARY KEY (audit_id, device_id)
);
INSERT INTO audit_devices (audit_id, device_id)
    SELECT id, target_id::bigint FROM audit_log
    WHERE target_type = 'device' AND target_id ~ '^[0-9]{1,18}$'
    ON CONFLICT DO NOTHING;
-- Details are JSON objects (encoding/json wrote them); CASE keeps the
-- cast from anything else.
INSERT INTO audit_devices (audit_id, device_id)
    SELECT id, (d ->> 'device_id')::bigint
    FROM (SELECT id, CASE WHEN details LIKE '{%}' THEN details::jsonb END AS d FROM audit_log) a
    WHERE jsonb_typeof(d -> 'device_id') = 'number' AND (d ->> 'device_id') ~ '^[0-9]{1,18}$'
    ON CONFLICT DO NOTHING;
INSERT INTO audit_devices (audit_id, device_id)
    SELECT a.id, j.value::bigint
    FROM (SELECT id, CASE WHEN details LIKE '{%}' THEN details::jsonb END AS d FROM audit_log) a,
        jsonb_array_elements_text(CASE WHEN jsonb_typeof(a.d -> 'device_ids') = 'array' THEN a.d -> 'device_ids' ELSE '[]'::jsonb END) j(value)
    WHERE j.value ~ '^[0-9]{1,18}$'
    ON CONFLICT DO NOTHING;

-- +goose Down
DROP TABLE audit_devices;
ALTER TABLE devices DROP COLUMN address_pin;
DROP INDEX role_credentials_credential;
DROP TABLE role_credentials;
