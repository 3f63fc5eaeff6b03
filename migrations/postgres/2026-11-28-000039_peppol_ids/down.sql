ALTER TABLE sender_addresses DROP COLUMN peppol_id;
ALTER TABLE clients DROP COLUMN peppol_id;
