DROP TABLE line_items;
DROP TABLE invoices;
DROP INDEX clients_email_key;
ALTER TABLE clients DROP COLUMN email_key;
DROP TABLE invoice_serials;
DROP TABLE sender_addresses;
