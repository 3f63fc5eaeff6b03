-- Back to messages about invoices only: the table is rebuilt as up.sql explains, and a
-- quote's messages go (with their attachments).
PRAGMA foreign_keys = OFF;
BEGIN;
DELETE FROM message_attachments WHERE (team_id, message_id) IN
    (SELECT team_id, id FROM messages WHERE quote_id IS NOT NULL);
CREATE TABLE messages_rebuilt (
    team_id        TEXT    NOT NULL,
    id             TEXT    NOT NULL CHECK (length(id) = 36),
    invoice_id     TEXT    NOT NULL,
    credit_note_id TEXT,
    kind           TEXT    NOT NULL CHECK (kind IN ('invoice', 'reminder', 'credit_note')),
    recipients_to  TEXT    NOT NULL CHECK (recipients_to <> ''),
    recipients_cc  TEXT    NOT NULL,
    subject        TEXT    NOT NULL CHECK (length(subject) BETWEEN 1 AND 255),
    body           TEXT    NOT NULL CHECK (length(body) BETWEEN 1 AND 20000),
    status         TEXT    NOT NULL CHECK (status IN ('queued', 'sending', 'sent', 'failed')),
    attempts       INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    last_error     TEXT,
    message_id     TEXT    NOT NULL CHECK (length(message_id) BETWEEN 3 AND 300),
    reminder_step  INTEGER,
    queued_at      TEXT    NOT NULL,
    sent_at        TEXT,
    PRIMARY KEY (team_id, id),
    FOREIGN KEY (team_id, invoice_id) REFERENCES invoices (team_id, id) ON DELETE CASCADE,
    FOREIGN KEY (team_id, credit_note_id) REFERENCES credit_notes (team_id, id) ON DELETE CASCADE
) STRICT;
INSERT INTO messages_rebuilt (team_id, id, invoice_id, credit_note_id, kind, recipients_to, recipients_cc, subject, body, status, attempts, last_error, message_id, reminder_step, queued_at, sent_at)
SELECT team_id, id, invoice_id, credit_note_id, kind, recipients_to, recipients_cc, subject, body, status, attempts, last_error, message_id, reminder_step, queued_at, sent_at FROM messages WHERE quote_id IS NULL;
DROP TABLE messages;
ALTER TABLE messages_rebuilt RENAME TO messages;
CREATE INDEX messages_newest ON messages (team_id, id DESC);
CREATE INDEX messages_of_invoice ON messages (team_id, invoice_id, id DESC);
COMMIT;
PRAGMA foreign_keys = ON;
