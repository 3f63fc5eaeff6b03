-- The repository trigger: the log of verified deliveries, which is also the durable queue
-- of the accepted ones, and the dedupe records that keep a delivery from running twice.

-- One row per verified delivery. Accepted rows carry the run's input and its progress
-- (state, attempts, the last run); ignored and duplicate rows only the verdict.
CREATE TABLE agent_deliveries (
    team_id           uuid        NOT NULL REFERENCES teams (id),
    id                uuid        NOT NULL,
    delivery_id       text        NOT NULL CHECK (char_length(delivery_id) BETWEEN 1 AND 100),
    event             text        NOT NULL CHECK (char_length(event) BETWEEN 1 AND 100),
    action            text        CHECK (char_length(action) <= 100),
    repository        text        CHECK (char_length(repository) <= 300),
    conversation_key  text        CHECK (char_length(conversation_key) BETWEEN 1 AND 400),
    verdict           text        NOT NULL CHECK (verdict IN ('accepted', 'ignored', 'duplicate')),
    note              text,
    body_sha256       text        NOT NULL CHECK (char_length(body_sha256) = 64),
    received_at       timestamptz NOT NULL,
    input             text,
    state             text        CHECK (state IN ('queued', 'running', 'done', 'failed')),
    attempts          integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    next_attempt_at   timestamptz,
    run_id            uuid,
    error             text,
    finished_at       timestamptz,
    PRIMARY KEY (team_id, id),
    -- Accepted deliveries, and only they, are queued with an input.
    CHECK ((verdict = 'accepted') = (state IS NOT NULL AND input IS NOT NULL AND next_attempt_at IS NOT NULL))
);

CREATE INDEX agent_deliveries_newest ON agent_deliveries (team_id, received_at DESC, id DESC);
-- The worker's view: what is still to run.
CREATE INDEX agent_deliveries_pending ON agent_deliveries (team_id, id)
    WHERE state IN ('queued', 'running');

-- The delivery id and body hash of each accepted delivery, for the dedupe window. Either
-- seen again means the same delivery; the unique keys settle a race between two copies.
CREATE TABLE agent_delivery_dedupe (
    team_id      uuid        NOT NULL REFERENCES teams (id),
    delivery_id  text        NOT NULL,
    body_sha256  text        NOT NULL,
    accepted_at  timestamptz NOT NULL,
    PRIMARY KEY (team_id, delivery_id),
    UNIQUE (team_id, body_sha256)
);

CREATE INDEX agent_delivery_dedupe_age ON agent_delivery_dedupe (team_id, accepted_at);
