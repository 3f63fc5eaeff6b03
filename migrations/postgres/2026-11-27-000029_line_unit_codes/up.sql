-- What each line's quantity counts (UN/ECE Recommendation 20, EN 16931 BT-130): existing
-- lines, and lines that name none, count ones (C62); lines billed from time count hours
-- (HUR). Credit notes' lines keep their invoice's.
ALTER TABLE line_items ADD COLUMN unit_code text NOT NULL DEFAULT 'C62' CHECK (unit_code ~ '^[A-Z0-9]{2,3}$');
ALTER TABLE credit_note_lines ADD COLUMN unit_code text NOT NULL DEFAULT 'C62' CHECK (unit_code ~ '^[A-Z0-9]{2,3}$');
