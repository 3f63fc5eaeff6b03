-- A quote is e-mailed as an invoice is: a message is about an invoice (with a credit note
-- of it, or none) or about a quote, never both.
ALTER TABLE messages ALTER COLUMN invoice_id DROP NOT NULL;
ALTER TABLE messages ADD COLUMN quote_id uuid;
ALTER TABLE messages ADD FOREIGN KEY (team_id, quote_id) REFERENCES quotes (team_id, id) ON DELETE CASCADE;
ALTER TABLE messages ADD CONSTRAINT messages_one_document
    CHECK ((invoice_id IS NULL) <> (quote_id IS NULL) AND (credit_note_id IS NULL OR invoice_id IS NOT NULL));
ALTER TABLE messages DROP CONSTRAINT messages_kind_check;
ALTER TABLE messages ADD CONSTRAINT messages_kind_check
    CHECK (kind IN ('invoice', 'reminder', 'credit_note', 'quote'));
CREATE INDEX messages_of_quote ON messages (team_id, quote_id, id DESC) WHERE quote_id IS NOT NULL;
