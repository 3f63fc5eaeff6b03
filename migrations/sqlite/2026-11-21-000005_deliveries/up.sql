-- Mirror of migrations/postgres/2026-11-21-000005_deliveries in SQLite's terms.

CREATE TABLE agent_deliveries (
    team_id           TEXT    NOT NULL REFERENCES teams (id),
    id                TEXT    NOT NULL CHECK (length(id) = 36),
    delivery_id       TEXT    NOT NULL CHECK (length(delivery_id) BETWEEN 1 AND 100),
    event             TEXT    NOT NULL CHECK (length(event) BETWEEN 1 AND 100),
    action            TEXT    CHECK (length(action) <= 100),
    repository        TEXT    CHECK (length(repository) <= 300),
    conversation_key  TEXT    CHECK (length(conversation_key) BETWEEN 1 AND 400),
    verdict           TEXT    NOT NULL CHECK (verdict IN ('accepted', 'ignored', 'duplicate')),
    note              TEXT,
    body_sha256       TEXT    NOT NULL CHECK (length(body_sha256) = 64),
    received_at       TEXT    NOT NULL,
    input             TEXT,
    state             TEXT    CHECK (state IN ('queued', 'running', 'done', 'failed')),
    attempts          INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    next_attempt_at   TEXT,
    run_id            TEXT    CHECK (length(run_id) = 36),
    error             TEXT,
    finished_at       TEXT,
    PRIMARY KEY (team_id, id),
    CHECK ((verdict = 'accepted') = (state IS NOT NULL AND input IS NOT NULL AND next_attempt_at IS NOT NULL))
) STRICT;

CREATE INDEX agent_deliveries_newest ON agent_deliveries (team_id, received_at DESC, id DESC);
CREATE INDEX agent_deliveries_pending ON agent_deliveries (team_id, id)
    WHERE state IN ('queued', 'running');

CREATE TABLE agent_delivery_dedupe (
    team_id      TEXT NOT NULL REFERENCES teams (id),
    delivery_id  TEXT NOT NULL,
    body_sha256  TEXT NOT NULL,
    accepted_at  TEXT NOT NULL,
    PRIMARY KEY (team_id, delivery_id),
    UNIQUE (team_id, body_sha256)
) STRICT;

CREATE INDEX agent_delivery_dedupe_age ON agent_delivery_dedupe (team_id, accepted_at);
