-- Tracked time that can become an invoice: a project's hourly rate, whether an entry is
-- to be billed, and the invoice that billed it. Deleting that invoice releases its
-- entries (invoice_id back to NULL) in the same statement.
ALTER TABLE projects ADD COLUMN rate numeric CHECK (rate >= 0);
ALTER TABLE time_entries ADD COLUMN billable boolean NOT NULL DEFAULT true;
ALTER TABLE time_entries ADD COLUMN invoice_id uuid;
ALTER TABLE time_entries ADD CONSTRAINT time_entries_invoice
    FOREIGN KEY (team_id, invoice_id) REFERENCES invoices (team_id, id) ON DELETE SET NULL (invoice_id);
CREATE INDEX time_entries_invoice ON time_entries (team_id, invoice_id) WHERE invoice_id IS NOT NULL;
