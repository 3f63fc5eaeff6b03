-- Teams, users, API keys and clients. Every tenant table leads its primary key with
-- team_id so that the schema can later be distributed by team.

CREATE TABLE teams (
    id          uuid        PRIMARY KEY,
    name        text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 255),
    currency    text        NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    created_at  timestamptz NOT NULL
);

CREATE TABLE users (
    team_id     uuid        NOT NULL REFERENCES teams (id),
    id          uuid        NOT NULL,
    email       text        NOT NULL CHECK (char_length(email) BETWEEN 3 AND 254),
    -- email lowercased by the application: uniqueness is case-insensitive everywhere.
    email_key   text        NOT NULL,
    name        text        NOT NULL CHECK (char_length(name) <= 255),
    role        text        NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
    created_at  timestamptz NOT NULL,
    PRIMARY KEY (team_id, id),
    UNIQUE (team_id, email_key)
);

CREATE TABLE api_keys (
    team_id      uuid        NOT NULL,
    id           uuid        NOT NULL,
    user_id      uuid        NOT NULL,
    -- SHA-256 of the key text; the key itself is never stored.
    key_hash     bytea       NOT NULL UNIQUE CHECK (octet_length(key_hash) = 32),
    prefix       text        NOT NULL,
    scope        text        NOT NULL CHECK (scope IN ('read-only', 'write', 'restricted')),
    -- space-separated permissions of a restricted scope; empty otherwise.
    permissions  text        NOT NULL,
    created_at   timestamptz NOT NULL,
    expires_at   timestamptz,
    revoked_at   timestamptz,
    last_used_at timestamptz,
    PRIMARY KEY (team_id, id),
    -- The composite key makes "the user belongs to the key's team" a storage rule.
    FOREIGN KEY (team_id, user_id) REFERENCES users (team_id, id),
    CHECK ((scope = 'restricted') = (permissions <> ''))
);
-- Operators revoke keys by id alone.
CREATE INDEX api_keys_id ON api_keys (id);

CREATE TABLE clients (
    team_id     uuid        NOT NULL REFERENCES teams (id),
    id          uuid        NOT NULL,
    name        text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 255),
    email       text        NOT NULL CHECK (char_length(email) BETWEEN 3 AND 254),
    phone       text        NOT NULL CHECK (char_length(phone) <= 255),
    vat_number  text        NOT NULL CHECK (char_length(vat_number) <= 255),
    line1       text        NOT NULL CHECK (char_length(line1) BETWEEN 1 AND 255),
    line2       text        NOT NULL CHECK (char_length(line2) <= 255),
    line3       text        NOT NULL CHECK (char_length(line3) <= 255),
    postal_code text        NOT NULL CHECK (char_length(postal_code) BETWEEN 1 AND 32),
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    PRIMARY KEY (team_id, id)
);
