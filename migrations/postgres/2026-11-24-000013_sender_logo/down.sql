ALTER TABLE sender_addresses DROP COLUMN logo;
