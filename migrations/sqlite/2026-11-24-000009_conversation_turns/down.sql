-- Conversation turns are shared through PostgreSQL only: SQLite serves one process, which
-- keeps its conversations' lines in memory. The version is kept so both trees stay alike.
SELECT 1;
