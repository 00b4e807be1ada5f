-- +goose Up

-- Notifications: where to send (channels), what and for which devices
-- (rules), what happened (outbox) and what was sent where (deliveries).
-- Ids are never reused (AUTOINCREMENT, as 00012 made every table): a
-- delivery id is what a receiver sees and may deduplicate on.

-- A channel is one destination. config holds its non-secret settings as a
-- JSON object; secret the sealed bytes of its secret (webhook signing key,
-- SMTP password, token), sealed by app/secret like device passwords: the
-- store never sees the plain secret.
CREATE TABLE notification_channels (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    name       TEXT    NOT NULL UNIQUE COLLATE NOCASE,
    type       TEXT    NOT NULL CHECK (type IN ('webhook', 'slack', 'mattermost', 'teams', 'chat', 'email')),
    enabled    INTEGER NOT NULL DEFAULT 1,
    config     TEXT    NOT NULL DEFAULT '{}',
    secret     BLOB,
    language   TEXT    NOT NULL DEFAULT 'en' CHECK (language IN ('en', 'zh')),
    created_at TEXT    NOT NULL,
    updated_at TEXT    NOT NULL
);

-- A rule sends the events it names, of the devices in its scope, to its
-- channels. scope: all devices; groups (the listed groups and their
-- subgroups); devices (the listed devices). failure_threshold is how many
-- failures (or failed reachability checks) in a row make backup.failed
-- (device.unreachable).
CREATE TABLE notification_rules (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    name              TEXT    NOT NULL UNIQUE COLLATE NOCASE,
    enabled           INTEGER NOT NULL DEFAULT 1,
    scope             TEXT    NOT NULL CHECK (scope IN ('all', 'groups', 'devices')),
    include_diff      INTEGER NOT NULL DEFAULT 1,
    failure_threshold INTEGER NOT NULL DEFAULT 1 CHECK (failure_threshold BETWEEN 1 AND 1000),
    created_at        TEXT    NOT NULL,
    updated_at        TEXT    NOT NULL
);

CREATE TABLE notification_rule_events (
    rule_id INTEGER NOT NULL REFERENCES notification_rules(id) ON DELETE CASCADE,
    event   TEXT    NOT NULL,
    PRIMARY KEY (rule_id, event)
) WITHOUT ROWID;
-- Recording an event looks its rules up by kind.
CREATE INDEX notification_rule_events_event ON notification_rule_events(event, rule_id);

CREATE TABLE notification_rule_channels (
    rule_id    INTEGER NOT NULL REFERENCES notification_rules(id) ON DELETE CASCADE,
    channel_id INTEGER NOT NULL REFERENCES notification_channels(id) ON DELETE CASCADE,
    PRIMARY KEY (rule_id, channel_id)
) WITHOUT ROWID;
CREATE INDEX notification_rule_channels_channel ON notification_rule_channels(channel_id);

CREATE TABLE notification_rule_groups (
    rule_id  INTEGER NOT NULL REFERENCES notification_rules(id) ON DELETE CASCADE,
    group_id INTEGER NOT NULL REFERENCES device_groups(id) ON DELETE CASCADE,
    PRIMARY KEY (rule_id, group_id)
) WITHOUT ROWID;
CREATE INDEX notification_rule_groups_group ON notification_rule_groups(group_id);

CREATE TABLE notification_rule_devices (
    rule_id   INTEGER NOT NULL REFERENCES notification_rules(id) ON DELETE CASCADE,
    device_id INTEGER NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
    PRIMARY KEY (rule_id, device_id)
) WITHOUT ROWID;
CREATE INDEX notification_rule_devices_device ON notification_rule_devices(device_id);

-- One row per event some rule wanted, written in the transaction of the
-- backup result (or check) that caused it. payload is the event's facts as
-- JSON (device, trigger, backup ids, failure stage and reason, count):
-- never a secret, never configuration text (a diff is rendered when sent,
-- from the two backups). device_id is no reference: the event outlives
-- its device, and payload names it.
CREATE TABLE outbox (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    kind       TEXT    NOT NULL,
    device_id  INTEGER NOT NULL,
    created_at TEXT    NOT NULL,
    payload    TEXT    NOT NULL
);
CREATE INDEX outbox_created ON outbox(created_at);

-- One event to one channel. UNIQUE(outbox_id, channel_id) makes one event
-- reach one channel once; a sent row is never claimed again. state:
-- pending (not tried yet), sending (leased by owner until lease_until),
-- failed (waiting for next_attempt_at), sent, gave_up.
CREATE TABLE deliveries (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    outbox_id       INTEGER NOT NULL REFERENCES outbox(id) ON DELETE CASCADE,
    channel_id      INTEGER NOT NULL REFERENCES notification_channels(id) ON DELETE CASCADE,
    include_diff    INTEGER NOT NULL DEFAULT 0,
    state           TEXT    NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sending', 'failed', 'sent', 'gave_up')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT    NOT NULL,
    owner           TEXT,
    lease_until     TEXT,
    last_status     TEXT,
    last_error      TEXT,
    sent_at         TEXT,
    created_at      TEXT    NOT NULL,
    updated_at      TEXT    NOT NULL,
    UNIQUE (outbox_id, channel_id)
);
-- The worker's queue, its leases, and the per-channel log.
CREATE INDEX deliveries_due ON deliveries(next_attempt_at, id) WHERE state IN ('pending', 'failed');
CREATE INDEX deliveries_leased ON deliveries(lease_until) WHERE state = 'sending';
CREATE INDEX deliveries_owner ON deliveries(owner) WHERE state = 'sending';
CREATE INDEX deliveries_channel ON deliveries(channel_id, id);
CREATE INDEX deliveries_done ON deliveries(updated_at) WHERE state IN ('sent', 'gave_up');

-- What the hysteresis remembers per device: failed backups and failed
-- reachability checks in a row, and the stale period already told (the
-- last good backup time, or creation time, it was about). A changed host
-- key needs no row: it is told when the pending key changes.
CREATE TABLE notification_device_state (
    device_id            INTEGER PRIMARY KEY REFERENCES devices(id) ON DELETE CASCADE,
    consecutive_failures INTEGER NOT NULL DEFAULT 0,
    unreachable_count    INTEGER NOT NULL DEFAULT 0,
    stale_notified_for   TEXT
);

-- +goose Down
DROP TABLE notification_device_state;
DROP TABLE deliveries;
DROP TABLE outbox;
DROP TABLE notification_rule_devices;
DROP TABLE notification_rule_groups;
DROP TABLE notification_rule_channels;
DROP TABLE notification_rule_events;
DROP TABLE notification_rules;
DROP TABLE notification_channels;
