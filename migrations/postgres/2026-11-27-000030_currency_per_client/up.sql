-- A client's currency (NULL: the team's, as every existing client is billed), and for an
-- invoice in another currency than its team's, the exchange: the team's currency and the
-- rate (units of the team's per unit of the invoice's), written `EUR 1.0523`. One column,
-- as the invoices table is at the 32 columns the storage adapter's diesel build maps.
-- Existing invoices are in their team's currency: no exchange.
ALTER TABLE clients ADD COLUMN currency text CHECK (currency ~ '^[A-Z]{3}$');
ALTER TABLE invoices ADD COLUMN exchange text CHECK (exchange ~ '^[A-Z]{3} [0-9]+(\.[0-9]+)?$');
