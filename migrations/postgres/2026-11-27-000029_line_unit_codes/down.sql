ALTER TABLE credit_note_lines DROP COLUMN unit_code;
ALTER TABLE line_items DROP COLUMN unit_code;
