ALTER TABLE invoices DROP COLUMN purchase_order;
ALTER TABLE invoices DROP COLUMN service_is_period;
ALTER TABLE invoices DROP COLUMN service_to;
ALTER TABLE invoices DROP COLUMN service_from;
