-- Mirror of migrations/postgres/2026-11-28-000041_card_payments in SQLite's terms.
CREATE TABLE card_accounts (
    team_id            TEXT NOT NULL REFERENCES teams (id),
    processor          TEXT NOT NULL CHECK (processor IN ('stripe')),
    secret_key         TEXT NOT NULL,
    webhook_secret     TEXT NOT NULL,
    webhook_token_hash BLOB NOT NULL CHECK (length(webhook_token_hash) = 32),
    created_at         TEXT NOT NULL,
    updated_at         TEXT NOT NULL,
    PRIMARY KEY (team_id, processor)
) STRICT;
CREATE UNIQUE INDEX card_accounts_token ON card_accounts (webhook_token_hash);

CREATE TABLE card_receipts (
    team_id    TEXT NOT NULL,
    processor  TEXT NOT NULL CHECK (processor IN ('stripe')),
    reference  TEXT NOT NULL CHECK (length(reference) BETWEEN 1 AND 200),
    kind       TEXT NOT NULL CHECK (kind IN ('payment', 'refund')),
    payment    TEXT NOT NULL,
    invoice_id TEXT NOT NULL,
    client_id  TEXT NOT NULL,
    currency   TEXT NOT NULL,
    amount     TEXT NOT NULL CHECK (CAST(amount AS REAL) > 0),
    booked     TEXT NOT NULL CHECK (CAST(booked AS REAL) >= 0),
    credited   TEXT NOT NULL CHECK (CAST(credited AS REAL) >= 0),
    created_at TEXT NOT NULL,
    PRIMARY KEY (team_id, processor, reference),
    FOREIGN KEY (team_id, invoice_id) REFERENCES invoices (team_id, id)
) STRICT;
CREATE INDEX card_receipts_payment ON card_receipts (team_id, processor, payment);

CREATE TABLE client_credits (
    team_id    TEXT NOT NULL,
    client_id  TEXT NOT NULL,
    currency   TEXT NOT NULL CHECK (length(currency) = 3),
    balance    TEXT NOT NULL CHECK (CAST(balance AS REAL) >= 0),
    updated_at TEXT NOT NULL,
    PRIMARY KEY (team_id, client_id, currency),
    FOREIGN KEY (team_id, client_id) REFERENCES clients (team_id, id)
) STRICT;
