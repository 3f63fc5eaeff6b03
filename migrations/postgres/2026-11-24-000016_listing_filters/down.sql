CREATE INDEX time_entry_tags_tag ON time_entry_tags (team_id, tag_id);
DROP INDEX time_entry_tags_tag_entry;
CREATE INDEX time_entries_section ON time_entries (team_id, section_id);
DROP INDEX time_entries_section_date;
CREATE INDEX time_entries_project ON time_entries (team_id, project_id);
DROP INDEX time_entries_project_date;
CREATE INDEX invoices_client ON invoices (team_id, client_id);
DROP INDEX invoices_client_listing;
DROP INDEX invoices_status;
