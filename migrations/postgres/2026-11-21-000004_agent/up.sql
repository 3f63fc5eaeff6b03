-- The agent runtime: conversation memory and run history.

-- A conversation's messages, numbered from 1 in the order they were said. Runs of one
-- conversation are serialised by the runtime; the primary key makes a race between two
-- processes fail loudly instead of interleaving.
CREATE TABLE agent_messages (
    team_id           uuid        NOT NULL REFERENCES teams (id),
    conversation_key  text        NOT NULL CHECK (char_length(conversation_key) BETWEEN 1 AND 400),
    position          bigint      NOT NULL CHECK (position >= 1),
    role              text        NOT NULL CHECK (role IN ('user', 'assistant')),
    content           text        NOT NULL,
    created_at        timestamptz NOT NULL,
    PRIMARY KEY (team_id, conversation_key, position)
);

-- One row per run, written when the run ends (rejected requests included).
CREATE TABLE agent_runs (
    team_id           uuid        NOT NULL REFERENCES teams (id),
    id                uuid        NOT NULL,
    trigger           text        NOT NULL CHECK (trigger IN ('webhook', 'github')),
    conversation_key  text        CHECK (char_length(conversation_key) BETWEEN 1 AND 400),
    input_excerpt     text        NOT NULL,
    status            text        NOT NULL CHECK (status IN ('ok', 'rejected', 'failed', 'timeout')),
    steps             integer     NOT NULL CHECK (steps >= 0),
    input_tokens      bigint      NOT NULL CHECK (input_tokens >= 0),
    output_tokens     bigint      NOT NULL CHECK (output_tokens >= 0),
    started_at        timestamptz NOT NULL,
    finished_at       timestamptz NOT NULL CHECK (finished_at >= started_at),
    error             text,
    PRIMARY KEY (team_id, id)
);

CREATE INDEX agent_runs_newest ON agent_runs (team_id, started_at DESC, id DESC);
CREATE INDEX agent_runs_of_conversation
    ON agent_runs (team_id, conversation_key, started_at DESC, id DESC)
    WHERE conversation_key IS NOT NULL;
