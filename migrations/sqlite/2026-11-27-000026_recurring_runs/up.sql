-- Mirror of migrations/postgres/2026-11-27-000026_recurring_runs in SQLite's terms:
-- triggers do what the foreign keys do there.
CREATE TABLE recurring_runs (
    team_id              TEXT NOT NULL CHECK (length(team_id) = 36),
    recurring_invoice_id TEXT NOT NULL CHECK (length(recurring_invoice_id) = 36),
    period_start         TEXT NOT NULL CHECK (length(period_start) = 10),
    invoice_id           TEXT          CHECK (invoice_id IS NULL OR length(invoice_id) = 36),
    status               TEXT NOT NULL CHECK (status IN ('generated', 'skipped', 'failed')),
    reason               TEXT          CHECK (length(reason) <= 1000),
    ran_at               TEXT NOT NULL,
    PRIMARY KEY (team_id, recurring_invoice_id, period_start),
    CHECK (invoice_id IS NULL OR status = 'generated')
) STRICT;
CREATE INDEX recurring_runs_invoice ON recurring_runs (team_id, invoice_id) WHERE invoice_id IS NOT NULL;
CREATE TRIGGER invoices_delete_releases_recurring_runs AFTER DELETE ON invoices BEGIN
    UPDATE recurring_runs SET invoice_id = NULL WHERE team_id = OLD.team_id AND invoice_id = OLD.id;
END;
CREATE TRIGGER recurring_invoices_delete_removes_runs AFTER DELETE ON recurring_invoices BEGIN
    DELETE FROM recurring_runs WHERE team_id = OLD.team_id AND recurring_invoice_id = OLD.id;
END;
