-- A client's payment terms: days from an invoice's issue to its due date, for invoices
-- that give none. Existing clients have none, so their invoices stay as they are made.
ALTER TABLE clients ADD COLUMN payment_terms_days integer CHECK (payment_terms_days BETWEEN 0 AND 365);
