use std::fmt;

/// Why a raw value was refused. Value types know nothing of where the value came from;
/// the adapter that parsed it names the field with [`InvalidValue::at`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidValue(pub String);

impl InvalidValue {
    pub fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }

    /// Names the field the value was given for, e.g. `lineItems[1].quantity`.
    #[must_use]
    pub fn at(self, field: impl Into<String>) -> FieldError {
        FieldError { field: field.into(), message: self.0 }
    }
}

impl fmt::Display for InvalidValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A refused input, located: `field: message`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

impl FieldError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self { field: field.into(), message: message.into() }
    }
}

/// What a conditional replacement of a stored resource did: the write of one read, changed
/// and written back, taken only if nothing changed it since it was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replaced {
    Written,
    /// It changed since it was read; nothing written. Read it again.
    Stale,
    /// There is no such resource.
    Missing,
}

/// The ways any storage port can fail that are not a rule of the domain.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// No connection could be had in time (pool exhausted, database down). Callers may
    /// retry; the HTTP adapter answers 503.
    #[error("storage unavailable")]
    Unavailable(#[source] anyhow::Error),
    /// The database's disk has no room for the write. Reads go on; writes succeed again
    /// once an operator makes room. The HTTP adapter answers 507.
    #[error("the database's disk is full")]
    Full(#[source] anyhow::Error),
    /// Anything else: a bug or an operational fault, logged with its whole chain.
    #[error("unexpected storage failure")]
    Unexpected(#[source] anyhow::Error),
}

/// Connection-pool figures for metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StoreStatus {
    /// Connections the pool may open at most.
    pub max_size: usize,
    /// Connections open now.
    pub size: usize,
    /// Open connections that are idle.
    pub available: usize,
    /// Tasks waiting for a connection.
    pub waiting: usize,
}

/// Health port of a storage adapter, used by readiness checks and metrics.
#[async_trait::async_trait]
pub trait StoreHealth: Send + Sync {
    /// Answers `Ok` when the store can serve a query now.
    async fn ping(&self) -> Result<(), StoreError>;
    /// Current pool figures.
    fn status(&self) -> StoreStatus;
}
