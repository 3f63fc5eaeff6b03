//! The repository (GitHub) trigger's rules: which deliveries pass the filter, what the
//! agent sees of an event, the conversation an event belongs to, and the delivery queue's
//! records and port.

pub mod delivery;
pub mod filter;
pub mod intake;
pub mod render;
