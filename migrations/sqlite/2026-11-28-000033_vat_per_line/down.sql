ALTER TABLE credit_note_lines DROP COLUMN vat_exemption_reason;
ALTER TABLE credit_note_lines DROP COLUMN tax_percentage;
ALTER TABLE credit_note_lines DROP COLUMN vat_category;
ALTER TABLE line_items DROP COLUMN vat_exemption_reason;
ALTER TABLE line_items DROP COLUMN tax_percentage;
ALTER TABLE line_items DROP COLUMN vat_category;
