-- Mirror of migrations/postgres/2026-11-20-000001_foundation in SQLite's terms: STRICT
-- tables, UUIDs as lowercase TEXT, timestamps as RFC 3339 TEXT in UTC, hashes as BLOB.

CREATE TABLE teams (
    id          TEXT NOT NULL PRIMARY KEY CHECK (length(id) = 36),
    name        TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
    currency    TEXT NOT NULL CHECK (length(currency) = 3 AND currency = upper(currency)),
    created_at  TEXT NOT NULL
) STRICT;

CREATE TABLE users (
    team_id     TEXT NOT NULL REFERENCES teams (id),
    id          TEXT NOT NULL CHECK (length(id) = 36),
    email       TEXT NOT NULL CHECK (length(email) BETWEEN 3 AND 254),
    email_key   TEXT NOT NULL,
    name        TEXT NOT NULL CHECK (length(name) <= 255),
    role        TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
    created_at  TEXT NOT NULL,
    PRIMARY KEY (team_id, id),
    UNIQUE (team_id, email_key)
) STRICT;

CREATE TABLE api_keys (
    team_id      TEXT NOT NULL,
    id           TEXT NOT NULL CHECK (length(id) = 36),
    user_id      TEXT NOT NULL,
    key_hash     BLOB NOT NULL UNIQUE CHECK (length(key_hash) = 32),
    prefix       TEXT NOT NULL,
    scope        TEXT NOT NULL CHECK (scope IN ('read-only', 'write', 'restricted')),
    permissions  TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    expires_at   TEXT,
    revoked_at   TEXT,
    last_used_at TEXT,
    PRIMARY KEY (team_id, id),
    FOREIGN KEY (team_id, user_id) REFERENCES users (team_id, id),
    CHECK ((scope = 'restricted') = (permissions <> ''))
) STRICT;
CREATE INDEX api_keys_id ON api_keys (id);

CREATE TABLE clients (
    team_id     TEXT NOT NULL REFERENCES teams (id),
    id          TEXT NOT NULL CHECK (length(id) = 36),
    name        TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
    email       TEXT NOT NULL CHECK (length(email) BETWEEN 3 AND 254),
    phone       TEXT NOT NULL CHECK (length(phone) <= 255),
    vat_number  TEXT NOT NULL CHECK (length(vat_number) <= 255),
    line1       TEXT NOT NULL CHECK (length(line1) BETWEEN 1 AND 255),
    line2       TEXT NOT NULL CHECK (length(line2) <= 255),
    line3       TEXT NOT NULL CHECK (length(line3) <= 255),
    postal_code TEXT NOT NULL CHECK (length(postal_code) BETWEEN 1 AND 32),
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    PRIMARY KEY (team_id, id)
) STRICT;
