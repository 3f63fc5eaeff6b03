-- Reminders chase only invoices the client has: e-mailed (sent_at), or marked sent by the
-- team. An invoice reminded before counts as sent, from its first reminder (the first sent,
-- else the first a policy step queued, else its last change); every other unsent invoice
-- loses the next reminder it had.
UPDATE invoices i
   SET sent_at = COALESCE(
         (SELECT min(m.sent_at) FROM messages m
           WHERE m.team_id = i.team_id AND m.invoice_id = i.id AND m.kind = 'reminder' AND m.sent_at IS NOT NULL),
         (SELECT min(r.queued_at) FROM invoice_reminders r WHERE r.team_id = i.team_id AND r.invoice_id = i.id),
         i.updated_at)
 WHERE i.sent_at IS NULL
   AND (i.reminders_sent > 0
        OR EXISTS (SELECT 1 FROM invoice_reminders r WHERE r.team_id = i.team_id AND r.invoice_id = i.id));
UPDATE invoices SET next_reminder_at = NULL WHERE sent_at IS NULL AND next_reminder_at IS NOT NULL;
