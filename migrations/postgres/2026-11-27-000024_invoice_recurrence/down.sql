DROP INDEX invoices_recurring;
ALTER TABLE invoices DROP CONSTRAINT invoices_recurrence_whole;
ALTER TABLE invoices DROP COLUMN recurring_sequence;
ALTER TABLE invoices DROP COLUMN recurring_invoice_id;
