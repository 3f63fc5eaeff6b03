DROP TRIGGER bump_track_revision ON tags;
DROP TRIGGER bump_track_revision ON time_entry_tags;
DROP TRIGGER bump_track_revision ON time_entries;
DROP FUNCTION bump_track_revision();
DROP TABLE track_revisions;
