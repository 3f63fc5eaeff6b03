ALTER TABLE agent_runs DROP COLUMN tool_calls;
