DROP INDEX time_entries_invoice;
ALTER TABLE time_entries DROP CONSTRAINT time_entries_invoice;
ALTER TABLE time_entries DROP COLUMN invoice_id;
ALTER TABLE time_entries DROP COLUMN billable;
ALTER TABLE projects DROP COLUMN rate;
