-- Each entry keeps the ids of its tags beside its other fields (comma-separated, in no
-- particular order), so that a listing reads its entries' tags with the entries instead
-- of joining a link row per tag. time_entry_tags stays the record the tag filter, the
-- foreign keys and the delete cascade work on; every write of an entry's tags writes both
-- in one transaction, and deleting a tag takes its id out of the entries it was on.
ALTER TABLE time_entries ADD COLUMN tag_ids text NOT NULL DEFAULT '';
UPDATE time_entries SET tag_ids = coalesce(
    (SELECT group_concat(tag_id, ',') FROM time_entry_tags AS links
     WHERE links.team_id = time_entries.team_id AND links.entry_id = time_entries.id), '');
