-- Mirror of migrations/postgres/2026-11-28-000039_peppol_ids in SQLite's terms.
ALTER TABLE clients ADD COLUMN peppol_id TEXT CHECK (peppol_id IS NULL OR peppol_id GLOB '[0-9][0-9][0-9][0-9]:?*');
ALTER TABLE sender_addresses ADD COLUMN peppol_id TEXT CHECK (peppol_id IS NULL OR peppol_id GLOB '[0-9][0-9][0-9][0-9]:?*');
