-- A team's account with a card processor (Stripe): the secret key billable calls it with,
-- the secret it signs webhook deliveries with (both write-only through the API), and the
-- SHA-256 of the token in the webhook address registered at it, which finds the team.
CREATE TABLE card_accounts (
    team_id            uuid        NOT NULL REFERENCES teams (id),
    processor          text        NOT NULL CHECK (processor IN ('stripe')),
    secret_key         text        NOT NULL,
    webhook_secret     text        NOT NULL,
    webhook_token_hash bytea       NOT NULL CHECK (length(webhook_token_hash) = 32),
    created_at         timestamptz NOT NULL,
    updated_at         timestamptz NOT NULL,
    PRIMARY KEY (team_id, processor)
);
CREATE UNIQUE INDEX card_accounts_token ON card_accounts (webhook_token_hash);

-- Every payment and refund a processor reported, booked once: its key is the processor's
-- reference, so a retried or twice-delivered report finds its row and books nothing.
CREATE TABLE card_receipts (
    team_id   uuid        NOT NULL,
    processor text        NOT NULL CHECK (processor IN ('stripe')),
    reference text        NOT NULL CHECK (length(reference) BETWEEN 1 AND 200),
    kind      text        NOT NULL CHECK (kind IN ('payment', 'refund')),
    -- A refund's payment; a payment's own reference.
    payment   text        NOT NULL,
    invoice_id uuid       NOT NULL,
    client_id uuid        NOT NULL,
    currency  text        NOT NULL,
    amount    numeric     NOT NULL CHECK (amount > 0),
    -- What went on the invoice's books, and to (or, for a refund, from) the client's credit.
    booked    numeric     NOT NULL CHECK (booked >= 0),
    credited  numeric     NOT NULL CHECK (credited >= 0),
    created_at timestamptz NOT NULL,
    PRIMARY KEY (team_id, processor, reference),
    FOREIGN KEY (team_id, invoice_id) REFERENCES invoices (team_id, id)
);
CREATE INDEX card_receipts_payment ON card_receipts (team_id, processor, payment);

-- What each client paid beyond what was due, per currency, until it is applied to an
-- invoice or refunded.
CREATE TABLE client_credits (
    team_id    uuid        NOT NULL,
    client_id  uuid        NOT NULL,
    currency   text        NOT NULL CHECK (length(currency) = 3),
    balance    numeric     NOT NULL CHECK (balance >= 0),
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (team_id, client_id, currency),
    FOREIGN KEY (team_id, client_id) REFERENCES clients (team_id, id)
);
