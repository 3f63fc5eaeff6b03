-- Discounts (EN 16931 allowances). A line's: its percentage, NULL for an amount, and the
-- amount it takes off the line's, at the minor unit. A document's (invoice or credit note):
-- its percentage or its amount as given, at most one of them. What the discounts come to
-- is subtotal + tax - total, so no total is stored twice. Every existing row has none, so
-- no figure changes.
ALTER TABLE line_items
    ADD COLUMN discount_percentage numeric CHECK (discount_percentage > 0 AND discount_percentage <= 100),
    ADD COLUMN discount_amount numeric CHECK (discount_amount >= 0),
    ADD CONSTRAINT line_items_discount_amount CHECK (discount_percentage IS NULL OR discount_amount IS NOT NULL);
ALTER TABLE credit_note_lines
    ADD COLUMN discount_percentage numeric CHECK (discount_percentage > 0 AND discount_percentage <= 100),
    ADD COLUMN discount_amount numeric CHECK (discount_amount >= 0),
    ADD CONSTRAINT credit_note_lines_discount_amount CHECK (discount_percentage IS NULL OR discount_amount IS NOT NULL);
ALTER TABLE invoices
    ADD COLUMN discount_percentage numeric CHECK (discount_percentage > 0 AND discount_percentage <= 100),
    ADD COLUMN discount_amount numeric CHECK (discount_amount > 0),
    ADD CONSTRAINT invoices_one_discount CHECK (discount_percentage IS NULL OR discount_amount IS NULL);
ALTER TABLE credit_notes
    ADD COLUMN discount_percentage numeric CHECK (discount_percentage > 0 AND discount_percentage <= 100),
    ADD COLUMN discount_amount numeric CHECK (discount_amount > 0),
    ADD CONSTRAINT credit_notes_one_discount CHECK (discount_percentage IS NULL OR discount_amount IS NULL);
-- A document's total was its subtotal plus its tax; with discounts it is that less what the
-- discounts take, which is at most the subtotal. The old checks are found by what they say,
-- as PostgreSQL named them.
DO $$
DECLARE
    found record;
BEGIN
    FOR found IN
        SELECT conrelid::regclass AS tab, conname FROM pg_constraint
        WHERE contype = 'c' AND conrelid IN ('invoices'::regclass, 'credit_notes'::regclass)
          AND pg_get_constraintdef(oid) = 'CHECK ((total = (subtotal + tax)))'
    LOOP
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', found.tab, found.conname);
    END LOOP;
END $$;
ALTER TABLE invoices ADD CONSTRAINT invoices_total_after_discounts CHECK (total >= tax AND total <= subtotal + tax);
ALTER TABLE credit_notes ADD CONSTRAINT credit_notes_total_after_discounts CHECK (total >= tax AND total <= subtotal + tax);
