-- The tool calls of each run, in order, as a JSON array of {name, arguments, result, ok,
-- duration_ms}: read with the run, never queried by their parts. Earlier runs made none.
ALTER TABLE agent_runs ADD COLUMN tool_calls TEXT NOT NULL DEFAULT '[]';
