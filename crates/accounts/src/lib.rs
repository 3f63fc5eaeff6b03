//! Teams, users, roles, API keys and scopes.
//!
//! The rules of who may do what live here: how a key looks and is stored (only its
//! SHA-256), when a key stops working (expiry, revocation), which scope grants which
//! permission, and which role may act for other users. Storage is a port,
//! [`AccountStore`]; this crate knows nothing of HTTP or SQL.

mod idempotency;
mod key;
mod scope;
mod service;
mod store;
mod team;

pub use idempotency::{
    Claimed, IdempotencyKey, IdempotencyStore, KeptResponse, KeyClaim, RequestFingerprint,
};
pub use key::{ApiKey, ApiKeyId, ApiKeySecret, Credential, KeyHash, Principal, Refusal};
pub use scope::{Permission, Scope};
pub use service::{IssuedKey, bootstrap, issue_api_key, new_team, new_user};
pub use store::{
    AccountStore, CreateApiKeyError, CreateUserError, RevokeApiKeyError, TeamChange, UpdateTeamError,
};
pub use team::{Currency, Role, Team, TeamId, TeamName, User, UserId, UserName};
