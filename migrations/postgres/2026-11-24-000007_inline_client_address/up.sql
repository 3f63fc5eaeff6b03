-- A client made from an invoice's inline details without an address has an empty first
-- line and postal code; the clients API still requires both.
ALTER TABLE clients
    DROP CONSTRAINT clients_line1_check,
    DROP CONSTRAINT clients_postal_code_check,
    ADD CONSTRAINT clients_line1_check CHECK (char_length(line1) <= 255),
    ADD CONSTRAINT clients_postal_code_check CHECK (char_length(postal_code) <= 32);
