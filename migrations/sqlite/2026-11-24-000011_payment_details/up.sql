-- How to pay the sender (bank, IBAN, BIC, terms), printed on its invoices; empty until set.
ALTER TABLE sender_addresses ADD COLUMN payment_details TEXT NOT NULL DEFAULT '';
