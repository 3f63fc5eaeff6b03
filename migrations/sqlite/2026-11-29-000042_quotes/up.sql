-- Mirror of migrations/postgres/2026-11-29-000042_quotes in SQLite's terms.
CREATE TABLE quotes (
    team_id              TEXT    NOT NULL REFERENCES teams (id),
    id                   TEXT    NOT NULL CHECK (length(id) = 36),
    client_id            TEXT    NOT NULL,
    number               TEXT    CHECK (number IS NULL OR length(number) BETWEEN 1 AND 64),
    number_counter       INTEGER CHECK (number_counter IS NULL OR number_counter > 0),
    status               TEXT    NOT NULL CHECK (status IN ('DRAFT', 'SENT', 'ACCEPTED', 'DECLINED', 'CONVERTED')),
    description          TEXT    CHECK (length(description) <= 1000),
    notes                TEXT    CHECK (length(notes) <= 5000),
    valid_until          TEXT,
    currency             TEXT    NOT NULL CHECK (length(currency) = 3),
    exchange             TEXT,
    vat_category         TEXT    NOT NULL,
    vat_exemption_reason TEXT,
    tax_percentage       TEXT    NOT NULL,
    tax                  TEXT    NOT NULL,
    subtotal             TEXT    NOT NULL,
    total                TEXT    NOT NULL,
    discount_percentage  TEXT,
    discount_amount      TEXT,
    sent_at              TEXT,
    verdict              TEXT    CHECK (verdict IN ('accepted', 'declined')),
    signer               TEXT    CHECK (length(signer) BETWEEN 1 AND 200),
    decline_reason       TEXT    CHECK (length(decline_reason) <= 1000),
    decided_on           TEXT    CHECK (decided_on IN ('page', 'team')),
    decided_ip           TEXT,
    decided_user_agent   TEXT,
    decided_at           TEXT,
    expiry_announced_for TEXT,
    supersedes           TEXT,
    created_at           TEXT    NOT NULL,
    updated_at           TEXT    NOT NULL,
    PRIMARY KEY (team_id, id),
    UNIQUE (team_id, number),
    FOREIGN KEY (team_id, client_id) REFERENCES clients (team_id, id),
    CHECK ((number IS NULL) = (number_counter IS NULL)),
    CHECK ((verdict IS NULL) = (decided_at IS NULL))
) STRICT;
CREATE INDEX quotes_listing ON quotes (team_id, created_at DESC, id DESC);
CREATE INDEX quotes_client ON quotes (team_id, client_id);

CREATE TABLE quote_lines (
    team_id              TEXT    NOT NULL,
    quote_id             TEXT    NOT NULL,
    id                   TEXT    NOT NULL CHECK (length(id) = 36),
    position             INTEGER NOT NULL CHECK (position >= 0),
    description          TEXT    NOT NULL CHECK (length(description) <= 1000),
    unit_price           TEXT    NOT NULL CHECK (CAST(unit_price AS REAL) >= 0),
    quantity             TEXT    NOT NULL CHECK (CAST(quantity AS REAL) > 0),
    amount               TEXT    NOT NULL CHECK (CAST(amount AS REAL) >= 0),
    created_at           TEXT    NOT NULL,
    updated_at           TEXT    NOT NULL,
    unit_code            TEXT    NOT NULL CHECK (length(unit_code) IN (2, 3)),
    vat_category         TEXT    CHECK (vat_category IN ('S', 'Z', 'E', 'AE', 'K', 'G', 'O')),
    tax_percentage       TEXT    CHECK (tax_percentage IS NULL OR CAST(tax_percentage AS REAL) BETWEEN 0 AND 100),
    vat_exemption_reason TEXT,
    discount_percentage  TEXT    CHECK (discount_percentage IS NULL OR CAST(discount_percentage AS REAL) BETWEEN 0 AND 100),
    discount_amount      TEXT    CHECK (discount_amount IS NULL OR CAST(discount_amount AS REAL) >= 0),
    PRIMARY KEY (team_id, id),
    UNIQUE (team_id, quote_id, position),
    FOREIGN KEY (team_id, quote_id) REFERENCES quotes (team_id, id) ON DELETE CASCADE
) STRICT;

CREATE TABLE quote_invoices (
    team_id    TEXT    NOT NULL,
    invoice_id TEXT    NOT NULL,
    quote_id   TEXT    NOT NULL,
    position   INTEGER NOT NULL CHECK (position >= 0),
    kind       TEXT    NOT NULL CHECK (kind IN ('full', 'deposit', 'final')),
    number     TEXT    NOT NULL,
    counter    INTEGER NOT NULL CHECK (counter > 0),
    net        TEXT    NOT NULL,
    total      TEXT    NOT NULL,
    PRIMARY KEY (team_id, invoice_id),
    UNIQUE (team_id, quote_id, position),
    FOREIGN KEY (team_id, invoice_id) REFERENCES invoices (team_id, id) ON DELETE CASCADE,
    FOREIGN KEY (team_id, quote_id) REFERENCES quotes (team_id, id)
) STRICT;

ALTER TABLE invoices ADD COLUMN quote_id TEXT;
ALTER TABLE invoices ADD COLUMN quote_kind TEXT CHECK (quote_kind IN ('full', 'deposit', 'final'));
ALTER TABLE invoices ADD COLUMN deposit_invoice_ids TEXT;
ALTER TABLE invoices ADD COLUMN deposits_deducted TEXT NOT NULL DEFAULT '0' CHECK (CAST(deposits_deducted AS REAL) >= 0);
-- SQLite adds no NOT NULL column without a default: '' stands for "the total" until the
-- update below, and every write sets it.
ALTER TABLE invoices ADD COLUMN payable TEXT NOT NULL DEFAULT '';
UPDATE invoices SET payable = total;
