//! Billing: clients (the "billed to" of invoices) and, later, invoices with their money
//! rules. Pure types and rules plus the repository ports that adapters implement; this
//! crate knows nothing of HTTP or SQL.

pub mod client;

pub use client::{
    Client, ClientDetails, ClientId, ClientRepository, DeleteClientError, ReplaceClientError,
    sort_for_listing,
};
