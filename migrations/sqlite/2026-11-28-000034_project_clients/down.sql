-- Back to projects without a client: the table is rebuilt as up.sql explains.
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
    PRIMARY KEY (team_id, id),
    UNIQUE (team_id, code)
) STRICT;
INSERT INTO projects_rebuilt (team_id, id, title, code, status, created_at, updated_at, rate)
SELECT team_id, id, title, code, status, created_at, updated_at, rate FROM projects;
DROP TABLE projects;
ALTER TABLE projects_rebuilt RENAME TO projects;
COMMIT;
PRAGMA foreign_keys = ON;
