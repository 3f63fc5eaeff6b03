-- Mirror of migrations/postgres/2026-11-21-000003_invoices in SQLite's terms. Money is
-- TEXT holding the exact decimal (SQLite's REAL would be binary floating point); the
-- CHECKs compare signs only, which a REAL cast keeps exact.

CREATE TABLE sender_addresses (
    team_id     TEXT    NOT NULL REFERENCES teams (id),
    id          TEXT    NOT NULL CHECK (length(id) = 36),
    is_default  INTEGER NOT NULL CHECK (is_default IN (0, 1)),
    name        TEXT    NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
    line1       TEXT    NOT NULL CHECK (length(line1) <= 255),
    line2       TEXT    NOT NULL CHECK (length(line2) <= 255),
    line3       TEXT    NOT NULL CHECK (length(line3) <= 255),
    postal_code TEXT    NOT NULL CHECK (length(postal_code) <= 32),
    email       TEXT             CHECK (length(email) BETWEEN 3 AND 254),
    vat_number  TEXT    NOT NULL CHECK (length(vat_number) <= 255),
    created_at  TEXT    NOT NULL,
    updated_at  TEXT    NOT NULL,
    PRIMARY KEY (team_id, id)
) STRICT;
CREATE UNIQUE INDEX sender_addresses_default ON sender_addresses (team_id) WHERE is_default;

-- The invoice's transaction increments this row first, taking SQLite's write lock before
-- it reads anything, so concurrent creates queue on the busy timeout instead of failing.
CREATE TABLE invoice_serials (
    team_id     TEXT    NOT NULL PRIMARY KEY REFERENCES teams (id),
    last_serial INTEGER NOT NULL CHECK (last_serial > 0)
) STRICT;

ALTER TABLE clients ADD COLUMN email_key TEXT NOT NULL DEFAULT '';
UPDATE clients SET email_key = lower(email);
CREATE INDEX clients_email_key ON clients (team_id, email_key, created_at);

CREATE TABLE invoices (
    team_id        TEXT    NOT NULL REFERENCES teams (id),
    id             TEXT    NOT NULL CHECK (length(id) = 36),
    serial         INTEGER NOT NULL CHECK (serial > 0),
    description    TEXT             CHECK (length(description) <= 1000),
    issue_date     TEXT    NOT NULL,
    due_date       TEXT             CHECK (due_date >= issue_date),
    status         TEXT    NOT NULL CHECK (status IN ('PENDING', 'PAID', 'PAID_PARTIAL', 'EXPIRED', 'OVERDUE')),
    currency       TEXT    NOT NULL CHECK (length(currency) = 3 AND currency = upper(currency)),
    tax_percentage TEXT    NOT NULL CHECK (CAST(tax_percentage AS REAL) BETWEEN 0 AND 100),
    tax            TEXT    NOT NULL CHECK (CAST(tax AS REAL) >= 0),
    subtotal       TEXT    NOT NULL CHECK (CAST(subtotal AS REAL) >= 0),
    total          TEXT    NOT NULL CHECK (CAST(total AS REAL) >= 0),
    client_id      TEXT    NOT NULL,
    sender_id      TEXT    NOT NULL,
    created_at     TEXT    NOT NULL,
    updated_at     TEXT    NOT NULL,
    PRIMARY KEY (team_id, id),
    UNIQUE (team_id, serial),
    FOREIGN KEY (team_id, client_id) REFERENCES clients (team_id, id),
    FOREIGN KEY (team_id, sender_id) REFERENCES sender_addresses (team_id, id)
) STRICT;
CREATE INDEX invoices_listing ON invoices (team_id, issue_date DESC, serial DESC);
CREATE INDEX invoices_client ON invoices (team_id, client_id);
CREATE UNIQUE INDEX invoices_id ON invoices (id);

CREATE TABLE line_items (
    team_id     TEXT    NOT NULL,
    invoice_id  TEXT    NOT NULL,
    id          TEXT    NOT NULL CHECK (length(id) = 36),
    position    INTEGER NOT NULL CHECK (position >= 0),
    description TEXT    NOT NULL CHECK (length(description) <= 1000),
    unit_price  TEXT    NOT NULL CHECK (CAST(unit_price AS REAL) >= 0),
    quantity    TEXT    NOT NULL CHECK (CAST(quantity AS REAL) > 0),
    amount      TEXT    NOT NULL CHECK (CAST(amount AS REAL) >= 0),
    created_at  TEXT    NOT NULL,
    updated_at  TEXT    NOT NULL,
    PRIMARY KEY (team_id, id),
    UNIQUE (team_id, invoice_id, position),
    FOREIGN KEY (team_id, invoice_id) REFERENCES invoices (team_id, id) ON DELETE CASCADE
) STRICT;
