DROP INDEX projects_client;
ALTER TABLE projects DROP COLUMN client_id;
