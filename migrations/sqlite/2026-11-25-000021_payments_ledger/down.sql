DROP TABLE credit_note_lines;
DROP TABLE credit_notes;
DROP TABLE credit_note_serials;
DROP TABLE ledger_entries;
ALTER TABLE invoices DROP COLUMN amount_paid;
ALTER TABLE invoices DROP COLUMN amount_credited;
ALTER TABLE invoices DROP COLUMN amount_written_off;
ALTER TABLE invoices DROP COLUMN credit_refundable;
ALTER TABLE invoices DROP COLUMN paid_on;
