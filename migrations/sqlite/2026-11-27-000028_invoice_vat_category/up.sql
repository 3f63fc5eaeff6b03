-- Mirror of migrations/postgres/2026-11-27-000028_invoice_vat_category in SQLite's terms.
ALTER TABLE invoices ADD COLUMN vat_category TEXT NOT NULL DEFAULT 'S'
    CHECK (vat_category IN ('S', 'Z', 'E', 'AE', 'K', 'G', 'O'));
ALTER TABLE invoices ADD COLUMN vat_exemption_reason TEXT
    CHECK (vat_exemption_reason IS NULL OR length(vat_exemption_reason) BETWEEN 1 AND 1000);
