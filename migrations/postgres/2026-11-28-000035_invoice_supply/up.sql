-- When the service was rendered (EN 16931 BT-72 as a day, BG-14 as a period) and the
-- buyer's purchase order (BT-13). A day is stored as a period of one day not marked a
-- period. Existing invoices state neither: their service date is their issue date.
ALTER TABLE invoices
    ADD COLUMN service_from date,
    ADD COLUMN service_to date,
    ADD COLUMN service_is_period boolean NOT NULL DEFAULT false,
    ADD COLUMN purchase_order text CHECK (char_length(purchase_order) BETWEEN 1 AND 200),
    ADD CONSTRAINT invoices_service_days CHECK (
        (service_from IS NULL AND service_to IS NULL AND NOT service_is_period)
        OR (service_from <= service_to AND (service_is_period OR service_from = service_to))
    );
