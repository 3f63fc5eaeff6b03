-- A running delivery is leased to the process running it, which renews the lease while
-- the run goes on. A delivery whose lease ended (its process died or lost touch) is queued
-- again by any process, so replicas take over each other's work; NULL (rows running
-- before this migration) counts as ended.
ALTER TABLE agent_deliveries ADD COLUMN lease_until timestamptz;
