ALTER TABLE credit_note_lines DROP COLUMN vat_exemption_reason, DROP COLUMN tax_percentage, DROP COLUMN vat_category;
ALTER TABLE line_items DROP COLUMN vat_exemption_reason, DROP COLUMN tax_percentage, DROP COLUMN vat_category;
