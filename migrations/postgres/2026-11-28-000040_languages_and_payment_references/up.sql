-- The language a client reads its documents, mails and page in (none: its sender's), and
-- the language of a sender's documents for clients that name none (the team's language,
-- for its default sender). Existing senders speak English, as they always have.
ALTER TABLE clients ADD COLUMN language text CHECK (language IN ('en', 'de', 'fr', 'it', 'es', 'nl'));
ALTER TABLE sender_addresses ADD COLUMN language text NOT NULL DEFAULT 'en'
  CHECK (language IN ('en', 'de', 'fr', 'it', 'es', 'nl'));
-- The payment QR code its invoices' PDFs carry unless asked for another.
ALTER TABLE sender_addresses ADD COLUMN payment_qr text NOT NULL DEFAULT 'auto'
  CHECK (payment_qr IN ('auto', 'epc', 'swiss', 'none'));
-- An invoice's payment reference (EN 16931 BT-83), made from its number when it is made.
-- Invoices made before have none stored: theirs is the creditor reference of their number.
ALTER TABLE invoices ADD COLUMN payment_reference text;
