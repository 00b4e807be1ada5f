-- +goose Up

-- The backupd nodes serving this store (several on one PostgreSQL, one on
-- SQLite): each writes its row when it starts and every few seconds after
-- (heartbeat_at); leader is 1 on the node that runs the schedules and the
-- other fleet-wide work, since leader_since. A node that stopped keeps its
-- row (stopped_at set) until its heartbeat is a day old, then it is pruned.
CREATE TABLE nodes (
    id           TEXT    PRIMARY KEY,
    hostname     TEXT    NOT NULL,
    version      TEXT    NOT NULL,
    started_at   TEXT    NOT NULL,
    heartbeat_at TEXT    NOT NULL,
    leader       INTEGER NOT NULL DEFAULT 0,
    leader_since TEXT,
    stopped_at   TEXT
);

-- +goose Down
DROP TABLE nodes;
