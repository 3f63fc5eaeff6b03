-- Mirror of migrations/postgres/2026-11-21-000004_agent in SQLite's terms. Timestamps
-- are RFC 3339 TEXT in UTC, written in one format, so they compare and sort as text.

CREATE TABLE agent_messages (
    team_id           TEXT    NOT NULL REFERENCES teams (id),
    conversation_key  TEXT    NOT NULL CHECK (length(conversation_key) BETWEEN 1 AND 400),
    position          INTEGER NOT NULL CHECK (position >= 1),
    role              TEXT    NOT NULL CHECK (role IN ('user', 'assistant')),
    content           TEXT    NOT NULL,
    created_at        TEXT    NOT NULL,
    PRIMARY KEY (team_id, conversation_key, position)
) STRICT;

CREATE TABLE agent_runs (
    team_id           TEXT    NOT NULL REFERENCES teams (id),
    id                TEXT    NOT NULL CHECK (length(id) = 36),
    trigger           TEXT    NOT NULL CHECK (trigger IN ('webhook', 'github')),
    conversation_key  TEXT    CHECK (length(conversation_key) BETWEEN 1 AND 400),
    input_excerpt     TEXT    NOT NULL,
    status            TEXT    NOT NULL CHECK (status IN ('ok', 'rejected', 'failed', 'timeout')),
    steps             INTEGER NOT NULL CHECK (steps >= 0),
    input_tokens      INTEGER NOT NULL CHECK (input_tokens >= 0),
    output_tokens     INTEGER NOT NULL CHECK (output_tokens >= 0),
    started_at        TEXT    NOT NULL,
    finished_at       TEXT    NOT NULL CHECK (finished_at >= started_at),
    error             TEXT,
    PRIMARY KEY (team_id, id)
) STRICT;

CREATE INDEX agent_runs_newest ON agent_runs (team_id, started_at DESC, id DESC);
CREATE INDEX agent_runs_of_conversation
    ON agent_runs (team_id, conversation_key, started_at DESC, id DESC)
    WHERE conversation_key IS NOT NULL;
