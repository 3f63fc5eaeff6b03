-- Mirror of migrations/postgres/2026-11-28-000038_discounts in SQLite's terms (money as
-- text; a table's checks across columns need a rebuild, so each column checks itself and
-- the stores write the pairs).
ALTER TABLE line_items ADD COLUMN discount_percentage TEXT CHECK (discount_percentage IS NULL OR CAST(discount_percentage AS REAL) BETWEEN 0 AND 100);
ALTER TABLE line_items ADD COLUMN discount_amount TEXT CHECK (discount_amount IS NULL OR CAST(discount_amount AS REAL) >= 0);
ALTER TABLE credit_note_lines ADD COLUMN discount_percentage TEXT CHECK (discount_percentage IS NULL OR CAST(discount_percentage AS REAL) BETWEEN 0 AND 100);
ALTER TABLE credit_note_lines ADD COLUMN discount_amount TEXT CHECK (discount_amount IS NULL OR CAST(discount_amount AS REAL) >= 0);
ALTER TABLE invoices ADD COLUMN discount_percentage TEXT CHECK (discount_percentage IS NULL OR CAST(discount_percentage AS REAL) BETWEEN 0 AND 100);
ALTER TABLE invoices ADD COLUMN discount_amount TEXT CHECK (discount_amount IS NULL OR CAST(discount_amount AS REAL) > 0);
ALTER TABLE credit_notes ADD COLUMN discount_percentage TEXT CHECK (discount_percentage IS NULL OR CAST(discount_percentage AS REAL) BETWEEN 0 AND 100);
ALTER TABLE credit_notes ADD COLUMN discount_amount TEXT CHECK (discount_amount IS NULL OR CAST(discount_amount AS REAL) > 0);
