-- Bank statements and the transactions they list, each kept once per team by its key (the
-- bank's reference on the account, or account, day, amount, text and occurrence), and the
-- payments a transaction made through the ledger.
CREATE TABLE bank_statements (
    team_id         uuid        NOT NULL REFERENCES teams (id),
    id              uuid        NOT NULL,
    format          text        NOT NULL CHECK (format IN ('camt.053', 'camt.054', 'mt940', 'csv')),
    account         text,
    currency        text        NOT NULL CHECK (length(currency) = 3),
    opening_balance numeric,
    closing_balance numeric,
    from_day        date,
    to_day          date,
    entries         integer     NOT NULL CHECK (entries >= 0),
    duplicates      integer     NOT NULL CHECK (duplicates >= 0),
    matched         integer     NOT NULL DEFAULT 0,
    suggested       integer     NOT NULL DEFAULT 0,
    imported_at     timestamptz NOT NULL,
    PRIMARY KEY (team_id, id)
);

CREATE TABLE bank_transactions (
    team_id              uuid        NOT NULL,
    id                   uuid        NOT NULL,
    statement_id         uuid        NOT NULL,
    entry_key            text        NOT NULL CHECK (length(entry_key) = 64),
    account              text,
    booked_on            date        NOT NULL,
    value_on             date,
    amount               numeric     NOT NULL,
    currency             text        NOT NULL CHECK (length(currency) = 3),
    counterparty_name    text,
    counterparty_iban    text,
    remittance           text        NOT NULL,
    reference            text,
    bank_reference       text,
    status               text        NOT NULL CHECK (status IN ('unmatched', 'suggested', 'matched', 'ignored')),
    suggested_invoice_id uuid,
    credited             numeric     NOT NULL DEFAULT 0 CHECK (credited >= 0),
    credited_client_id   uuid,
    created_at           timestamptz NOT NULL,
    PRIMARY KEY (team_id, id),
    UNIQUE (team_id, entry_key),
    -- A suggestion names an invoice without holding it: a deleted one is no longer booked.
    FOREIGN KEY (team_id, statement_id) REFERENCES bank_statements (team_id, id),
    CHECK ((status = 'ignored') = (amount <= 0))
);
CREATE INDEX bank_transactions_listing ON bank_transactions (team_id, booked_on DESC, id DESC);
CREATE INDEX bank_transactions_open ON bank_transactions (team_id, status) WHERE status IN ('unmatched', 'suggested');

CREATE TABLE bank_payments (
    team_id        uuid    NOT NULL,
    transaction_id uuid    NOT NULL,
    entry_id       uuid    NOT NULL,
    invoice_id     uuid    NOT NULL,
    amount         numeric NOT NULL CHECK (amount > 0),
    PRIMARY KEY (team_id, entry_id),
    FOREIGN KEY (team_id, transaction_id) REFERENCES bank_transactions (team_id, id),
    FOREIGN KEY (team_id, entry_id) REFERENCES ledger_entries (team_id, id)
);
CREATE INDEX bank_payments_of_transaction ON bank_payments (team_id, transaction_id);

CREATE TABLE bank_csv_mappings (
    team_id    uuid        NOT NULL PRIMARY KEY REFERENCES teams (id),
    mapping    text        NOT NULL,
    updated_at timestamptz NOT NULL
);
