DROP INDEX credit_notes_number;
ALTER TABLE credit_notes DROP COLUMN number_counter, DROP COLUMN number;
DROP INDEX invoices_number_counter;
DROP INDEX invoices_number_key;
DROP INDEX invoices_number;
ALTER TABLE invoices DROP COLUMN number_key, DROP COLUMN number_counter, DROP COLUMN number;
DROP TABLE numbering_counts;
DROP TABLE numbering_patterns;
