-- Mirror of migrations/postgres/2026-11-27-000024_invoice_recurrence in SQLite's terms. An
-- added column's CHECK may name the columns before it: a sequence needs its recurring
-- invoice, and the index keeps one invoice per place.
ALTER TABLE invoices ADD COLUMN recurring_invoice_id TEXT CHECK (length(recurring_invoice_id) = 36);
ALTER TABLE invoices ADD COLUMN recurring_sequence INTEGER
    CHECK ((recurring_sequence IS NULL) = (recurring_invoice_id IS NULL) AND (recurring_sequence IS NULL OR recurring_sequence >= 1));
CREATE UNIQUE INDEX invoices_recurring ON invoices (team_id, recurring_invoice_id, recurring_sequence)
    WHERE recurring_invoice_id IS NOT NULL;
