-- A project may belong to a client: only that client's invoices bill its time. Every
-- existing project belongs to none, so what any invoice may bill stays as it was. The
-- client is referred to within the team, and a client with projects cannot be deleted.
ALTER TABLE projects ADD COLUMN client_id uuid;
ALTER TABLE projects ADD CONSTRAINT projects_client_fkey
    FOREIGN KEY (team_id, client_id) REFERENCES clients (team_id, id);
CREATE INDEX projects_client ON projects (team_id, client_id) WHERE client_id IS NOT NULL;
