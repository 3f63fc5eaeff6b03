-- Nothing to take back: which invoices were sent by their reminders is not kept apart.
SELECT 1;
