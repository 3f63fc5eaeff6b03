-- The agent runs on events too (the `events` trigger of its definition). SQLite cannot
-- change a CHECK constraint, so agent_runs is rebuilt with every column it has gained.
PRAGMA foreign_keys = OFF;
BEGIN;
CREATE TABLE agent_runs_rebuilt (
    team_id           TEXT    NOT NULL REFERENCES teams (id),
    id                TEXT    NOT NULL CHECK (length(id) = 36),
    trigger           TEXT    NOT NULL CHECK (trigger IN ('webhook', 'github', 'events')),
    conversation_key  TEXT    CHECK (length(conversation_key) BETWEEN 1 AND 400),
    input_excerpt     TEXT    NOT NULL,
    status            TEXT    NOT NULL CHECK (status IN ('ok', 'rejected', 'failed', 'timeout')),
    steps             INTEGER NOT NULL CHECK (steps >= 0),
    input_tokens      INTEGER NOT NULL CHECK (input_tokens >= 0),
    output_tokens     INTEGER NOT NULL CHECK (output_tokens >= 0),
    started_at        TEXT    NOT NULL,
    finished_at       TEXT    NOT NULL CHECK (finished_at >= started_at),
    error             TEXT,
    tool_calls        TEXT    NOT NULL DEFAULT '[]',
    model_input       TEXT,
    reply             TEXT,
    PRIMARY KEY (team_id, id)
) STRICT;
INSERT INTO agent_runs_rebuilt
    (team_id, id, trigger, conversation_key, input_excerpt, status, steps, input_tokens, output_tokens,
     started_at, finished_at, error, tool_calls, model_input, reply)
SELECT team_id, id, trigger, conversation_key, input_excerpt, status, steps, input_tokens, output_tokens,
       started_at, finished_at, error, tool_calls, model_input, reply
FROM agent_runs;
DROP TABLE agent_runs;
ALTER TABLE agent_runs_rebuilt RENAME TO agent_runs;
CREATE INDEX agent_runs_newest ON agent_runs (team_id, started_at DESC, id DESC);
CREATE INDEX agent_runs_of_conversation
    ON agent_runs (team_id, conversation_key, started_at DESC, id DESC)
    WHERE conversation_key IS NOT NULL;
COMMIT;
PRAGMA foreign_keys = ON;
