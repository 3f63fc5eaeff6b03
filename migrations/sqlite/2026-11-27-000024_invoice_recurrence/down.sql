DROP INDEX invoices_recurring;
ALTER TABLE invoices DROP COLUMN recurring_sequence;
ALTER TABLE invoices DROP COLUMN recurring_invoice_id;
