-- The listings' filters, each served in listing order so that a page reads only its own
-- rows. Invoices (newest issue date, then serial, first): by status (OVERDUE is PENDING
-- past its due date, so the due date comes along) ...
CREATE INDEX invoices_status ON invoices (team_id, status, issue_date DESC, serial DESC, due_date);
-- ... and by client, which also serves the restricting check of a client's deletion.
CREATE INDEX invoices_client_listing ON invoices (team_id, client_id, issue_date DESC, serial DESC);
DROP INDEX invoices_client;
-- Time entries (by date) of a project or a section; these serve the delete checks too.
CREATE INDEX time_entries_project_date ON time_entries (team_id, project_id, date);
DROP INDEX time_entries_project;
CREATE INDEX time_entries_section_date ON time_entries (team_id, section_id, date);
DROP INDEX time_entries_section;
-- Time entries with a tag: the entry ids come from the index alone.
CREATE INDEX time_entry_tags_tag_entry ON time_entry_tags (team_id, tag_id, entry_id);
DROP INDEX time_entry_tags_tag;
