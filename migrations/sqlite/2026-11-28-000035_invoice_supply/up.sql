-- Mirror of migrations/postgres/2026-11-28-000035_invoice_supply in SQLite's terms; a
-- column added by ALTER TABLE checks only itself, so the days' order is the store's.
ALTER TABLE invoices ADD COLUMN service_from TEXT CHECK (service_from IS NULL OR length(service_from) = 10);
ALTER TABLE invoices ADD COLUMN service_to TEXT CHECK (service_to IS NULL OR length(service_to) = 10);
ALTER TABLE invoices ADD COLUMN service_is_period INTEGER NOT NULL DEFAULT 0 CHECK (service_is_period IN (0, 1));
ALTER TABLE invoices ADD COLUMN purchase_order TEXT CHECK (purchase_order IS NULL OR length(purchase_order) BETWEEN 1 AND 200);
