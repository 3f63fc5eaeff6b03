-- What a run's model read (the input as rendered for it, the untrusted-content frame of a
-- GitHub event included) and the reply it gave, each clipped to 4,000 characters, for
-- GET /v1/agent/runs/{id} and `billable runs show`. Runs recorded before have neither.
ALTER TABLE agent_runs ADD COLUMN model_input text;
ALTER TABLE agent_runs ADD COLUMN reply text;
