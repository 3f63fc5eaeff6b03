DROP TABLE clients;
DROP TABLE api_keys;
DROP TABLE users;
DROP TABLE teams;
