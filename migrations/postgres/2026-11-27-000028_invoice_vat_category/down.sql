ALTER TABLE invoices DROP COLUMN vat_exemption_reason;
ALTER TABLE invoices DROP COLUMN vat_category;
