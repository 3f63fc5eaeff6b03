ALTER TABLE invoices DROP COLUMN payment_reference;
ALTER TABLE sender_addresses DROP COLUMN payment_qr;
ALTER TABLE sender_addresses DROP COLUMN language;
ALTER TABLE clients DROP COLUMN language;
