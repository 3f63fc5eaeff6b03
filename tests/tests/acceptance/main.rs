//! The acceptance tests: one binary, so the workspace links it once. Each storage port's
//! contract lives in `crates/store-contract` and runs from each adapter's own tests.
//!
//! - `agent`: the agent's triggers, tools and MCP through the real server.
//! - `currencies`: the currencies taken, against a published ISO 4217 table.
//! - `http`: the REST API through the real server, on the backend `TEST_BACKEND` names.
//! - `recurrence`: recurring invoices' schedules against python-dateutil's RFC 5545 rrule.
//! - `faults`: slow and numerous clients, a full disk under SQLite and PostgreSQL cut
//!   away, each on the backend it is about (run once, in the workspace's pass).

#![expect(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod agent;
mod currencies;
mod faults;
mod http;
mod recurrence;
