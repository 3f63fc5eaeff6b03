ALTER TABLE clients
    DROP CONSTRAINT clients_line1_check,
    DROP CONSTRAINT clients_postal_code_check,
    ADD CONSTRAINT clients_line1_check CHECK (char_length(line1) BETWEEN 1 AND 255),
    ADD CONSTRAINT clients_postal_code_check CHECK (char_length(postal_code) BETWEEN 1 AND 32);
