//! In-memory implementation of every storage port.
//!
//! It exists for fast domain tests and for throwaway runs (`memory:`), and is held to the
//! port contract (`store-contract`) like the SQL adapter; it keeps nothing across restarts.
//! One mutex guards all state, so every operation is atomic, like a transaction.

use std::sync::{Mutex, MutexGuard, PoisonError};

use accounts::{
    AccountStore, ApiKey, ApiKeyId, CreateApiKeyError, CreateUserError, Credential, KeyHash,
    RevokeApiKeyError, Team, TeamId, User, UserId,
};
use async_trait::async_trait;
use billing::{Client, ClientDetails, ClientId, ClientRepository, DeleteClientError, ReplaceClientError};
use chrono::{DateTime, Utc};
use kernel::{StoreError, StoreHealth, StoreStatus};

mod agent;
mod banking;
mod cards;
mod chasing;
mod deliveries;
mod idempotency;
mod invoices;
mod numbering;
mod quotes;
mod recurring_invoices;
mod time_tracking;

#[derive(Debug, Default)]
struct State {
    teams: Vec<Team>,
    users: Vec<User>,
    keys: Vec<(ApiKey, KeyHash)>,
    clients: Vec<Client>,
    tags: Vec<tracking::Tag>,
    projects: Vec<tracking::Project>,
    sections: Vec<tracking::Section>,
    entries: Vec<tracking::TimeEntry>,
    timers: Vec<tracking::RunningTimer>,
    /// Each team's listing revision, bumped by every change a listing of entries shows.
    revisions: std::collections::HashMap<TeamId, u64>,
    senders: Vec<billing::SenderAddress>,
    /// The last serial given, per team.
    serials: std::collections::HashMap<TeamId, billing::Serial>,
    invoices: Vec<billing::Invoice>,
    /// Every invoice's ledger entries, in the order they were written.
    ledger: Vec<billing::LedgerEntry>,
    credit_notes: Vec<billing::credit::CreditNote>,
    /// The last credit-note serial given, per team.
    credit_serials: std::collections::HashMap<TeamId, billing::credit::CreditSerial>,
    /// The patterns of the teams that chose some.
    numbering: std::collections::HashMap<TeamId, billing::Numbering>,
    /// The last counter each count of a series gave.
    counts: std::collections::HashMap<numbering::CountKey, u32>,
    /// Conversation memory, in the order it was said.
    messages: Vec<(TeamId, triggers::ConversationKey, triggers::Message)>,
    runs: std::collections::HashMap<(TeamId, triggers::RunId), triggers::RunRecord>,
    /// The delivery log, with each accepted delivery's input.
    deliveries: Vec<deliveries::StoredDelivery>,
    /// Accepted deliveries' (team, delivery id, body hash, accepted at).
    dedupe: Vec<deliveries::DedupeRecord>,
    idempotency_keys: Vec<idempotency::KeyRecord>,
    /// Events, jobs, messages, reminders and webhooks.
    chasing: chasing::Chasing,
    recurring: Vec<recurring::RecurringInvoice>,
    /// The runs of each recurring invoice, in the order they were recorded.
    recurring_runs: Vec<(TeamId, recurring::RecurringInvoiceId, recurring::Run)>,
    /// Card processor accounts, what they reported, and the credit clients hold.
    cards: cards::Cards,
    quotes: Vec<billing::quote::Quote>,
    banking: banking::Banking,
    /// The quotes whose expiry was announced.
    expiries_announced: std::collections::HashSet<billing::quote::QuoteId>,
}

/// All ports over one in-process state.
#[derive(Debug)]
pub struct MemoryStore {
    state: Mutex<State>,
    /// Words the resources of the events writes record.
    describe: std::sync::Arc<dyn notify::Describe>,
    /// Rung after each change that records an event or queues a job.
    signal: std::sync::Arc<tokio::sync::Notify>,
}

impl Default for MemoryStore {
    fn default() -> Self {
        Self {
            state: Mutex::default(),
            describe: std::sync::Arc::new(notify::BareIds),
            signal: std::sync::Arc::default(),
        }
    }
}

impl MemoryStore {
    pub fn new() -> Self {
        Self::default()
    }

    /// The same store, recording events with the resources worded by `describe`.
    #[must_use]
    pub fn describing(self, describe: std::sync::Arc<dyn notify::Describe>) -> Self {
        Self { describe, ..self }
    }

    /// Rung after each change that recorded an event or queued a job.
    pub fn job_signal(&self) -> std::sync::Arc<tokio::sync::Notify> {
        self.signal.clone()
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave a half-applied change: every
        // operation validates before it mutates.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[async_trait]
impl AccountStore for MemoryStore {
    async fn create_team(&self, team: &Team) -> Result<(), StoreError> {
        self.state().teams.push(team.clone());
        Ok(())
    }

    async fn get_team(&self, id: TeamId) -> Result<Option<Team>, StoreError> {
        Ok(self.state().teams.iter().find(|t| t.id == id).cloned())
    }

    async fn update_team(
        &self,
        team: TeamId,
        change: &accounts::TeamChange,
    ) -> Result<Team, accounts::UpdateTeamError> {
        let mut state = self.state();
        let invoices = state.invoices.iter().filter(|i| i.team_id == team).count();
        let recurring = state.recurring.iter().filter(|r| r.team_id == team).count();
        let stored =
            state.teams.iter_mut().find(|t| t.id == team).ok_or(accounts::UpdateTeamError::NotFound)?;
        if let Some(currency) = change.currency.filter(|currency| *currency != stored.currency) {
            if invoices + recurring > 0 {
                let count = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
                return Err(accounts::UpdateTeamError::CurrencyInUse {
                    invoices: count(invoices),
                    recurring: count(recurring),
                });
            }
            stored.currency = currency;
        }
        if let Some(name) = &change.name {
            stored.name = name.clone();
        }
        Ok(stored.clone())
    }

    async fn list_teams(&self) -> Result<Vec<Team>, StoreError> {
        Ok(self.state().teams.clone())
    }

    async fn create_user(&self, user: &User) -> Result<(), CreateUserError> {
        let mut state = self.state();
        if !state.teams.iter().any(|t| t.id == user.team_id) {
            return Err(CreateUserError::TeamNotFound);
        }
        let email = user.email.normalized();
        if state.users.iter().any(|u| u.team_id == user.team_id && u.email.normalized() == email) {
            return Err(CreateUserError::EmailTaken);
        }
        state.users.push(user.clone());
        Ok(())
    }

    async fn has_user(&self, team: TeamId, user: UserId) -> Result<bool, StoreError> {
        Ok(self.state().users.iter().any(|u| u.team_id == team && u.id == user))
    }

    async fn get_user(&self, team: TeamId, user: UserId) -> Result<Option<User>, StoreError> {
        Ok(self.state().users.iter().find(|u| u.team_id == team && u.id == user).cloned())
    }

    async fn list_users(&self, team: TeamId) -> Result<Vec<User>, StoreError> {
        let mut users: Vec<User> = self.state().users.iter().filter(|u| u.team_id == team).cloned().collect();
        users.sort_by_key(|u| (u.created_at, u.id));
        Ok(users)
    }

    async fn create_api_key(&self, key: &ApiKey, hash: &KeyHash) -> Result<(), CreateApiKeyError> {
        let mut state = self.state();
        if !state.users.iter().any(|u| u.id == key.user_id && u.team_id == key.team_id) {
            return Err(CreateApiKeyError::UserNotInTeam);
        }
        state.keys.push((key.clone(), *hash));
        Ok(())
    }

    async fn find_credential(&self, hash: &KeyHash) -> Result<Option<Credential>, StoreError> {
        let state = self.state();
        let Some((key, _)) = state.keys.iter().find(|(_, h)| h == hash) else {
            return Ok(None);
        };
        let role = state.users.iter().find(|u| u.id == key.user_id).map(|u| u.role);
        Ok(role.map(|role| Credential { key: key.clone(), role }))
    }

    async fn list_api_keys(&self, team: TeamId) -> Result<Vec<ApiKey>, StoreError> {
        let mut keys: Vec<ApiKey> =
            self.state().keys.iter().filter(|(k, _)| k.team_id == team).map(|(k, _)| k.clone()).collect();
        keys.sort_by_key(|k| (k.created_at, k.id));
        Ok(keys)
    }

    async fn revoke_api_key(&self, id: ApiKeyId, at: DateTime<Utc>) -> Result<(), RevokeApiKeyError> {
        let mut state = self.state();
        let (key, _) = state.keys.iter_mut().find(|(k, _)| k.id == id).ok_or(RevokeApiKeyError::NotFound)?;
        key.revoked_at.get_or_insert(at);
        Ok(())
    }

    async fn revoked_key_count(&self) -> Result<u64, StoreError> {
        Ok(self.state().keys.iter().filter(|(key, _)| key.revoked_at.is_some()).count() as u64)
    }

    async fn record_key_use(&self, team: TeamId, id: ApiKeyId, at: DateTime<Utc>) -> Result<(), StoreError> {
        let mut state = self.state();
        if let Some((key, _)) = state.keys.iter_mut().find(|(k, _)| k.id == id && k.team_id == team) {
            key.last_used_at = key.last_used_at.max(Some(at));
        }
        Ok(())
    }

    async fn bootstrap(
        &self,
        team: &Team,
        owner: &User,
        key: &ApiKey,
        hash: &KeyHash,
    ) -> Result<bool, StoreError> {
        let mut state = self.state();
        if !state.teams.is_empty() {
            return Ok(false);
        }
        state.teams.push(team.clone());
        state.users.push(owner.clone());
        state.keys.push((key.clone(), *hash));
        Ok(true)
    }
}

#[async_trait]
impl ClientRepository for MemoryStore {
    async fn list(&self, team: TeamId) -> Result<Vec<Client>, StoreError> {
        let mut clients: Vec<Client> =
            self.state().clients.iter().filter(|c| c.team_id == team).cloned().collect();
        billing::sort_for_listing(&mut clients);
        Ok(clients)
    }

    async fn get(&self, team: TeamId, id: ClientId) -> Result<Option<Client>, StoreError> {
        Ok(self.state().clients.iter().find(|c| c.team_id == team && c.id == id).cloned())
    }

    async fn create(&self, client: &Client) -> Result<(), StoreError> {
        let events = notify::raise::client_created(client).events(&*self.describe, client.created_at);
        self.changed(|state| {
            state.clients.push(client.clone());
            state.record(events);
            Ok(())
        })
    }

    async fn replace(
        &self,
        team: TeamId,
        id: ClientId,
        details: &ClientDetails,
        now: DateTime<Utc>,
    ) -> Result<Client, ReplaceClientError> {
        let describe = self.describe.clone();
        self.changed(|state| {
            let client = state
                .clients
                .iter_mut()
                .find(|c| c.team_id == team && c.id == id)
                .ok_or(ReplaceClientError::NotFound)?;
            *client = client.clone().replaced(details.clone(), now);
            let client = client.clone();
            state.refresh_reminders(team, |i| i.client_id == id && i.due_date.is_some());
            state.record(notify::raise::client_updated(&client).events(&*describe, now));
            Ok(client)
        })
    }

    async fn delete(&self, team: TeamId, id: ClientId, at: DateTime<Utc>) -> Result<(), DeleteClientError> {
        let describe = self.describe.clone();
        self.changed(|state| {
            if state.invoices.iter().any(|i| i.team_id == team && i.client_id == id) {
                return Err(DeleteClientError::HasInvoices);
            }
            if state.projects.iter().any(|p| p.team_id == team && p.client_id == Some(id)) {
                return Err(DeleteClientError::HasProjects);
            }
            let index = state
                .clients
                .iter()
                .position(|c| c.team_id == team && c.id == id)
                .ok_or(DeleteClientError::NotFound)?;
            let gone = state.clients.remove(index);
            state.record(notify::raise::client_deleted(&gone).events(&*describe, at));
            Ok(())
        })
    }
}

impl MemoryStore {
    /// Runs `change` on the state under the lock; rings the job signal after a success.
    pub(crate) fn changed<T, E>(&self, change: impl FnOnce(&mut State) -> Result<T, E>) -> Result<T, E> {
        let answer = change(&mut self.state());
        if answer.is_ok() {
            self.signal.notify_one();
        }
        answer
    }
}

#[async_trait]
impl StoreHealth for MemoryStore {
    async fn ping(&self) -> Result<(), StoreError> {
        Ok(())
    }

    fn status(&self) -> StoreStatus {
        StoreStatus { max_size: 1, size: 1, available: 1, waiting: 0 }
    }
}
