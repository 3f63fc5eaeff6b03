ALTER TABLE agent_deliveries DROP COLUMN summary;
