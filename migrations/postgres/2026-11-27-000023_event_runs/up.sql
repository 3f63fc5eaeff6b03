-- The agent runs on events too (the `events` trigger of its definition).
ALTER TABLE agent_runs DROP CONSTRAINT agent_runs_trigger_check;
ALTER TABLE agent_runs ADD CONSTRAINT agent_runs_trigger_check CHECK (trigger IN ('webhook', 'github', 'events'));
