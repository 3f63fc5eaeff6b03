ALTER TABLE recurring_invoices DROP COLUMN created_by;
ALTER TABLE webhook_endpoints DROP COLUMN created_by;
ALTER TABLE events DROP COLUMN owner_id;
