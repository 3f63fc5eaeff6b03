-- Mirror of migrations/postgres/2026-11-24-000014_running_timers in SQLite's terms.
CREATE TABLE running_timers (
    team_id      TEXT NOT NULL,
    id           TEXT NOT NULL CHECK (length(id) = 36),
    user_id      TEXT NOT NULL,
    task_name    TEXT NOT NULL CHECK (length(task_name) BETWEEN 1 AND 255),
    description  TEXT CHECK (length(description) <= 1000),
    project_id   TEXT,
    section_id   TEXT,
    started_at   TEXT NOT NULL,
    PRIMARY KEY (team_id, id),
    UNIQUE (team_id, user_id),
    FOREIGN KEY (team_id, user_id) REFERENCES users (team_id, id),
    FOREIGN KEY (team_id, project_id) REFERENCES projects (team_id, id),
    FOREIGN KEY (team_id, project_id, section_id) REFERENCES sections (team_id, project_id, id),
    CHECK (section_id IS NULL OR project_id IS NOT NULL)
) STRICT;
CREATE INDEX running_timers_project ON running_timers (team_id, project_id);
CREATE INDEX running_timers_section ON running_timers (team_id, section_id);

CREATE TABLE running_timer_tags (
    team_id   TEXT NOT NULL,
    timer_id  TEXT NOT NULL,
    tag_id    TEXT NOT NULL,
    PRIMARY KEY (team_id, timer_id, tag_id),
    FOREIGN KEY (team_id, timer_id) REFERENCES running_timers (team_id, id) ON DELETE CASCADE,
    FOREIGN KEY (team_id, tag_id) REFERENCES tags (team_id, id) ON DELETE CASCADE
) STRICT;
CREATE INDEX running_timer_tags_tag ON running_timer_tags (team_id, tag_id);
