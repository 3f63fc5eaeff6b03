-- A revision per team that grows with every committed change a listing of time entries can
-- show (an entry created, changed or deleted; a tag renamed or deleted). The change bumps
-- it in its own transaction, so a reader that sees revision r sees every change up to r:
-- the HTTP adapter keeps rendered listings and serves one again while the revision holds.
--
-- The revision is the sum of 16 counters, and a change bumps the one its entry's or tag's
-- id picks: a change holds its counter's row lock until it commits, and with one row per
-- team every change of a team would wait for the one before it to commit. Each committed
-- change still adds exactly one to the sum.
CREATE TABLE track_revisions (
    team_id   uuid    NOT NULL REFERENCES teams (id),
    shard     smallint NOT NULL CHECK (shard BETWEEN 0 AND 15),
    revision  bigint  NOT NULL CHECK (revision > 0),
    PRIMARY KEY (team_id, shard)
);
