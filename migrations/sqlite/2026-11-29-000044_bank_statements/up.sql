-- Mirror of migrations/postgres/2026-11-29-000044_bank_statements in SQLite's terms.
-- Bank statements and the transactions they list, each kept once per team by its key (the
-- bank's reference on the account, or account, day, amount, text and occurrence), and the
-- payments a transaction made through the ledger.
CREATE TABLE bank_statements (
    team_id         TEXT        NOT NULL REFERENCES teams (id),
    id              TEXT        NOT NULL,
    format          TEXT        NOT NULL CHECK (format IN ('camt.053', 'camt.054', 'mt940', 'csv')),
    account         TEXT,
    currency        TEXT        NOT NULL CHECK (length(currency) = 3),
    opening_balance TEXT,
    closing_balance TEXT,
    from_day        TEXT,
    to_day          TEXT,
    entries         INTEGER     NOT NULL CHECK (entries >= 0),
    duplicates      INTEGER     NOT NULL CHECK (duplicates >= 0),
    matched         INTEGER     NOT NULL DEFAULT 0,
    suggested       INTEGER     NOT NULL DEFAULT 0,
    imported_at     TEXT        NOT NULL,
    PRIMARY KEY (team_id, id)
) STRICT;

CREATE TABLE bank_transactions (
    team_id              TEXT        NOT NULL,
    id                   TEXT        NOT NULL,
    statement_id         TEXT        NOT NULL,
    entry_key            TEXT        NOT NULL CHECK (length(entry_key) = 64),
    account              TEXT,
    booked_on            TEXT        NOT NULL,
    value_on             TEXT,
    amount               TEXT        NOT NULL,
    currency             TEXT        NOT NULL CHECK (length(currency) = 3),
    counterparty_name    TEXT,
    counterparty_iban    TEXT,
    remittance           TEXT        NOT NULL,
    reference            TEXT,
    bank_reference       TEXT,
    status               TEXT        NOT NULL CHECK (status IN ('unmatched', 'suggested', 'matched', 'ignored')),
    suggested_invoice_id TEXT,
    credited             TEXT        NOT NULL DEFAULT '0' CHECK (CAST(credited AS REAL) >= 0),
    credited_client_id   TEXT,
    created_at           TEXT        NOT NULL,
    PRIMARY KEY (team_id, id),
    UNIQUE (team_id, entry_key),
    -- A suggestion names an invoice without holding it: a deleted one is no longer booked.
    FOREIGN KEY (team_id, statement_id) REFERENCES bank_statements (team_id, id),
    CHECK ((status = 'ignored') = (CAST(amount AS REAL) <= 0))
) STRICT;
CREATE INDEX bank_transactions_listing ON bank_transactions (team_id, booked_on DESC, id DESC);
CREATE INDEX bank_transactions_open ON bank_transactions (team_id, status) WHERE status IN ('unmatched', 'suggested');

CREATE TABLE bank_payments (
    team_id        TEXT    NOT NULL,
    transaction_id TEXT    NOT NULL,
    entry_id       TEXT    NOT NULL,
    invoice_id     TEXT    NOT NULL,
    amount         TEXT    NOT NULL CHECK (CAST(amount AS REAL) > 0),
    PRIMARY KEY (team_id, entry_id),
    FOREIGN KEY (team_id, transaction_id) REFERENCES bank_transactions (team_id, id),
    FOREIGN KEY (team_id, entry_id) REFERENCES ledger_entries (team_id, id)
) STRICT;
CREATE INDEX bank_payments_of_transaction ON bank_payments (team_id, transaction_id);

CREATE TABLE bank_csv_mappings (
    team_id    TEXT        NOT NULL PRIMARY KEY REFERENCES teams (id),
    mapping    TEXT        NOT NULL,
    updated_at TEXT        NOT NULL
) STRICT;
