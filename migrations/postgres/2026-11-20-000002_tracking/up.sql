-- Time tracking: projects, their sections, tags, time entries and the entry-tag links.
-- The delete rules are storage rules too: an entry's project and section references
-- restrict deletion (409 in the API), a project's sections go with it, and a tag's links
-- go with the tag.

CREATE TABLE projects (
    team_id     uuid        NOT NULL REFERENCES teams (id),
    id          uuid        NOT NULL,
    title       text        NOT NULL CHECK (char_length(title) BETWEEN 1 AND 255),
    -- NULL when the project has none; NULLs never collide in the UNIQUE below.
    code        text        CHECK (char_length(code) BETWEEN 1 AND 50),
    status      text        NOT NULL CHECK (status IN ('PENDING', 'ACTIVE', 'COMPLETED', 'ARCHIVED')),
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    PRIMARY KEY (team_id, id),
    UNIQUE (team_id, code)
);

CREATE TABLE sections (
    team_id     uuid        NOT NULL,
    id          uuid        NOT NULL,
    project_id  uuid        NOT NULL,
    title       text        NOT NULL CHECK (char_length(title) BETWEEN 1 AND 255),
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    PRIMARY KEY (team_id, id),
    -- Lets an entry's (project, section) pair be checked by a foreign key.
    UNIQUE (team_id, project_id, id),
    FOREIGN KEY (team_id, project_id) REFERENCES projects (team_id, id) ON DELETE CASCADE
);

CREATE TABLE tags (
    team_id     uuid        NOT NULL REFERENCES teams (id),
    id          uuid        NOT NULL,
    title       text        NOT NULL CHECK (char_length(title) BETWEEN 1 AND 255),
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    PRIMARY KEY (team_id, id)
);

CREATE TABLE time_entries (
    team_id          uuid        NOT NULL,
    id               uuid        NOT NULL,
    user_id          uuid        NOT NULL,
    duration_seconds bigint      NOT NULL CHECK (duration_seconds BETWEEN 1 AND 9007199254740991),
    task_name        text        NOT NULL CHECK (char_length(task_name) BETWEEN 1 AND 255),
    description      text        CHECK (char_length(description) <= 1000),
    date             timestamptz NOT NULL,
    project_id       uuid,
    section_id       uuid,
    ai_generated     boolean     NOT NULL,
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL,
    PRIMARY KEY (team_id, id),
    FOREIGN KEY (team_id, user_id) REFERENCES users (team_id, id),
    FOREIGN KEY (team_id, project_id) REFERENCES projects (team_id, id),
    -- A section implies its project: the pair must be a real one.
    FOREIGN KEY (team_id, project_id, section_id) REFERENCES sections (team_id, project_id, id),
    CHECK (section_id IS NULL OR project_id IS NOT NULL)
);
-- The listings: one user's entries in a period, or the whole team's.
CREATE INDEX time_entries_user_date ON time_entries (team_id, user_id, date);
CREATE INDEX time_entries_date ON time_entries (team_id, date);
-- The delete checks of projects and sections.
CREATE INDEX time_entries_project ON time_entries (team_id, project_id);
CREATE INDEX time_entries_section ON time_entries (team_id, section_id);

CREATE TABLE time_entry_tags (
    team_id   uuid NOT NULL,
    entry_id  uuid NOT NULL,
    tag_id    uuid NOT NULL,
    PRIMARY KEY (team_id, entry_id, tag_id),
    FOREIGN KEY (team_id, entry_id) REFERENCES time_entries (team_id, id) ON DELETE CASCADE,
    FOREIGN KEY (team_id, tag_id) REFERENCES tags (team_id, id) ON DELETE CASCADE
);
CREATE INDEX time_entry_tags_tag ON time_entry_tags (team_id, tag_id);
