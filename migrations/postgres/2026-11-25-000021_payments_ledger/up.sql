-- The payments ledger: what was paid, refunded and written off on each invoice, its credit
-- notes (a numbered series of their own), and the balance both leave, kept on the invoice
-- in the same transaction as every write of its books.
ALTER TABLE invoices
    ADD COLUMN amount_paid        numeric NOT NULL DEFAULT 0 CHECK (amount_paid >= 0),
    ADD COLUMN amount_credited    numeric NOT NULL DEFAULT 0 CHECK (amount_credited >= 0),
    ADD COLUMN amount_written_off numeric NOT NULL DEFAULT 0 CHECK (amount_written_off >= 0),
    ADD COLUMN credit_refundable  numeric NOT NULL DEFAULT 0 CHECK (credit_refundable >= 0),
    ADD COLUMN paid_on            date,
    -- How many entries and credit notes its books hold: the position of the next.
    ADD COLUMN ledger_events      integer NOT NULL DEFAULT 0 CHECK (ledger_events >= 0),
    ADD CONSTRAINT invoices_books_within_total
        CHECK (amount_paid + amount_credited + amount_written_off <= total);

CREATE TABLE ledger_entries (
    team_id     uuid        NOT NULL,
    id          uuid        NOT NULL,
    invoice_id  uuid        NOT NULL,
    -- Its place in the invoice's books (credit notes count too): the order the ledger is played.
    position    integer     NOT NULL CHECK (position >= 0),
    kind        text        NOT NULL CHECK (kind IN ('payment', 'refund', 'write_off')),
    amount      numeric     NOT NULL CHECK (amount > 0),
    on_day      date        NOT NULL,
    method      text        NOT NULL CHECK (method IN ('bank_transfer', 'card', 'cash', 'check', 'other')),
    reference   text                 CHECK (char_length(reference) <= 200),
    notes       text                 CHECK (char_length(notes) <= 1000),
    voided_at   timestamptz,
    void_reason text                 CHECK (char_length(void_reason) <= 1000),
    created_at  timestamptz NOT NULL,
    PRIMARY KEY (team_id, id),
    -- Restricting: an invoice with books cannot be deleted.
    FOREIGN KEY (team_id, invoice_id) REFERENCES invoices (team_id, id)
);
CREATE UNIQUE INDEX ledger_entries_invoice ON ledger_entries (team_id, invoice_id, position);
CREATE INDEX ledger_entries_listing ON ledger_entries (team_id, on_day DESC, id DESC);

CREATE TABLE credit_note_serials (
    team_id     uuid    NOT NULL PRIMARY KEY REFERENCES teams (id),
    last_serial integer NOT NULL CHECK (last_serial > 0)
);

CREATE TABLE credit_notes (
    team_id        uuid        NOT NULL,
    id             uuid        NOT NULL,
    serial         integer     NOT NULL CHECK (serial > 0),
    invoice_id     uuid        NOT NULL,
    position       integer     NOT NULL CHECK (position >= 0),
    issue_date     timestamptz NOT NULL,
    currency       text        NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    tax_percentage numeric     NOT NULL CHECK (tax_percentage BETWEEN 0 AND 100),
    tax            numeric     NOT NULL CHECK (tax >= 0),
    subtotal       numeric     NOT NULL CHECK (subtotal >= 0),
    total          numeric     NOT NULL CHECK (total = subtotal + tax),
    reason         text                 CHECK (char_length(reason) <= 1000),
    applied        numeric     NOT NULL CHECK (applied >= 0),
    refundable     numeric     NOT NULL CHECK (refundable >= 0 AND applied + refundable = total),
    created_at     timestamptz NOT NULL,
    PRIMARY KEY (team_id, id),
    UNIQUE (team_id, serial),
    FOREIGN KEY (team_id, invoice_id) REFERENCES invoices (team_id, id)
);
CREATE UNIQUE INDEX credit_notes_invoice ON credit_notes (team_id, invoice_id, position);
-- The public PDF link finds a credit note by its unguessable id alone.
CREATE UNIQUE INDEX credit_notes_id ON credit_notes (id);

CREATE TABLE credit_note_lines (
    team_id        uuid        NOT NULL,
    credit_note_id uuid        NOT NULL,
    id             uuid        NOT NULL,
    position       integer     NOT NULL CHECK (position >= 0),
    description    text        NOT NULL CHECK (char_length(description) <= 1000),
    unit_price     numeric     NOT NULL CHECK (unit_price >= 0),
    quantity       numeric     NOT NULL CHECK (quantity > 0),
    amount         numeric     NOT NULL CHECK (amount >= 0),
    created_at     timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL,
    PRIMARY KEY (team_id, id),
    UNIQUE (team_id, credit_note_id, position),
    FOREIGN KEY (team_id, credit_note_id) REFERENCES credit_notes (team_id, id) ON DELETE CASCADE
);

-- Statuses set by hand before the ledger become what the books say: a PAID invoice gets a
-- payment of its total, an EXPIRED one a write-off of it, both dated its last change; a
-- PAID_PARTIAL or OVERDUE one recorded no amount and reads PENDING again (OVERDUE past its
-- due date).
INSERT INTO ledger_entries (team_id, id, invoice_id, position, kind, amount, on_day, method, notes, created_at)
SELECT team_id, gen_random_uuid(), id, 0, CASE status WHEN 'PAID' THEN 'payment' ELSE 'write_off' END,
       total, (updated_at AT TIME ZONE 'UTC')::date, 'other',
       'recorded when the payments ledger arrived: the invoice was ' || status, updated_at
FROM invoices WHERE status IN ('PAID', 'EXPIRED') AND total > 0;
UPDATE invoices SET amount_paid = total, paid_on = (updated_at AT TIME ZONE 'UTC')::date, ledger_events = 1
WHERE status = 'PAID' AND total > 0;
UPDATE invoices SET amount_written_off = total, ledger_events = 1 WHERE status = 'EXPIRED' AND total > 0;
UPDATE invoices SET status = 'PENDING'
WHERE status IN ('PAID_PARTIAL', 'OVERDUE') OR (status IN ('PAID', 'EXPIRED') AND total = 0);
