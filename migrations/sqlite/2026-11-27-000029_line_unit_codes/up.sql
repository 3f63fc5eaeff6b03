-- Mirror of migrations/postgres/2026-11-27-000029_line_unit_codes in SQLite's terms.
ALTER TABLE line_items ADD COLUMN unit_code TEXT NOT NULL DEFAULT 'C62' CHECK (length(unit_code) IN (2, 3));
ALTER TABLE credit_note_lines ADD COLUMN unit_code TEXT NOT NULL DEFAULT 'C62' CHECK (length(unit_code) IN (2, 3));
