-- What became of each period of a recurring invoice: generated (its invoice, while that
-- exists), skipped (missed while the service was down, or nothing to bill) or failed (the
-- reason says why). One run per period: the primary key is what keeps replicas that run
-- the same pass at once from billing a period twice. The runs go with their recurring
-- invoice; deleting an invoice keeps its run, without the invoice.
CREATE TABLE recurring_runs (
    team_id              uuid        NOT NULL,
    recurring_invoice_id uuid        NOT NULL,
    period_start         date        NOT NULL,
    invoice_id           uuid,
    status               text        NOT NULL CHECK (status IN ('generated', 'skipped', 'failed')),
    reason               text                 CHECK (length(reason) <= 1000),
    ran_at               timestamptz NOT NULL,
    PRIMARY KEY (team_id, recurring_invoice_id, period_start),
    FOREIGN KEY (team_id, recurring_invoice_id) REFERENCES recurring_invoices (team_id, id) ON DELETE CASCADE,
    FOREIGN KEY (team_id, invoice_id) REFERENCES invoices (team_id, id) ON DELETE SET NULL (invoice_id),
    CHECK (invoice_id IS NULL OR status = 'generated')
);
CREATE INDEX recurring_runs_invoice ON recurring_runs (team_id, invoice_id) WHERE invoice_id IS NOT NULL;
