use chrono::{DateTime, TimeDelta, Utc};
use kernel::{Email, Id, StoreError};

use crate::{
    AccountStore, ApiKey, ApiKeyId, ApiKeySecret, CreateApiKeyError, Currency, KeyHash, Role, Scope, Team,
    TeamId, TeamName, User, UserId, UserName,
};

pub fn new_team(name: TeamName, currency: Currency, now: DateTime<Utc>) -> Team {
    Team { id: TeamId::generate(), name, currency, created_at: now }
}

pub fn new_user(team_id: TeamId, email: Email, name: UserName, role: Role, now: DateTime<Utc>) -> User {
    User { id: UserId::generate(), team_id, email, name, role, created_at: now }
}

/// A key just made: what to store and the secret to show once.
#[derive(Debug)]
pub struct IssuedKey {
    pub key: ApiKey,
    pub hash: KeyHash,
    pub secret: ApiKeySecret,
}

/// Makes a new key for a user of a team.
pub fn issue_api_key(
    team_id: TeamId,
    user_id: UserId,
    scope: Scope,
    expires_in: Option<TimeDelta>,
    now: DateTime<Utc>,
) -> IssuedKey {
    let secret = ApiKeySecret::generate();
    let key = ApiKey {
        id: ApiKeyId::generate(),
        team_id,
        user_id,
        scope,
        prefix: secret.display_prefix(),
        created_at: now,
        expires_at: expires_in.map(|ttl| now + ttl),
        revoked_at: None,
        last_used_at: None,
    };
    IssuedKey { hash: secret.hash(), key, secret }
}

impl IssuedKey {
    /// Issues and stores a key in one step.
    pub async fn store(self, accounts: &dyn AccountStore) -> Result<Self, CreateApiKeyError> {
        accounts.create_api_key(&self.key, &self.hash).await?;
        Ok(self)
    }
}

/// First run: on an empty store, makes team "Default", an owner and a `write` key, and
/// returns the key's secret. Returns `None` whenever any team already exists.
pub async fn bootstrap(
    accounts: &dyn AccountStore,
    now: DateTime<Utc>,
) -> Result<Option<ApiKeySecret>, StoreError> {
    let (Ok(name), Ok(email)) = (TeamName::parse("Default"), Email::parse("owner@billable.localhost")) else {
        unreachable!("constant team name and email are valid");
    };
    let team = new_team(name, Currency::USD, now);
    let owner = new_user(
        team.id,
        email,
        UserName::parse("Owner").unwrap_or_else(|_| unreachable!()),
        Role::Owner,
        now,
    );
    let issued = issue_api_key(team.id, owner.id, Scope::Write, None, now);
    let stored = accounts.bootstrap(&team, &owner, &issued.key, &issued.hash).await?;
    Ok(stored.then_some(issued.secret))
}
