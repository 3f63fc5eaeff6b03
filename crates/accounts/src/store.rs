use async_trait::async_trait;
use chrono::{DateTime, Utc};
use kernel::StoreError;

use crate::{ApiKey, ApiKeyId, Credential, Currency, KeyHash, Team, TeamId, TeamName, User, UserId};

#[derive(Debug, thiserror::Error)]
pub enum CreateUserError {
    #[error("team not found")]
    TeamNotFound,
    #[error("a user with this email already exists in the team")]
    EmailTaken,
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[derive(Debug, thiserror::Error)]
pub enum CreateApiKeyError {
    #[error("user not found in the team")]
    UserNotInTeam,
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[derive(Debug, thiserror::Error)]
pub enum RevokeApiKeyError {
    #[error("API key not found")]
    NotFound,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A change of a team: only the parts given change.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TeamChange {
    pub name: Option<TeamName>,
    pub currency: Option<Currency>,
}

#[derive(Debug, thiserror::Error)]
pub enum UpdateTeamError {
    #[error("team not found")]
    NotFound,
    /// Another currency for a team whose books are in its present one.
    #[error("the team's books are in its currency (invoices: {invoices}, recurring invoices: {recurring})")]
    CurrencyInUse { invoices: u64, recurring: u64 },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Storage of teams, users and API keys.
///
/// Every method scoped to a team filters by it. The two deliberate exceptions are
/// [`AccountStore::find_credential`] (a request does not know its team before its key is
/// found) and [`AccountStore::revoke_api_key`] (an operator revokes by key id alone).
#[async_trait]
pub trait AccountStore: Send + Sync {
    async fn create_team(&self, team: &Team) -> Result<(), StoreError>;

    async fn get_team(&self, id: TeamId) -> Result<Option<Team>, StoreError>;

    /// Applies `change` to the team and returns it. MUST return `NotFound` for an unknown
    /// team, and `CurrencyInUse` for another currency while the team has any invoice (a
    /// credit note has its invoice) or recurring invoice: checked under the lock an
    /// invoice's creation takes, so no invoice is made in a currency the team left. The
    /// currency it has already is no change.
    async fn update_team(&self, team: TeamId, change: &TeamChange) -> Result<Team, UpdateTeamError>;

    /// Every team, oldest first (operators' tools pick a team by name with it).
    async fn list_teams(&self) -> Result<Vec<Team>, StoreError>;

    /// MUST return `TeamNotFound` when the team does not exist and `EmailTaken` when the
    /// team already has a user with the same email, compared case-insensitively.
    async fn create_user(&self, user: &User) -> Result<(), CreateUserError>;

    /// Whether `user` is a user of `team`.
    async fn has_user(&self, team: TeamId, user: UserId) -> Result<bool, StoreError>;

    /// The user `user` of `team` as it is now (its role included), or `None` when the team
    /// has no such user.
    async fn get_user(&self, team: TeamId, user: UserId) -> Result<Option<User>, StoreError>;

    /// The users of `team`, oldest first.
    async fn list_users(&self, team: TeamId) -> Result<Vec<User>, StoreError>;

    /// Stores a key under its hash. MUST return `UserNotInTeam` when `key.user_id` is not
    /// a user of `key.team_id`.
    async fn create_api_key(&self, key: &ApiKey, hash: &KeyHash) -> Result<(), CreateApiKeyError>;

    /// The key stored under `hash` with its user's role, whatever its expiry or
    /// revocation (the caller decides), or `None`.
    async fn find_credential(&self, hash: &KeyHash) -> Result<Option<Credential>, StoreError>;

    /// The team's keys, oldest first.
    async fn list_api_keys(&self, team: TeamId) -> Result<Vec<ApiKey>, StoreError>;

    /// Marks a key revoked at `at`; revoking a revoked key keeps the first time. MUST
    /// return `NotFound` for an unknown id.
    async fn revoke_api_key(&self, id: ApiKeyId, at: DateTime<Utc>) -> Result<(), RevokeApiKeyError>;

    /// How many keys have ever been revoked, over every team. Keys are never un-revoked,
    /// so the number changes exactly when a key is revoked: processes that cache keys
    /// watch it to forget them at once.
    async fn revoked_key_count(&self) -> Result<u64, StoreError>;

    /// Records that the key was used at `at` (never moves the time backwards).
    async fn record_key_use(&self, team: TeamId, id: ApiKeyId, at: DateTime<Utc>) -> Result<(), StoreError>;

    /// Stores the first team, its owner and a key, all or nothing, but only while no
    /// team exists. Returns whether it stored them.
    async fn bootstrap(
        &self,
        team: &Team,
        owner: &User,
        key: &ApiKey,
        hash: &KeyHash,
    ) -> Result<bool, StoreError>;
}
