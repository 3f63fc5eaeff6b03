DROP TABLE webhook_deliveries;
DROP TABLE webhook_endpoints;
DROP TABLE invoice_reminders;
DROP TABLE message_attachments;
DROP TABLE messages;
DROP TABLE reminder_policies;
ALTER TABLE clients DROP COLUMN reminders_enabled;
DROP INDEX invoices_overdue;
DROP INDEX invoices_next_reminder;
ALTER TABLE invoices
    DROP COLUMN sent_at,
    DROP COLUMN reminders_sent,
    DROP COLUMN reminder_step,
    DROP COLUMN next_reminder_at,
    DROP COLUMN overdue_at;
DROP TABLE jobs;
DROP TABLE event_subscriptions;
DROP TABLE events;
