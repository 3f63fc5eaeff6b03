-- The sender's logo (PNG or SVG, at most 256 KiB), printed on its invoices; NULL until set.
ALTER TABLE sender_addresses ADD COLUMN logo BYTEA;
