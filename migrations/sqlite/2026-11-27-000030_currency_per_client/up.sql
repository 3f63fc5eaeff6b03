-- Mirror of migrations/postgres/2026-11-27-000030_currency_per_client in SQLite's terms.
ALTER TABLE clients ADD COLUMN currency TEXT CHECK (currency IS NULL OR (length(currency) = 3 AND currency GLOB '[A-Z][A-Z][A-Z]'));
ALTER TABLE invoices ADD COLUMN exchange TEXT CHECK (exchange IS NULL OR exchange GLOB '[A-Z][A-Z][A-Z] [0-9]*');
