-- How each team numbers its documents: a pattern per series, where it chose one (the
-- defaults, INV-{0000}, CN-{0000} and Q-{0000}, where it did not).
CREATE TABLE numbering_patterns (
    team_id TEXT NOT NULL REFERENCES teams (id),
    series  TEXT NOT NULL CHECK (series IN ('invoices', 'credit_notes', 'quotes')),
    pattern TEXT NOT NULL CHECK (length(pattern) BETWEEN 1 AND 40),
    PRIMARY KEY (team_id, series)
);

-- The counts of each series: year 0 is the running count of the patterns without a year,
-- any other the count of that issue year.
CREATE TABLE numbering_counts (
    team_id      TEXT    NOT NULL REFERENCES teams (id),
    series       TEXT    NOT NULL CHECK (series IN ('invoices', 'credit_notes', 'quotes')),
    year         INTEGER NOT NULL CHECK (year >= 0),
    last_counter INTEGER NOT NULL CHECK (last_counter > 0),
    PRIMARY KEY (team_id, series, year)
);

-- Every number so far came from the default patterns, whose count was the serial.
INSERT INTO numbering_counts (team_id, series, year, last_counter)
    SELECT team_id, 'invoices', 0, last_serial FROM invoice_serials;
INSERT INTO numbering_counts (team_id, series, year, last_counter)
    SELECT team_id, 'credit_notes', 0, last_serial FROM credit_note_serials;

-- Each document keeps the number it was issued with. An invoice keeps its counter and
-- search key too (lower case, digit runs without leading zeros: INV-0042 is inv-42).
ALTER TABLE invoices ADD COLUMN number TEXT NOT NULL DEFAULT '';
ALTER TABLE invoices ADD COLUMN number_counter INTEGER NOT NULL DEFAULT 0;
ALTER TABLE invoices ADD COLUMN number_key TEXT NOT NULL DEFAULT '';
UPDATE invoices SET
    number = printf('INV-%04d', serial),
    number_counter = serial,
    number_key = 'inv-' || serial;
CREATE UNIQUE INDEX invoices_number ON invoices (team_id, number);
CREATE INDEX invoices_number_key ON invoices (team_id, number_key);
CREATE INDEX invoices_number_counter ON invoices (team_id, number_counter);

ALTER TABLE credit_notes ADD COLUMN number TEXT NOT NULL DEFAULT '';
ALTER TABLE credit_notes ADD COLUMN number_counter INTEGER NOT NULL DEFAULT 0;
UPDATE credit_notes SET number = printf('CN-%04d', serial), number_counter = serial;
CREATE UNIQUE INDEX credit_notes_number ON credit_notes (team_id, number);
