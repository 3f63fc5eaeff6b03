ALTER TABLE invoices DROP COLUMN payable;
ALTER TABLE invoices DROP COLUMN deposits_deducted;
ALTER TABLE invoices DROP COLUMN deposit_invoice_ids;
ALTER TABLE invoices DROP COLUMN quote_kind;
ALTER TABLE invoices DROP COLUMN quote_id;
DROP TABLE quote_invoices;
DROP TABLE quote_lines;
DROP TABLE quotes;
