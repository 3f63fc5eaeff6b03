ALTER TABLE invoices DROP COLUMN exchange;
ALTER TABLE clients DROP COLUMN currency;
