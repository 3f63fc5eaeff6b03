-- A client's and a sender address's Peppol address, `scheme:identifier` (EN 16931 BT-49,
-- BT-34), which Peppol BIS e-invoices carry. Existing rows have none.
ALTER TABLE clients ADD COLUMN peppol_id text CHECK (peppol_id ~ '^[0-9]{4}:.+$');
ALTER TABLE sender_addresses ADD COLUMN peppol_id text CHECK (peppol_id ~ '^[0-9]{4}:.+$');
