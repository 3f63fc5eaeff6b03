DROP TABLE agent_runs;
DROP TABLE agent_messages;
