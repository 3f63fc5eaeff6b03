-- What structured e-invoices (EN 16931) need of the parties, all optional so that
-- existing clients and sender addresses stay as they are: the city and country
-- (ISO 3166-1 alpha-2) of each address, the buyer's reference (BT-10, the German
-- Leitweg-ID), and the seller's account (IBAN, BIC) and contact.
ALTER TABLE clients ADD COLUMN city text NOT NULL DEFAULT '' CHECK (length(city) <= 255);
ALTER TABLE clients ADD COLUMN country_code text CHECK (country_code ~ '^[A-Z]{2}$');
ALTER TABLE clients ADD COLUMN buyer_reference text NOT NULL DEFAULT '' CHECK (length(buyer_reference) <= 255);
ALTER TABLE sender_addresses ADD COLUMN city text NOT NULL DEFAULT '' CHECK (length(city) <= 255);
ALTER TABLE sender_addresses ADD COLUMN country_code text CHECK (country_code ~ '^[A-Z]{2}$');
ALTER TABLE sender_addresses ADD COLUMN iban text CHECK (iban ~ '^[A-Z]{2}[0-9]{2}[A-Z0-9]{1,30}$');
ALTER TABLE sender_addresses ADD COLUMN bic text CHECK (bic ~ '^[A-Z0-9]{8}([A-Z0-9]{3})?$');
ALTER TABLE sender_addresses ADD COLUMN contact_name text NOT NULL DEFAULT '' CHECK (length(contact_name) <= 255);
ALTER TABLE sender_addresses ADD COLUMN contact_phone text NOT NULL DEFAULT '' CHECK (length(contact_phone) <= 255);
ALTER TABLE sender_addresses ADD COLUMN contact_email text;
