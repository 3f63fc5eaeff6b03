-- Who an endpoint and a recurring invoice act for, and whose own data an event carries.
--
-- A webhook endpoint receives, and a recurring invoice bills, only what the user who made
-- it may read and bill, as the team has that user when each delivery or run is made. The
-- ones made before are the team's oldest owner's (its oldest admin's, or user's, where it has
-- none). A time entry's or a timer's event carries its user, from the data it recorded; a
-- personal event whose user cannot be read from it stays NULL and goes to owners' and
-- admins' endpoints only. A row an earlier release writes during an upgrade leaves
-- created_by NULL, which reads as the same user.
ALTER TABLE events ADD COLUMN owner_id uuid;
ALTER TABLE webhook_endpoints ADD COLUMN created_by uuid;
ALTER TABLE recurring_invoices ADD COLUMN created_by uuid;

UPDATE events
   SET owner_id = substring(data from '"userId":"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"')::uuid
 WHERE type LIKE 'time\_entry.%' OR type LIKE 'timer.%';

UPDATE webhook_endpoints e
   SET created_by = (SELECT u.id FROM users u WHERE u.team_id = e.team_id
                      ORDER BY CASE u.role WHEN 'owner' THEN 0 WHEN 'admin' THEN 1 ELSE 2 END, u.created_at, u.id
                      LIMIT 1);
UPDATE recurring_invoices r
   SET created_by = (SELECT u.id FROM users u WHERE u.team_id = r.team_id
                      ORDER BY CASE u.role WHEN 'owner' THEN 0 WHEN 'admin' THEN 1 ELSE 2 END, u.created_at, u.id
                      LIMIT 1);
