-- A line's own VAT: its category, percentage and exemption reason, each NULL where the
-- line states none and takes its invoice's (or, on a credit note, its invoice's). Every
-- existing line states none, so every existing line keeps its invoice's category and rate
-- and no amount changes.
ALTER TABLE line_items
    ADD COLUMN vat_category text CHECK (vat_category IN ('S', 'Z', 'E', 'AE', 'K', 'G', 'O')),
    ADD COLUMN tax_percentage numeric CHECK (tax_percentage BETWEEN 0 AND 100),
    ADD COLUMN vat_exemption_reason text;
ALTER TABLE credit_note_lines
    ADD COLUMN vat_category text CHECK (vat_category IN ('S', 'Z', 'E', 'AE', 'K', 'G', 'O')),
    ADD COLUMN tax_percentage numeric CHECK (tax_percentage BETWEEN 0 AND 100),
    ADD COLUMN vat_exemption_reason text;
