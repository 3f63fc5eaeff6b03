ALTER TABLE clients DROP COLUMN payment_terms_days;
