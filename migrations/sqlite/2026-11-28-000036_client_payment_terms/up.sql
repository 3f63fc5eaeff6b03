-- Mirror of migrations/postgres/2026-11-28-000036_client_payment_terms in SQLite's terms.
ALTER TABLE clients ADD COLUMN payment_terms_days INTEGER CHECK (payment_terms_days BETWEEN 0 AND 365);
