ALTER TABLE agent_runs DROP COLUMN reply;
ALTER TABLE agent_runs DROP COLUMN model_input;
