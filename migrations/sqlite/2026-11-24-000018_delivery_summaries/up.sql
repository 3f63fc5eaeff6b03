-- One line naming each delivery's event (event.action owner/repo#number: title), which
-- the delivery log shows and its run's record keeps in place of the input's first
-- characters, which the untrusted-content frame fills. Older deliveries get what their
-- row already says.
ALTER TABLE agent_deliveries ADD COLUMN summary text NOT NULL DEFAULT '';
UPDATE agent_deliveries
SET summary = event || coalesce('.' || action, '') || coalesce(' ' || repository, '');
