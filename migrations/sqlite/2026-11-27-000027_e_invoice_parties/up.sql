-- Mirror of migrations/postgres/2026-11-27-000027_e_invoice_parties in SQLite's terms.
ALTER TABLE clients ADD COLUMN city TEXT NOT NULL DEFAULT '' CHECK (length(city) <= 255);
ALTER TABLE clients ADD COLUMN country_code TEXT CHECK (country_code IS NULL OR (length(country_code) = 2 AND country_code GLOB '[A-Z][A-Z]'));
ALTER TABLE clients ADD COLUMN buyer_reference TEXT NOT NULL DEFAULT '' CHECK (length(buyer_reference) <= 255);
ALTER TABLE sender_addresses ADD COLUMN city TEXT NOT NULL DEFAULT '' CHECK (length(city) <= 255);
ALTER TABLE sender_addresses ADD COLUMN country_code TEXT CHECK (country_code IS NULL OR (length(country_code) = 2 AND country_code GLOB '[A-Z][A-Z]'));
ALTER TABLE sender_addresses ADD COLUMN iban TEXT CHECK (iban IS NULL OR length(iban) BETWEEN 5 AND 34);
ALTER TABLE sender_addresses ADD COLUMN bic TEXT CHECK (bic IS NULL OR length(bic) IN (8, 11));
ALTER TABLE sender_addresses ADD COLUMN contact_name TEXT NOT NULL DEFAULT '' CHECK (length(contact_name) <= 255);
ALTER TABLE sender_addresses ADD COLUMN contact_phone TEXT NOT NULL DEFAULT '' CHECK (length(contact_phone) <= 255);
ALTER TABLE sender_addresses ADD COLUMN contact_email TEXT;
