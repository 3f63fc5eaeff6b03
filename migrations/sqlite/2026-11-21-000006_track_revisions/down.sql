DROP TABLE track_revisions;
