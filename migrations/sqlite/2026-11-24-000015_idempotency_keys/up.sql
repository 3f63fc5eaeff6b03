-- Mirror of migrations/postgres/2026-11-24-000015_idempotency_keys in SQLite's terms.
CREATE TABLE idempotency_keys (
    team_id      TEXT    NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    key          TEXT    NOT NULL CHECK (length(CAST(key AS BLOB)) BETWEEN 1 AND 255),
    fingerprint  BLOB    NOT NULL,
    claimed_at   TEXT    NOT NULL,
    lease_until  TEXT    NOT NULL,
    expires_at   TEXT    NOT NULL,
    status       INTEGER,
    headers      TEXT,
    body         BLOB,
    PRIMARY KEY (team_id, key),
    CHECK ((status IS NULL) = (body IS NULL))
) STRICT;
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
