DELETE FROM agent_runs WHERE trigger = 'events';
ALTER TABLE agent_runs DROP CONSTRAINT agent_runs_trigger_check;
ALTER TABLE agent_runs ADD CONSTRAINT agent_runs_trigger_check CHECK (trigger IN ('webhook', 'github'));
