-- An invoice's VAT category (EN 16931 BT-151, UNTDID 5305) and, where the category
-- charges no VAT for a reason, that reason (BT-120). Existing invoices are standard rated.
ALTER TABLE invoices ADD COLUMN vat_category text NOT NULL DEFAULT 'S'
    CHECK (vat_category IN ('S', 'Z', 'E', 'AE', 'K', 'G', 'O'));
ALTER TABLE invoices ADD COLUMN vat_exemption_reason text
    CHECK (length(vat_exemption_reason) BETWEEN 1 AND 1000);
