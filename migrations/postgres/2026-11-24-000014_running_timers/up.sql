-- Running timers: at most one per user (the UNIQUE key), stopped into a time entry. Filed
-- as an entry is, so the same keys hold: a project or section with a running timer on it
-- is not deleted (409 in the API, as with entries), and a deleted tag leaves the timers
-- it was on.
CREATE TABLE running_timers (
    team_id      uuid        NOT NULL,
    id           uuid        NOT NULL,
    user_id      uuid        NOT NULL,
    task_name    text        NOT NULL CHECK (char_length(task_name) BETWEEN 1 AND 255),
    description  text        CHECK (char_length(description) <= 1000),
    project_id   uuid,
    section_id   uuid,
    started_at   timestamptz NOT NULL,
    PRIMARY KEY (team_id, id),
    UNIQUE (team_id, user_id),
    FOREIGN KEY (team_id, user_id) REFERENCES users (team_id, id),
    FOREIGN KEY (team_id, project_id) REFERENCES projects (team_id, id),
    FOREIGN KEY (team_id, project_id, section_id) REFERENCES sections (team_id, project_id, id),
    CHECK (section_id IS NULL OR project_id IS NOT NULL)
);
-- The delete checks of projects and sections.
CREATE INDEX running_timers_project ON running_timers (team_id, project_id);
CREATE INDEX running_timers_section ON running_timers (team_id, section_id);

CREATE TABLE running_timer_tags (
    team_id   uuid NOT NULL,
    timer_id  uuid NOT NULL,
    tag_id    uuid NOT NULL,
    PRIMARY KEY (team_id, timer_id, tag_id),
    FOREIGN KEY (team_id, timer_id) REFERENCES running_timers (team_id, id) ON DELETE CASCADE,
    FOREIGN KEY (team_id, tag_id) REFERENCES tags (team_id, id) ON DELETE CASCADE
);
CREATE INDEX running_timer_tags_tag ON running_timer_tags (team_id, tag_id);
