//! [`AccountStore`] over diesel.

use accounts::{
    AccountStore, ApiKey, ApiKeyId, CreateApiKeyError, CreateUserError, Credential, Currency, KeyHash,
    RevokeApiKeyError, Role, Scope, Team, TeamChange, TeamId, TeamName, UpdateTeamError, User, UserId,
    UserName,
};
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::result::DatabaseErrorKind;
use diesel_async::{AsyncConnection, RunQueryDsl};
use kernel::{Email, StoreError};

use crate::TxError;
use crate::types::DbUuid;
use crate::{OrStoreError, SqlStore, corrupt, db_run, violation};

#[derive(Queryable)]
struct TeamRow {
    id: DbUuid,
    name: String,
    currency: String,
    created_at: DateTime<Utc>,
}

#[derive(Queryable)]
struct UserRow {
    team_id: DbUuid,
    id: DbUuid,
    email: String,
    name: String,
    role: String,
    created_at: DateTime<Utc>,
}

impl TryFrom<UserRow> for User {
    type Error = StoreError;
    fn try_from(row: UserRow) -> Result<Self, StoreError> {
        Ok(User {
            id: row.id.into_id(),
            team_id: row.team_id.into_id(),
            email: Email::parse(row.email).map_err(|e| corrupt("user email", e))?,
            name: UserName::from_stored(row.name).map_err(|e| corrupt("user name", e))?,
            role: Role::parse(&row.role).map_err(|e| corrupt("user role", e))?,
            created_at: row.created_at,
        })
    }
}

#[derive(Queryable)]
struct KeyRow {
    team_id: DbUuid,
    id: DbUuid,
    user_id: DbUuid,
    _key_hash: Vec<u8>,
    prefix: String,
    scope: String,
    permissions: String,
    created_at: DateTime<Utc>,
    expires_at: Option<DateTime<Utc>>,
    revoked_at: Option<DateTime<Utc>>,
    last_used_at: Option<DateTime<Utc>>,
}

impl TryFrom<TeamRow> for Team {
    type Error = StoreError;
    fn try_from(row: TeamRow) -> Result<Self, StoreError> {
        Ok(Team {
            id: row.id.into_id(),
            name: TeamName::from_stored(row.name).map_err(|e| corrupt("team name", e))?,
            currency: Currency::parse(&row.currency).map_err(|e| corrupt("currency", e))?,
            created_at: row.created_at,
        })
    }
}

impl TryFrom<KeyRow> for ApiKey {
    type Error = StoreError;
    fn try_from(row: KeyRow) -> Result<Self, StoreError> {
        let permissions: Vec<&str> = row.permissions.split_whitespace().collect();
        Ok(ApiKey {
            id: row.id.into_id(),
            team_id: row.team_id.into_id(),
            user_id: row.user_id.into_id(),
            scope: Scope::from_parts(&row.scope, &permissions).map_err(|e| corrupt("scope", e))?,
            prefix: row.prefix,
            created_at: row.created_at,
            expires_at: row.expires_at,
            revoked_at: row.revoked_at,
            last_used_at: row.last_used_at,
        })
    }
}

fn permissions_text(scope: &Scope) -> String {
    scope.permissions().map(accounts::Permission::as_str).collect::<Vec<_>>().join(" ")
}

// Column/value tuples, expanded where a backend's schema is in scope.
macro_rules! team_values {
    ($team:expr) => {
        (
            teams::id.eq(DbUuid::of($team.id)),
            teams::name.eq($team.name.as_str()),
            teams::currency.eq($team.currency.as_str()),
            teams::created_at.eq($team.created_at),
        )
    };
}

macro_rules! user_values {
    ($user:expr) => {
        (
            users::team_id.eq(DbUuid::of($user.team_id)),
            users::id.eq(DbUuid::of($user.id)),
            users::email.eq($user.email.as_str()),
            users::email_key.eq($user.email.normalized()),
            users::name.eq($user.name.as_str()),
            users::role.eq($user.role.as_str()),
            users::created_at.eq($user.created_at),
        )
    };
}

macro_rules! key_values {
    ($key:expr, $hash:expr) => {
        (
            api_keys::team_id.eq(DbUuid::of($key.team_id)),
            api_keys::id.eq(DbUuid::of($key.id)),
            api_keys::user_id.eq(DbUuid::of($key.user_id)),
            api_keys::key_hash.eq(&$hash.0[..]),
            api_keys::prefix.eq($key.prefix.as_str()),
            api_keys::scope.eq($key.scope.kind()),
            api_keys::permissions.eq(permissions_text(&$key.scope)),
            api_keys::created_at.eq($key.created_at),
            api_keys::expires_at.eq($key.expires_at),
            api_keys::revoked_at.eq($key.revoked_at),
            api_keys::last_used_at.eq($key.last_used_at),
        )
    };
}

#[async_trait]
impl AccountStore for SqlStore {
    #[tracing::instrument(skip_all, fields(team = %team.id))]
    async fn create_team(&self, team: &Team) -> Result<(), StoreError> {
        db_run!(self, |conn| {
            diesel::insert_into(teams::table).values(team_values!(team)).execute(conn).await.or_store()?;
            Ok(())
        })
    }

    async fn get_team(&self, id: TeamId) -> Result<Option<Team>, StoreError> {
        let row: Option<TeamRow> = db_run!(self, |conn| teams::table
            .filter(teams::id.eq(DbUuid::of(id)))
            .first(conn)
            .await
            .optional()
            .or_store()?);
        row.map(Team::try_from).transpose()
    }

    #[tracing::instrument(skip(self))]
    async fn update_team(&self, team: TeamId, change: &TeamChange) -> Result<Team, UpdateTeamError> {
        let id = DbUuid::of(team);
        let done: Result<Team, TxError<UpdateTeamError>> = db_run!(self, |conn| conn
            .transaction(async |conn| {
                // The team's row, locked by a write that changes nothing, before the books are
                // counted: an invoice's creation takes it too, and checks the currency under it.
                let row: Option<TeamRow> = diesel::update(teams::table.filter(teams::id.eq(id)))
                    .set(teams::name.eq(teams::name))
                    .returning(teams::all_columns)
                    .get_result(conn)
                    .await
                    .optional()?;
                let Some(row) = row else { return Err(TxError::Refused(UpdateTeamError::NotFound)) };
                let mut updated = Team::try_from(row).map_err(|e| TxError::Refused(e.into()))?;
                if let Some(currency) = change.currency.filter(|currency| *currency != updated.currency) {
                    let invoices: i64 =
                        invoices::table.filter(invoices::team_id.eq(id)).count().get_result(conn).await?;
                    let recurring: i64 = recurring_invoices::table
                        .filter(recurring_invoices::team_id.eq(id))
                        .count()
                        .get_result(conn)
                        .await?;
                    if invoices + recurring > 0 {
                        let count = |n: i64| u64::try_from(n).unwrap_or(0);
                        return Err(TxError::Refused(UpdateTeamError::CurrencyInUse {
                            invoices: count(invoices),
                            recurring: count(recurring),
                        }));
                    }
                    updated.currency = currency;
                }
                if let Some(name) = &change.name {
                    updated.name = name.clone();
                }
                diesel::update(teams::table.filter(teams::id.eq(id)))
                    .set((
                        teams::name.eq(updated.name.as_str()),
                        teams::currency.eq(updated.currency.as_str()),
                    ))
                    .execute(conn)
                    .await?;
                Ok(updated)
            })
            .await);
        done.map_err(|error| match error {
            TxError::Refused(error) => error,
            TxError::Db(error) => crate::store_error(error).into(),
            TxError::Previewed(never) => match never {},
        })
    }

    #[tracing::instrument(skip(self))]
    async fn list_teams(&self) -> Result<Vec<Team>, StoreError> {
        let rows: Vec<TeamRow> = db_run!(self, |conn| teams::table
            .order((teams::created_at, teams::id))
            .load(conn)
            .await
            .or_store()?);
        rows.into_iter().map(Team::try_from).collect()
    }

    #[tracing::instrument(skip_all, fields(team = %user.team_id))]
    async fn create_user(&self, user: &User) -> Result<(), CreateUserError> {
        let result = db_run!(self, |conn| diesel::insert_into(users::table)
            .values(user_values!(user))
            .execute(conn)
            .await);
        match result {
            Ok(_) => Ok(()),
            Err(e) if violation(&e) == Some(DatabaseErrorKind::UniqueViolation) => {
                Err(CreateUserError::EmailTaken)
            }
            Err(e) if violation(&e) == Some(DatabaseErrorKind::ForeignKeyViolation) => {
                Err(CreateUserError::TeamNotFound)
            }
            Err(e) => Err(crate::store_error(e).into()),
        }
    }

    #[tracing::instrument(skip(self))]
    async fn has_user(&self, team: TeamId, user: UserId) -> Result<bool, StoreError> {
        db_run!(self, |conn| diesel::select(diesel::dsl::exists(
            users::table.filter(users::team_id.eq(DbUuid::of(team))).filter(users::id.eq(DbUuid::of(user)))
        ))
        .get_result(conn)
        .await
        .or_store())
    }

    #[tracing::instrument(skip(self))]
    async fn get_user(&self, team: TeamId, user: UserId) -> Result<Option<User>, StoreError> {
        let row: Option<UserRow> = db_run!(self, |conn| users::table
            .filter(users::team_id.eq(DbUuid::of(team)))
            .filter(users::id.eq(DbUuid::of(user)))
            .select((users::team_id, users::id, users::email, users::name, users::role, users::created_at))
            .first(conn)
            .await
            .optional()
            .or_store()?);
        row.map(User::try_from).transpose()
    }

    #[tracing::instrument(skip(self))]
    async fn list_users(&self, team: TeamId) -> Result<Vec<User>, StoreError> {
        let rows: Vec<UserRow> = db_run!(self, |conn| users::table
            .filter(users::team_id.eq(DbUuid::of(team)))
            .order((users::created_at, users::id))
            .select((users::team_id, users::id, users::email, users::name, users::role, users::created_at))
            .load(conn)
            .await
            .or_store()?);
        rows.into_iter().map(User::try_from).collect()
    }

    #[tracing::instrument(skip_all, fields(team = %key.team_id, key = %key.id))]
    async fn create_api_key(&self, key: &ApiKey, hash: &KeyHash) -> Result<(), CreateApiKeyError> {
        let result = db_run!(self, |conn| diesel::insert_into(api_keys::table)
            .values(key_values!(key, hash))
            .execute(conn)
            .await);
        match result {
            Ok(_) => Ok(()),
            Err(e) if violation(&e) == Some(DatabaseErrorKind::ForeignKeyViolation) => {
                Err(CreateApiKeyError::UserNotInTeam)
            }
            Err(e) => Err(crate::store_error(e).into()),
        }
    }

    async fn find_credential(&self, hash: &KeyHash) -> Result<Option<Credential>, StoreError> {
        let found: Option<(KeyRow, String)> = db_run!(self, |conn| api_keys::table
            .inner_join(
                users::table.on(users::team_id.eq(api_keys::team_id).and(users::id.eq(api_keys::user_id))),
            )
            .filter(api_keys::key_hash.eq(&hash.0[..]))
            .select((api_keys::all_columns, users::role))
            .first(conn)
            .await
            .optional()
            .or_store()?);
        let Some((row, role)) = found else { return Ok(None) };
        let role = Role::parse(&role).map_err(|e| corrupt("role", e))?;
        Ok(Some(Credential { key: row.try_into()?, role }))
    }

    async fn list_api_keys(&self, team: TeamId) -> Result<Vec<ApiKey>, StoreError> {
        let rows: Vec<KeyRow> = db_run!(self, |conn| api_keys::table
            .filter(api_keys::team_id.eq(DbUuid::of(team)))
            .order((api_keys::created_at, api_keys::id))
            .load(conn)
            .await
            .or_store()?);
        rows.into_iter().map(ApiKey::try_from).collect()
    }

    #[tracing::instrument(skip(self))]
    async fn revoke_api_key(&self, id: ApiKeyId, at: DateTime<Utc>) -> Result<(), RevokeApiKeyError> {
        let found: i64 = db_run!(self, |conn| {
            diesel::update(
                api_keys::table
                    .filter(api_keys::id.eq(DbUuid::of(id)))
                    .filter(api_keys::revoked_at.is_null()),
            )
            .set(api_keys::revoked_at.eq(at))
            .execute(conn)
            .await
            .or_store()?;
            api_keys::table
                .filter(api_keys::id.eq(DbUuid::of(id)))
                .count()
                .get_result(conn)
                .await
                .or_store()?
        });
        if found == 0 {
            return Err(RevokeApiKeyError::NotFound);
        }
        Ok(())
    }

    async fn revoked_key_count(&self) -> Result<u64, StoreError> {
        let count: i64 = db_run!(self, |conn| {
            api_keys::table
                .filter(api_keys::revoked_at.is_not_null())
                .count()
                .get_result(conn)
                .await
                .or_store()?
        });
        Ok(u64::try_from(count).unwrap_or_default())
    }

    async fn record_key_use(&self, team: TeamId, id: ApiKeyId, at: DateTime<Utc>) -> Result<(), StoreError> {
        db_run!(self, |conn| {
            diesel::update(
                api_keys::table
                    .filter(api_keys::team_id.eq(DbUuid::of(team)))
                    .filter(api_keys::id.eq(DbUuid::of(id)))
                    .filter(api_keys::last_used_at.is_null().or(api_keys::last_used_at.lt(at))),
            )
            .set(api_keys::last_used_at.eq(at))
            .execute(conn)
            .await
            .or_store()?;
            Ok(())
        })
    }

    #[tracing::instrument(skip_all)]
    async fn bootstrap(
        &self,
        team: &Team,
        owner: &User,
        key: &ApiKey,
        hash: &KeyHash,
    ) -> Result<bool, StoreError> {
        db_run!(self, |conn| conn
            .transaction(async |conn| {
                diesel::sql_query(SERIALIZE_BOOTSTRAP).execute(conn).await?;
                let existing: i64 = teams::table.count().get_result(conn).await?;
                if existing > 0 {
                    return Ok(false);
                }
                diesel::insert_into(teams::table).values(team_values!(team)).execute(conn).await?;
                diesel::insert_into(users::table).values(user_values!(owner)).execute(conn).await?;
                diesel::insert_into(api_keys::table).values(key_values!(key, hash)).execute(conn).await?;
                Ok::<_, diesel::result::Error>(true)
            })
            .await
            .or_store())
    }
}

/// Loads the users of the teams `$teams` (a slice of `DbUuid`) as [`Makers`] reads them;
/// evaluates to diesel's `Result`, for the caller's `?`.
macro_rules! load_makers {
    ($conn:ident, $teams:expr) => {
        users::table
            .filter(users::team_id.eq_any($teams))
            .select((users::team_id, users::id, users::role, users::created_at))
            .load::<(DbUuid, DbUuid, String, chrono::DateTime<chrono::Utc>)>($conn)
            .await
            .map($crate::accounts::Makers::new)
    };
}
pub(crate) use load_makers;

/// The [`Makers`] that rows of `$rows` (an iterator of `(team, created_by)`) need: the
/// users of the teams of those naming no maker, none loaded when every row names one.
macro_rules! makers_for {
    ($store:expr, $rows:expr) => {{
        let unnamed: Vec<DbUuid> =
            $rows.filter(|(_, created_by)| created_by.is_none()).map(|(team, _)| team).collect();
        if unnamed.is_empty() {
            $crate::accounts::Makers::default()
        } else {
            $crate::db_run!($store, |conn| $crate::accounts::load_makers!(conn, &unnamed).or_store()?)
        }
    }};
}
pub(crate) use makers_for;

/// Some teams' users as the rules of acting users need them: who a row acts for, and with
/// which role now. An endpoint or a recurring invoice acts for the user who made it; one
/// whose maker an earlier release did not record (`NULL`) acts for the team's oldest owner,
/// else its oldest admin, else its oldest user, as migration 000031 filled the rows before.
#[derive(Debug, Default)]
pub(crate) struct Makers(std::collections::HashMap<DbUuid, Vec<TeamUser>>);

/// A user as [`Makers`] reads them: id, role (`None` if not one billable knows), joined at.
type TeamUser = (DbUuid, Option<Role>, DateTime<Utc>);

impl Makers {
    pub(crate) fn new(rows: Vec<(DbUuid, DbUuid, String, DateTime<Utc>)>) -> Self {
        let mut teams: std::collections::HashMap<DbUuid, Vec<TeamUser>> = std::collections::HashMap::new();
        for (team, id, role, created_at) in rows {
            teams.entry(team).or_default().push((id, Role::parse(&role).ok(), created_at));
        }
        Self(teams)
    }

    /// Who a row of `team` acts for: `created_by`, or the team's first maker.
    pub(crate) fn maker(&self, team: DbUuid, created_by: Option<DbUuid>) -> Result<UserId, StoreError> {
        if let Some(user) = created_by {
            return Ok(user.into_id());
        }
        let rank = |role: Option<Role>| match role {
            Some(Role::Owner) => 0,
            Some(Role::Admin) => 1,
            _ => 2,
        };
        self.0
            .get(&team)
            .and_then(|users| {
                users.iter().min_by_key(|(id, role, created_at)| (rank(*role), *created_at, id.0))
            })
            .map(|(id, _, _)| id.into_id())
            .ok_or_else(|| corrupt("maker", "a row of a team without users"))
    }

    /// `user` as the team has them now, or `None` when no longer in it.
    pub(crate) fn actor(&self, team: DbUuid, user: UserId) -> Option<tracking::Actor> {
        let users = self.0.get(&team)?;
        let (_, role, _) = users.iter().find(|(id, _, _)| *id == DbUuid::of(user))?;
        Some(tracking::Actor { user_id: user, role: (*role)? })
    }
}
