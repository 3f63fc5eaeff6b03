-- Mirror of migrations/postgres/2026-11-20-000002_tracking in SQLite's terms. Timestamps
-- are RFC 3339 TEXT in UTC, written in one format, so they compare and sort as text.

CREATE TABLE projects (
    team_id     TEXT NOT NULL REFERENCES teams (id),
    id          TEXT NOT NULL CHECK (length(id) = 36),
    title       TEXT NOT NULL CHECK (length(title) BETWEEN 1 AND 255),
    code        TEXT CHECK (length(code) BETWEEN 1 AND 50),
    status      TEXT NOT NULL CHECK (status IN ('PENDING', 'ACTIVE', 'COMPLETED', 'ARCHIVED')),
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    PRIMARY KEY (team_id, id),
    UNIQUE (team_id, code)
) STRICT;

CREATE TABLE sections (
    team_id     TEXT NOT NULL,
    id          TEXT NOT NULL CHECK (length(id) = 36),
    project_id  TEXT NOT NULL,
    title       TEXT NOT NULL CHECK (length(title) BETWEEN 1 AND 255),
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    PRIMARY KEY (team_id, id),
    UNIQUE (team_id, project_id, id),
    FOREIGN KEY (team_id, project_id) REFERENCES projects (team_id, id) ON DELETE CASCADE
) STRICT;

CREATE TABLE tags (
    team_id     TEXT NOT NULL REFERENCES teams (id),
    id          TEXT NOT NULL CHECK (length(id) = 36),
    title       TEXT NOT NULL CHECK (length(title) BETWEEN 1 AND 255),
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    PRIMARY KEY (team_id, id)
) STRICT;

CREATE TABLE time_entries (
    team_id          TEXT    NOT NULL,
    id               TEXT    NOT NULL CHECK (length(id) = 36),
    user_id          TEXT    NOT NULL,
    duration_seconds INTEGER NOT NULL CHECK (duration_seconds BETWEEN 1 AND 9007199254740991),
    task_name        TEXT    NOT NULL CHECK (length(task_name) BETWEEN 1 AND 255),
    description      TEXT    CHECK (length(description) <= 1000),
    date             TEXT    NOT NULL,
    project_id       TEXT,
    section_id       TEXT,
    ai_generated     INTEGER NOT NULL CHECK (ai_generated IN (0, 1)),
    created_at       TEXT    NOT NULL,
    updated_at       TEXT    NOT NULL,
    PRIMARY KEY (team_id, id),
    FOREIGN KEY (team_id, user_id) REFERENCES users (team_id, id),
    FOREIGN KEY (team_id, project_id) REFERENCES projects (team_id, id),
    FOREIGN KEY (team_id, project_id, section_id) REFERENCES sections (team_id, project_id, id),
    CHECK (section_id IS NULL OR project_id IS NOT NULL)
) STRICT;
CREATE INDEX time_entries_user_date ON time_entries (team_id, user_id, date);
CREATE INDEX time_entries_date ON time_entries (team_id, date);
CREATE INDEX time_entries_project ON time_entries (team_id, project_id);
CREATE INDEX time_entries_section ON time_entries (team_id, section_id);

CREATE TABLE time_entry_tags (
    team_id   TEXT NOT NULL,
    entry_id  TEXT NOT NULL,
    tag_id    TEXT NOT NULL,
    PRIMARY KEY (team_id, entry_id, tag_id),
    FOREIGN KEY (team_id, entry_id) REFERENCES time_entries (team_id, id) ON DELETE CASCADE,
    FOREIGN KEY (team_id, tag_id) REFERENCES tags (team_id, id) ON DELETE CASCADE
) STRICT;
CREATE INDEX time_entry_tags_tag ON time_entry_tags (team_id, tag_id);
