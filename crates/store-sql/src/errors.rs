//! What a database error means to a port's caller, and the errors a write transaction
//! ends with. A leaf: every table module uses it, it uses none of them.

use kernel::StoreError;

/// Turns a diesel result into a port result.
pub(crate) trait OrStoreError<T> {
    fn or_store(self) -> Result<T, StoreError>;
}

impl<T> OrStoreError<T> for Result<T, diesel::result::Error> {
    fn or_store(self) -> Result<T, StoreError> {
        self.map_err(store_error)
    }
}

/// What a database error means to a caller: the database gone or going (retry later),
/// its disk full (retry once an operator has made room), or anything else.
pub(crate) fn store_error(error: diesel::result::Error) -> StoreError {
    use diesel::result::{DatabaseErrorKind as Kind, Error};
    match &error {
        // The connection broke or the server is stopping (SQLSTATE class 57).
        Error::DatabaseError(Kind::UnableToSendCommand | Kind::ClosedConnection, _) => {
            StoreError::Unavailable(error.into())
        }
        Error::DatabaseError(_, info) if is_full(info.message()) => StoreError::Full(error.into()),
        Error::DatabaseError(_, info) if is_going_away(info.message()) => {
            StoreError::Unavailable(error.into())
        }
        _ => StoreError::Unexpected(error.into()),
    }
}

/// SQLite's `SQLITE_FULL`, and PostgreSQL's `disk_full` (53100) or a write that found no
/// room on its device.
fn is_full(message: &str) -> bool {
    message.contains("database or disk is full") || message.contains("No space left on device")
}

/// PostgreSQL's messages of SQLSTATE class 57 (operator intervention): a shutdown or a
/// restart in progress.
fn is_going_away(message: &str) -> bool {
    ["terminating connection", "the database system is shutting down", "the database system is starting up"]
        .iter()
        .any(|sign| message.contains(sign))
}

/// The constraint a failed write ran into, when that is why it failed.
pub(crate) fn violation(error: &diesel::result::Error) -> Option<diesel::result::DatabaseErrorKind> {
    use diesel::result::{DatabaseErrorKind as Kind, Error};
    match error {
        Error::DatabaseError(kind @ (Kind::UniqueViolation | Kind::ForeignKeyViolation), _) => Some(*kind),
        _ => None,
    }
}

/// The error for a stored value that no longer passes its domain type's rules.
pub(crate) fn corrupt(what: &str, error: impl std::fmt::Display) -> StoreError {
    StoreError::Unexpected(anyhow::anyhow!("stored {what} is invalid: {error}"))
}

/// A failure inside a write transaction: the database's, or a refusal that rolls it back.
pub(crate) enum TxError<E, P = std::convert::Infallible> {
    Db(diesel::result::Error),
    Refused(E),
    /// A preview's answer, given by rolling its transaction back.
    Previewed(P),
}

impl<E, P> From<diesel::result::Error> for TxError<E, P> {
    fn from(error: diesel::result::Error) -> Self {
        Self::Db(error)
    }
}

impl<E: From<StoreError>> TxError<E> {
    pub(crate) fn into_port(self) -> E {
        match self {
            Self::Db(error) => store_error(error).into(),
            Self::Refused(error) => error,
            Self::Previewed(never) => match never {},
        }
    }
}
