-- Mirror of migrations/postgres/2026-11-28-000040_languages_and_payment_references in SQLite's terms.
ALTER TABLE clients ADD COLUMN language TEXT CHECK (language IS NULL OR language IN ('en', 'de', 'fr', 'it', 'es', 'nl'));
ALTER TABLE sender_addresses ADD COLUMN language TEXT NOT NULL DEFAULT 'en'
  CHECK (language IN ('en', 'de', 'fr', 'it', 'es', 'nl'));
-- The payment QR code its invoices' PDFs carry unless asked for another.
ALTER TABLE sender_addresses ADD COLUMN payment_qr TEXT NOT NULL DEFAULT 'auto'
  CHECK (payment_qr IN ('auto', 'epc', 'swiss', 'none'));
ALTER TABLE invoices ADD COLUMN payment_reference TEXT;
