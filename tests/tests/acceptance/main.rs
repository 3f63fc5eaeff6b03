//! The acceptance tests: one binary, so the workspace links it once.
//!
//! - `contract`: every storage port's contract, run against the in-memory, SQLite and
//!   PostgreSQL adapters alike.
//! - `http`: the REST API through the real server, on the backend `TEST_BACKEND` names.
//! - `faults`: slow and numerous clients, a full disk under SQLite and PostgreSQL cut
//!   away, each on the backend it is about (run once, in the workspace's pass).

#![expect(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod agent;
mod contract;
mod faults;
mod http;
