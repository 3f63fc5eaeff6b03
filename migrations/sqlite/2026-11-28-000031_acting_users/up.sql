-- Mirror of migrations/postgres/2026-11-28-000031_acting_users in SQLite's terms.
ALTER TABLE events ADD COLUMN owner_id TEXT CHECK (owner_id IS NULL OR length(owner_id) = 36);
ALTER TABLE webhook_endpoints ADD COLUMN created_by TEXT CHECK (created_by IS NULL OR length(created_by) = 36);
ALTER TABLE recurring_invoices ADD COLUMN created_by TEXT CHECK (created_by IS NULL OR length(created_by) = 36);

UPDATE events
   SET owner_id = CASE WHEN json_valid(data) AND length(json_extract(data, '$.userId')) = 36
                       THEN json_extract(data, '$.userId') END
 WHERE type GLOB 'time_entry.*' OR type GLOB 'timer.*';

UPDATE webhook_endpoints
   SET created_by = (SELECT u.id FROM users u WHERE u.team_id = webhook_endpoints.team_id
                      ORDER BY CASE u.role WHEN 'owner' THEN 0 WHEN 'admin' THEN 1 ELSE 2 END, u.created_at, u.id
                      LIMIT 1);
UPDATE recurring_invoices
   SET created_by = (SELECT u.id FROM users u WHERE u.team_id = recurring_invoices.team_id
                      ORDER BY CASE u.role WHEN 'owner' THEN 0 WHEN 'admin' THEN 1 ELSE 2 END, u.created_at, u.id
                      LIMIT 1);
