-- The payments ledger: what was paid, refunded and written off on each invoice, its credit
-- notes (a numbered series of their own), and the balance both leave, kept on the invoice
-- in the same transaction as every write of its books.
ALTER TABLE invoices ADD COLUMN amount_paid TEXT NOT NULL DEFAULT '0' CHECK (CAST(amount_paid AS REAL) >= 0);
ALTER TABLE invoices ADD COLUMN amount_credited TEXT NOT NULL DEFAULT '0' CHECK (CAST(amount_credited AS REAL) >= 0);
ALTER TABLE invoices ADD COLUMN amount_written_off TEXT NOT NULL DEFAULT '0' CHECK (CAST(amount_written_off AS REAL) >= 0);
ALTER TABLE invoices ADD COLUMN credit_refundable TEXT NOT NULL DEFAULT '0' CHECK (CAST(credit_refundable AS REAL) >= 0);
ALTER TABLE invoices ADD COLUMN paid_on TEXT CHECK (paid_on IS NULL OR length(paid_on) = 10);
-- How many entries and credit notes its books hold: the position of the next.
ALTER TABLE invoices ADD COLUMN ledger_events INTEGER NOT NULL DEFAULT 0 CHECK (ledger_events >= 0);

CREATE TABLE ledger_entries (
    team_id     TEXT NOT NULL,
    id          TEXT NOT NULL CHECK (length(id) = 36),
    invoice_id  TEXT NOT NULL,
    -- Its place in the invoice's books (credit notes count too): the order the ledger is played.
    position    INTEGER NOT NULL CHECK (position >= 0),
    kind        TEXT NOT NULL CHECK (kind IN ('payment', 'refund', 'write_off')),
    amount      TEXT NOT NULL CHECK (CAST(amount AS REAL) > 0),
    on_day      TEXT NOT NULL CHECK (length(on_day) = 10),
    method      TEXT NOT NULL CHECK (method IN ('bank_transfer', 'card', 'cash', 'check', 'other')),
    reference   TEXT          CHECK (length(reference) <= 200),
    notes       TEXT          CHECK (length(notes) <= 1000),
    voided_at   TEXT,
    void_reason TEXT          CHECK (length(void_reason) <= 1000),
    created_at  TEXT NOT NULL,
    PRIMARY KEY (team_id, id),
    -- Restricting: an invoice with books cannot be deleted.
    FOREIGN KEY (team_id, invoice_id) REFERENCES invoices (team_id, id)
) STRICT;
CREATE UNIQUE INDEX ledger_entries_invoice ON ledger_entries (team_id, invoice_id, position);
CREATE INDEX ledger_entries_listing ON ledger_entries (team_id, on_day DESC, id DESC);

CREATE TABLE credit_note_serials (
    team_id     TEXT    NOT NULL PRIMARY KEY REFERENCES teams (id),
    last_serial INTEGER NOT NULL CHECK (last_serial > 0)
) STRICT;

CREATE TABLE credit_notes (
    team_id        TEXT    NOT NULL,
    id             TEXT    NOT NULL CHECK (length(id) = 36),
    serial         INTEGER NOT NULL CHECK (serial > 0),
    invoice_id     TEXT    NOT NULL,
    position       INTEGER NOT NULL CHECK (position >= 0),
    issue_date     TEXT    NOT NULL,
    currency       TEXT    NOT NULL CHECK (length(currency) = 3 AND currency = upper(currency)),
    tax_percentage TEXT    NOT NULL CHECK (CAST(tax_percentage AS REAL) BETWEEN 0 AND 100),
    tax            TEXT    NOT NULL CHECK (CAST(tax AS REAL) >= 0),
    subtotal       TEXT    NOT NULL CHECK (CAST(subtotal AS REAL) >= 0),
    total          TEXT    NOT NULL CHECK (CAST(total AS REAL) >= 0),
    reason         TEXT             CHECK (length(reason) <= 1000),
    applied        TEXT    NOT NULL CHECK (CAST(applied AS REAL) >= 0),
    refundable     TEXT    NOT NULL CHECK (CAST(refundable AS REAL) >= 0),
    created_at     TEXT    NOT NULL,
    PRIMARY KEY (team_id, id),
    UNIQUE (team_id, serial),
    FOREIGN KEY (team_id, invoice_id) REFERENCES invoices (team_id, id)
) STRICT;
CREATE UNIQUE INDEX credit_notes_invoice ON credit_notes (team_id, invoice_id, position);
CREATE UNIQUE INDEX credit_notes_id ON credit_notes (id);

CREATE TABLE credit_note_lines (
    team_id        TEXT    NOT NULL,
    credit_note_id TEXT    NOT NULL,
    id             TEXT    NOT NULL CHECK (length(id) = 36),
    position       INTEGER NOT NULL CHECK (position >= 0),
    description    TEXT    NOT NULL CHECK (length(description) <= 1000),
    unit_price     TEXT    NOT NULL CHECK (CAST(unit_price AS REAL) >= 0),
    quantity       TEXT    NOT NULL CHECK (CAST(quantity AS REAL) > 0),
    amount         TEXT    NOT NULL CHECK (CAST(amount AS REAL) >= 0),
    created_at     TEXT    NOT NULL,
    updated_at     TEXT    NOT NULL,
    PRIMARY KEY (team_id, id),
    UNIQUE (team_id, credit_note_id, position),
    FOREIGN KEY (team_id, credit_note_id) REFERENCES credit_notes (team_id, id) ON DELETE CASCADE
) STRICT;

-- Statuses set by hand before the ledger become what the books say: a PAID invoice gets a
-- payment of its total, an EXPIRED one a write-off of it, both dated its last change; a
-- PAID_PARTIAL or OVERDUE one recorded no amount and reads PENDING again (OVERDUE past its
-- due date). Ids are random (v4) UUIDs, lowercase like every id here.
INSERT INTO ledger_entries (team_id, id, invoice_id, position, kind, amount, on_day, method, notes, created_at)
SELECT team_id,
       lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-'
             || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-'
             || hex(randomblob(6))),
       id, 0, CASE status WHEN 'PAID' THEN 'payment' ELSE 'write_off' END, total, substr(updated_at, 1, 10),
       'other', 'recorded when the payments ledger arrived: the invoice was ' || status, updated_at
FROM invoices WHERE status IN ('PAID', 'EXPIRED') AND CAST(total AS REAL) > 0;
UPDATE invoices SET amount_paid = total, paid_on = substr(updated_at, 1, 10), ledger_events = 1
WHERE status = 'PAID' AND CAST(total AS REAL) > 0;
UPDATE invoices SET amount_written_off = total, ledger_events = 1
WHERE status = 'EXPIRED' AND CAST(total AS REAL) > 0;
UPDATE invoices SET status = 'PENDING'
WHERE status IN ('PAID_PARTIAL', 'OVERDUE') OR (status IN ('PAID', 'EXPIRED') AND CAST(total AS REAL) = 0);
