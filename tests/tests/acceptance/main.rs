//! The acceptance tests: one binary, so the workspace links it once.
//!
//! - `contract`: every storage port's contract, run against the in-memory, SQLite and
//!   PostgreSQL adapters alike.
//! - `http`: the REST API through the real server, on the backend `TEST_BACKEND` names.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod agent;
mod contract;
mod http;
