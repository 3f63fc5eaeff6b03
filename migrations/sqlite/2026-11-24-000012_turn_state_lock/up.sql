-- Conversation lines live in PostgreSQL only; the version is kept so both trees stay alike.
SELECT 1;
