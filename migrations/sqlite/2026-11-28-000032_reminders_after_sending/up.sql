-- Mirror of migrations/postgres/2026-11-28-000032_reminders_after_sending in SQLite's terms.
UPDATE invoices
   SET sent_at = COALESCE(
         (SELECT min(m.sent_at) FROM messages m
           WHERE m.team_id = invoices.team_id AND m.invoice_id = invoices.id AND m.kind = 'reminder'
             AND m.sent_at IS NOT NULL),
         (SELECT min(r.queued_at) FROM invoice_reminders r
           WHERE r.team_id = invoices.team_id AND r.invoice_id = invoices.id),
         invoices.updated_at)
 WHERE sent_at IS NULL
   AND (reminders_sent > 0
        OR EXISTS (SELECT 1 FROM invoice_reminders r WHERE r.team_id = invoices.team_id AND r.invoice_id = invoices.id));
UPDATE invoices SET next_reminder_at = NULL WHERE sent_at IS NULL AND next_reminder_at IS NOT NULL;
