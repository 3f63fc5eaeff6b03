-- An invoice made for a period of a recurring invoice names it, with its place among that
-- one's invoices (1, 2, 3 … with no gap). The unique index keeps one invoice per place,
-- whatever replicas run the same period at once: the second insert fails, and its
-- transaction (serial included) with it.
ALTER TABLE invoices ADD COLUMN recurring_invoice_id uuid;
ALTER TABLE invoices ADD COLUMN recurring_sequence integer CHECK (recurring_sequence >= 1);
ALTER TABLE invoices ADD CONSTRAINT invoices_recurrence_whole
    CHECK ((recurring_invoice_id IS NULL) = (recurring_sequence IS NULL));
CREATE UNIQUE INDEX invoices_recurring ON invoices (team_id, recurring_invoice_id, recurring_sequence)
    WHERE recurring_invoice_id IS NOT NULL;
