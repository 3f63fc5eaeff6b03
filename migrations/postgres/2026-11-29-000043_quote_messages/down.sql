DELETE FROM messages WHERE quote_id IS NOT NULL;
DROP INDEX messages_of_quote;
ALTER TABLE messages DROP CONSTRAINT messages_kind_check;
ALTER TABLE messages ADD CONSTRAINT messages_kind_check
    CHECK (kind IN ('invoice', 'reminder', 'credit_note'));
ALTER TABLE messages DROP CONSTRAINT messages_one_document;
ALTER TABLE messages DROP COLUMN quote_id;
ALTER TABLE messages ALTER COLUMN invoice_id SET NOT NULL;
