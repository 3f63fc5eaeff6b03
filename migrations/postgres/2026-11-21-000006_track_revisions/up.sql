-- A revision per team that grows with every committed change a listing of time entries can
-- show: an entry inserted, updated or deleted, a tag link added or removed, a tag renamed or
-- deleted. Triggers bump it in the transaction of the change, whoever makes it (billable of
-- any version, or a script), so a reader that sees revision r sees every change up to r:
-- the HTTP adapter keeps rendered listings and serves one again while the revision holds.
--
-- The revision is the sum of 16 counters per team. A transaction bumps the counter its id
-- picks, and only that one: it holds the counter's row lock until it commits, so with one
-- row per team every change of a team would wait for the one before it to commit, and with
-- two counters per transaction two transactions could wait on each other.
CREATE TABLE track_revisions (
    team_id   uuid     NOT NULL REFERENCES teams (id),
    shard     smallint NOT NULL CHECK (shard BETWEEN 0 AND 15),
    revision  bigint   NOT NULL CHECK (revision > 0),
    PRIMARY KEY (team_id, shard)
);

CREATE FUNCTION bump_track_revision() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    team uuid;
BEGIN
    IF TG_OP = 'DELETE' THEN
        team := OLD.team_id;
    ELSE
        team := NEW.team_id;
    END IF;
    INSERT INTO track_revisions (team_id, shard, revision)
    VALUES (team, (txid_current() % 16)::smallint, 1)
    ON CONFLICT (team_id, shard) DO UPDATE SET revision = track_revisions.revision + 1;
    RETURN NULL;
END
$$;

CREATE TRIGGER bump_track_revision AFTER INSERT OR UPDATE OR DELETE ON time_entries
    FOR EACH ROW EXECUTE FUNCTION bump_track_revision();
CREATE TRIGGER bump_track_revision AFTER INSERT OR UPDATE OR DELETE ON time_entry_tags
    FOR EACH ROW EXECUTE FUNCTION bump_track_revision();
-- A new tag is on no entry yet; a renamed or deleted one changes the entries that have it.
CREATE TRIGGER bump_track_revision AFTER UPDATE OF title OR DELETE ON tags
    FOR EACH ROW EXECUTE FUNCTION bump_track_revision();
