-- Invoices: sender addresses, per-team serial counters, invoices and their line items.
-- Money is `numeric` (exact); amounts are stored already rounded to the currency's minor
-- unit, unit prices and quantities as given.

CREATE TABLE sender_addresses (
    team_id     uuid        NOT NULL REFERENCES teams (id),
    id          uuid        NOT NULL,
    is_default  boolean     NOT NULL,
    name        text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 255),
    line1       text        NOT NULL CHECK (char_length(line1) <= 255),
    line2       text        NOT NULL CHECK (char_length(line2) <= 255),
    line3       text        NOT NULL CHECK (char_length(line3) <= 255),
    postal_code text        NOT NULL CHECK (char_length(postal_code) <= 32),
    email       text                 CHECK (char_length(email) BETWEEN 3 AND 254),
    vat_number  text        NOT NULL CHECK (char_length(vat_number) <= 255),
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    PRIMARY KEY (team_id, id)
);
-- A team has at most one default sender address.
CREATE UNIQUE INDEX sender_addresses_default ON sender_addresses (team_id) WHERE is_default;

-- The last serial given per team. Incremented inside the invoice's transaction: the row
-- lock orders concurrent creates, and a rolled-back create gives its number back.
CREATE TABLE invoice_serials (
    team_id     uuid    PRIMARY KEY REFERENCES teams (id),
    last_serial integer NOT NULL CHECK (last_serial > 0)
);

-- Inline clients on invoices are matched by email, case-insensitively.
ALTER TABLE clients ADD COLUMN email_key text NOT NULL DEFAULT '';
UPDATE clients SET email_key = lower(email);
ALTER TABLE clients ALTER COLUMN email_key DROP DEFAULT;
CREATE INDEX clients_email_key ON clients (team_id, email_key, created_at);

CREATE TABLE invoices (
    team_id        uuid        NOT NULL REFERENCES teams (id),
    id             uuid        NOT NULL,
    serial         integer     NOT NULL CHECK (serial > 0),
    description    text                 CHECK (char_length(description) <= 1000),
    issue_date     timestamptz NOT NULL,
    due_date       timestamptz          CHECK (due_date >= issue_date),
    status         text        NOT NULL CHECK (status IN ('PENDING', 'PAID', 'PAID_PARTIAL', 'EXPIRED', 'OVERDUE')),
    currency       text        NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    tax_percentage numeric     NOT NULL CHECK (tax_percentage BETWEEN 0 AND 100),
    tax            numeric     NOT NULL CHECK (tax >= 0),
    subtotal       numeric     NOT NULL CHECK (subtotal >= 0),
    total          numeric     NOT NULL CHECK (total = subtotal + tax),
    client_id      uuid        NOT NULL,
    sender_id      uuid        NOT NULL,
    created_at     timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL,
    PRIMARY KEY (team_id, id),
    UNIQUE (team_id, serial),
    -- Restricting: a client or sender address with invoices cannot be deleted.
    FOREIGN KEY (team_id, client_id) REFERENCES clients (team_id, id),
    FOREIGN KEY (team_id, sender_id) REFERENCES sender_addresses (team_id, id)
);
CREATE INDEX invoices_listing ON invoices (team_id, issue_date DESC, serial DESC);
CREATE INDEX invoices_client ON invoices (team_id, client_id);
-- The public PDF link finds an invoice by its unguessable id alone.
CREATE UNIQUE INDEX invoices_id ON invoices (id);

CREATE TABLE line_items (
    team_id     uuid        NOT NULL,
    invoice_id  uuid        NOT NULL,
    id          uuid        NOT NULL,
    position    integer     NOT NULL CHECK (position >= 0),
    description text        NOT NULL CHECK (char_length(description) <= 1000),
    unit_price  numeric     NOT NULL CHECK (unit_price >= 0),
    quantity    numeric     NOT NULL CHECK (quantity > 0),
    amount      numeric     NOT NULL CHECK (amount >= 0),
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    PRIMARY KEY (team_id, id),
    UNIQUE (team_id, invoice_id, position),
    FOREIGN KEY (team_id, invoice_id) REFERENCES invoices (team_id, id) ON DELETE CASCADE
);
