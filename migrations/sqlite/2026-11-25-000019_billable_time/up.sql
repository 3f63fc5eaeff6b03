-- Tracked time that can become an invoice: a project's hourly rate, whether an entry is
-- to be billed, and the invoice that billed it. Deleting that invoice releases its
-- entries (invoice_id back to NULL) in the same transaction. A trigger does it rather
-- than a foreign key, which SQLite could not drop with the column again.
ALTER TABLE projects ADD COLUMN rate TEXT CHECK (rate IS NULL OR CAST(rate AS REAL) >= 0);
ALTER TABLE time_entries ADD COLUMN billable INTEGER NOT NULL DEFAULT 1 CHECK (billable IN (0, 1));
ALTER TABLE time_entries ADD COLUMN invoice_id TEXT CHECK (invoice_id IS NULL OR length(invoice_id) = 36);
CREATE INDEX time_entries_invoice ON time_entries (team_id, invoice_id) WHERE invoice_id IS NOT NULL;
CREATE TRIGGER invoices_delete_releases_time_entries AFTER DELETE ON invoices BEGIN
    UPDATE time_entries SET invoice_id = NULL WHERE team_id = OLD.team_id AND invoice_id = OLD.id;
END;
