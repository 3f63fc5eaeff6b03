ALTER TABLE time_entries DROP COLUMN tag_ids;
