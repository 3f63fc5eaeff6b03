-- Mirror of migrations/postgres/2026-11-28-000033_vat_per_line in SQLite's terms.
ALTER TABLE line_items ADD COLUMN vat_category TEXT CHECK (vat_category IN ('S', 'Z', 'E', 'AE', 'K', 'G', 'O'));
ALTER TABLE line_items ADD COLUMN tax_percentage TEXT CHECK (tax_percentage IS NULL OR CAST(tax_percentage AS REAL) BETWEEN 0 AND 100);
ALTER TABLE line_items ADD COLUMN vat_exemption_reason TEXT;
ALTER TABLE credit_note_lines ADD COLUMN vat_category TEXT CHECK (vat_category IN ('S', 'Z', 'E', 'AE', 'K', 'G', 'O'));
ALTER TABLE credit_note_lines ADD COLUMN tax_percentage TEXT CHECK (tax_percentage IS NULL OR CAST(tax_percentage AS REAL) BETWEEN 0 AND 100);
ALTER TABLE credit_note_lines ADD COLUMN vat_exemption_reason TEXT;
