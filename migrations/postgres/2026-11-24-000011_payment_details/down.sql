ALTER TABLE sender_addresses DROP COLUMN payment_details;
