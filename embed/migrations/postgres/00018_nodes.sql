-- +goose Up

-- The backupd nodes serving this store: see embed/migrations/00018_nodes.sql.
CREATE TABLE nodes (
    id           TEXT COLLATE "C" PRIMARY KEY,
    hostname     TEXT COLLATE "C" NOT NULL,
    version      TEXT COLLATE "C" NOT NULL,
    started_at   TEXT COLLATE "C" NOT NULL,
    heartbeat_at TEXT COLLATE "C" NOT NULL,
    leader       BIGINT NOT NULL DEFAULT 0,
    leader_since TEXT COLLATE "C",
    stopped_at   TEXT COLLATE "C"
);

-- +goose Down
DROP TABLE nodes;
