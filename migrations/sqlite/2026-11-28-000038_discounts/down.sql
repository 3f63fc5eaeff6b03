ALTER TABLE credit_notes DROP COLUMN discount_amount;
ALTER TABLE credit_notes DROP COLUMN discount_percentage;
ALTER TABLE invoices DROP COLUMN discount_amount;
ALTER TABLE invoices DROP COLUMN discount_percentage;
ALTER TABLE credit_note_lines DROP COLUMN discount_amount;
ALTER TABLE credit_note_lines DROP COLUMN discount_percentage;
ALTER TABLE line_items DROP COLUMN discount_amount;
ALTER TABLE line_items DROP COLUMN discount_percentage;
