-- Idempotency keys: per team and key, the request that claimed it (by fingerprint) and,
-- once it was answered, the answer a retry gets back. An unanswered key is held until
-- lease_until (a process that died mid-request frees it then); every key is forgotten at
-- expires_at.
CREATE TABLE idempotency_keys (
    team_id      uuid        NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    key          text        NOT NULL CHECK (octet_length(key) BETWEEN 1 AND 255),
    fingerprint  bytea       NOT NULL,
    claimed_at   timestamptz NOT NULL,
    lease_until  timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    status       integer,
    headers      text,
    body         bytea,
    PRIMARY KEY (team_id, key),
    CHECK ((status IS NULL) = (body IS NULL))
);
-- The hourly purge.
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
