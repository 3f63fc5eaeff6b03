ALTER TABLE invoices
    DROP CONSTRAINT invoices_service_days,
    DROP COLUMN purchase_order,
    DROP COLUMN service_is_period,
    DROP COLUMN service_to,
    DROP COLUMN service_from;
