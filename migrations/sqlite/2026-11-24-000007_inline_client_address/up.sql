-- A client made from an invoice's inline details without an address has an empty first
-- line and postal code; the clients API still requires both. SQLite cannot change a CHECK
-- constraint, so the table is rebuilt (https://sqlite.org/lang_altertable.html, "other
-- kinds of table schema changes"): invoices keep referring to it by name.
PRAGMA foreign_keys = OFF;
BEGIN;
CREATE TABLE clients_rebuilt (
    team_id     TEXT NOT NULL REFERENCES teams (id),
    id          TEXT NOT NULL CHECK (length(id) = 36),
    name        TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
    email       TEXT NOT NULL CHECK (length(email) BETWEEN 3 AND 254),
    phone       TEXT NOT NULL CHECK (length(phone) <= 255),
    vat_number  TEXT NOT NULL CHECK (length(vat_number) <= 255),
    line1       TEXT NOT NULL CHECK (length(line1) <= 255),
    line2       TEXT NOT NULL CHECK (length(line2) <= 255),
    line3       TEXT NOT NULL CHECK (length(line3) <= 255),
    postal_code TEXT NOT NULL CHECK (length(postal_code) <= 32),
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    email_key   TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (team_id, id)
) STRICT;
INSERT INTO clients_rebuilt
    (team_id, id, name, email, phone, vat_number, line1, line2, line3, postal_code,
     created_at, updated_at, email_key)
SELECT team_id, id, name, email, phone, vat_number, line1, line2, line3, postal_code,
       created_at, updated_at, email_key
FROM clients;
DROP TABLE clients;
ALTER TABLE clients_rebuilt RENAME TO clients;
CREATE INDEX clients_email_key ON clients (team_id, email_key, created_at);
COMMIT;
PRAGMA foreign_keys = ON;
