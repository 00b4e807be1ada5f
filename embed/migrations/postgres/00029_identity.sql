-- +goose Up

-- Where a user's identity lives. source is 'local' (a password kept
-- here), 'ldap' (the directory checks the password) or 'oidc' (an
-- OpenID Connect provider signs the user in); directory and provider
-- users have no local password (password_hash ''). external_id names the
-- user at its source: the LDAP entry's DN, or the provider's issuer and
-- subject ("ISSUER SUBJECT"). synced_at is when the source last vouched
-- for the user (sign-in or directory sync). source_disabled marks a user
-- its source stopped vouching for (the sync disabled it): signing in
-- again through the source makes it active again, while a user an
-- administrator disabled stays disabled.
ALTER TABLE users ADD COLUMN source TEXT COLLATE "C" NOT NULL DEFAULT 'local';
ALTER TABLE users ADD COLUMN external_id TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE users ADD COLUMN source_disabled BIGINT NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN synced_at TEXT COLLATE "C";

-- A local user's second factor (RFC 6238 TOTP): the shared secret,
-- sealed (app/secret), and when it was confirmed; NULL when the user has
-- none. totp_last_step is the last time step a code was accepted for, so
-- that a code is good once. totp_failures counts wrong codes since the
-- last right one; totp_locked_until refuses codes unchecked until then.
ALTER TABLE users ADD COLUMN totp_secret BYTEA;
ALTER TABLE users ADD COLUMN totp_enabled_at TEXT COLLATE "C";
ALTER TABLE users ADD COLUMN totp_last_step BIGINT NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN totp_failures BIGINT NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN totp_locked_until TEXT COLLATE "C";

-- One-time recovery codes of a user's second factor, stored hashed.
CREATE TABLE user_recovery_codes (
    user_id   BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    code_hash TEXT COLLATE "C" NOT NULL,
    used_at   TEXT COLLATE "C",
    PRIMARY KEY (user_id, code_hash)
);

-- A role whose holders (local accounts) must use a second factor.
ALTER TABLE roles ADD COLUMN require_2fa BIGINT NOT NULL DEFAULT 0;

-- How a session was signed in ('password', 'ldap', 'oidc'); pending is
-- the step still owed before the session may do anything ('' none,
-- 'totp' a code, 'enroll' setting up the second factor its roles
-- require); idp_token is the provider's ID token, sealed, to end the
-- provider's session at sign-out.
ALTER TABLE web_sessions ADD COLUMN method TEXT COLLATE "C" NOT NULL DEFAULT 'password';
ALTER TABLE web_sessions ADD COLUMN pending TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE web_sessions ADD COLUMN idp_token BYTEA;

-- OpenID Connect sign-ins under way: the state's SHA-256 (the state
-- itself is only in the browser's cookie and the provider's redirect),
-- the nonce the ID token must carry, the PKCE verifier and the page to
-- land on. A row is deleted when its callback comes, so a state is good
-- once; rows older than a few minutes are refused and pruned.
CREATE TABLE oidc_logins (
    state_hash TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    nonce      TEXT COLLATE "C" NOT NULL,
    verifier   TEXT COLLATE "C" NOT NULL,
    next       TEXT COLLATE "C" NOT NULL DEFAULT '',
    created_at TEXT COLLATE "C" NOT NULL
);

-- +goose Down
DROP TABLE oidc_logins;
ALTER TABLE web_sessions DROP COLUMN idp_token;
ALTER TABLE web_sessions DROP COLUMN pending;
ALTER TABLE web_sessions DROP COLUMN method;
ALTER TABLE roles DROP COLUMN require_2fa;
DROP TABLE user_recovery_codes;
ALTER TABLE users DROP COLUMN totp_locked_until;
ALTER TABLE users DROP COLUMN totp_failures;
ALTER TABLE users DROP COLUMN totp_last_step;
ALTER TABLE users DROP COLUMN totp_enabled_at;
ALTER TABLE users DROP COLUMN totp_secret;
ALTER TABLE users DROP COLUMN synced_at;
ALTER TABLE users DROP COLUMN source_disabled;
ALTER TABLE users DROP COLUMN external_id;
ALTER TABLE users DROP COLUMN source;
