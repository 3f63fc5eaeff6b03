-- A revision per team that grows with every committed change a listing of time entries can
-- show: an entry inserted, updated or deleted, a tag link added or removed, a tag renamed or
-- deleted. Triggers bump it in the transaction of the change, whoever makes it (billable of
-- any version, or a script), so a reader that sees revision r sees every change up to r:
-- the HTTP adapter keeps rendered listings and serves one again while the revision holds.
--
-- The revision is the sum of 16 counters per team, as on PostgreSQL, where transactions
-- writing at once bump different counters. SQLite writes one transaction at a time, so its
-- triggers bump counter 0.
CREATE TABLE track_revisions (
    team_id   TEXT    NOT NULL REFERENCES teams (id),
    shard     INTEGER NOT NULL CHECK (shard BETWEEN 0 AND 15),
    revision  INTEGER NOT NULL CHECK (revision > 0),
    PRIMARY KEY (team_id, shard)
) STRICT;

CREATE TRIGGER time_entries_insert_bumps_track_revision AFTER INSERT ON time_entries BEGIN
    INSERT INTO track_revisions (team_id, shard, revision) VALUES (NEW.team_id, 0, 1)
    ON CONFLICT (team_id, shard) DO UPDATE SET revision = revision + 1;
END;

CREATE TRIGGER time_entries_update_bumps_track_revision AFTER UPDATE ON time_entries BEGIN
    INSERT INTO track_revisions (team_id, shard, revision) VALUES (NEW.team_id, 0, 1)
    ON CONFLICT (team_id, shard) DO UPDATE SET revision = revision + 1;
END;

CREATE TRIGGER time_entries_delete_bumps_track_revision AFTER DELETE ON time_entries BEGIN
    INSERT INTO track_revisions (team_id, shard, revision) VALUES (OLD.team_id, 0, 1)
    ON CONFLICT (team_id, shard) DO UPDATE SET revision = revision + 1;
END;

CREATE TRIGGER time_entry_tags_insert_bumps_track_revision AFTER INSERT ON time_entry_tags BEGIN
    INSERT INTO track_revisions (team_id, shard, revision) VALUES (NEW.team_id, 0, 1)
    ON CONFLICT (team_id, shard) DO UPDATE SET revision = revision + 1;
END;

CREATE TRIGGER time_entry_tags_delete_bumps_track_revision AFTER DELETE ON time_entry_tags BEGIN
    INSERT INTO track_revisions (team_id, shard, revision) VALUES (OLD.team_id, 0, 1)
    ON CONFLICT (team_id, shard) DO UPDATE SET revision = revision + 1;
END;

-- A new tag is on no entry yet; a renamed or deleted one changes the entries that have it.
CREATE TRIGGER tags_update_bumps_track_revision AFTER UPDATE OF title ON tags BEGIN
    INSERT INTO track_revisions (team_id, shard, revision) VALUES (NEW.team_id, 0, 1)
    ON CONFLICT (team_id, shard) DO UPDATE SET revision = revision + 1;
END;

CREATE TRIGGER tags_delete_bumps_track_revision AFTER DELETE ON tags BEGIN
    INSERT INTO track_revisions (team_id, shard, revision) VALUES (OLD.team_id, 0, 1)
    ON CONFLICT (team_id, shard) DO UPDATE SET revision = revision + 1;
END;
