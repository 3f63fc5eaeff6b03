-- Mirror of migrations/postgres/2026-11-28-000034_project_clients in SQLite's terms. An
-- added column cannot refer to a table by two columns, so the table is rebuilt
-- (https://sqlite.org/lang_altertable.html, "other kinds of table schema changes"):
-- sections, time entries and timers keep referring to it by name.
PRAGMA foreign_keys = OFF;
BEGIN;
CREATE TABLE projects_rebuilt (
    team_id     TEXT NOT NULL REFERENCES teams (id),
    id          TEXT NOT NULL CHECK (length(id) = 36),
    title       TEXT NOT NULL CHECK (length(title) BETWEEN 1 AND 255),
    code        TEXT CHECK (length(code) BETWEEN 1 AND 50),
    status      TEXT NOT NULL CHECK (status IN ('PENDING', 'ACTIVE', 'COMPLETED', 'ARCHIVED')),
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    rate        TEXT CHECK (rate IS NULL OR CAST(rate AS REAL) >= 0),
    client_id   TEXT CHECK (client_id IS NULL OR length(client_id) = 36),
    PRIMARY KEY (team_id, id),
    UNIQUE (team_id, code),
    FOREIGN KEY (team_id, client_id) REFERENCES clients (team_id, id)
) STRICT;
INSERT INTO projects_rebuilt (team_id, id, title, code, status, created_at, updated_at, rate)
SELECT team_id, id, title, code, status, created_at, updated_at, rate FROM projects;
DROP TABLE projects;
ALTER TABLE projects_rebuilt RENAME TO projects;
CREATE INDEX projects_client ON projects (team_id, client_id) WHERE client_id IS NOT NULL;
COMMIT;
PRAGMA foreign_keys = ON;
