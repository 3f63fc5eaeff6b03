DROP TABLE time_entry_tags;
DROP TABLE time_entries;
DROP TABLE tags;
DROP TABLE sections;
DROP TABLE projects;
