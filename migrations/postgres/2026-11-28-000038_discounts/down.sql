-- A discounted document reads, without discounts, as one whose subtotal is what its lines
-- came to after them.
UPDATE credit_notes SET subtotal = total - tax WHERE total <> subtotal + tax;
UPDATE invoices SET subtotal = total - tax WHERE total <> subtotal + tax;
ALTER TABLE credit_notes DROP CONSTRAINT credit_notes_total_after_discounts;
ALTER TABLE invoices DROP CONSTRAINT invoices_total_after_discounts;
ALTER TABLE credit_notes ADD CONSTRAINT credit_notes_check CHECK (total = subtotal + tax);
ALTER TABLE invoices ADD CONSTRAINT invoices_check1 CHECK (total = subtotal + tax);
ALTER TABLE credit_notes DROP COLUMN discount_amount, DROP COLUMN discount_percentage;
ALTER TABLE invoices DROP COLUMN discount_amount, DROP COLUMN discount_percentage;
ALTER TABLE credit_note_lines DROP COLUMN discount_amount, DROP COLUMN discount_percentage;
ALTER TABLE line_items DROP COLUMN discount_amount, DROP COLUMN discount_percentage;
