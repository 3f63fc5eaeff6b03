ALTER TABLE agent_deliveries DROP COLUMN lease_until;
