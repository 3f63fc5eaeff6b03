//! Port contracts. Each test takes a freshly migrated store; `for_each_adapter!` runs it
//! on all three adapters, so they provably behave alike.

use acceptance::{Backend, TestDb, create_key, create_team, create_user};
use accounts::{
    AccountStore, CreateApiKeyError, CreateUserError, Permission, RevokeApiKeyError, Role, Scope, TeamId,
};
use app::Store;
use billing::client::{KeptPostalCode, OptionalText, RequiredText};
use billing::{Client, ClientDetails, DeleteClientError, ReplaceClientError};
use chrono::{TimeDelta, Utc};
use kernel::{Clock, Email, Id, SystemClock};

macro_rules! for_each_adapter {
    ($($test:ident),* $(,)?) => {
        mod memory {
            $(#[tokio::test] async fn $test() {
                crate::contract::run(acceptance::Backend::Memory, super::$test).await
            })*
        }
        mod sqlite {
            $(#[tokio::test] async fn $test() {
                crate::contract::run(acceptance::Backend::Sqlite, super::$test).await
            })*
        }
        mod postgres {
            $(#[tokio::test] async fn $test() {
                crate::contract::run(acceptance::Backend::Postgres, super::$test).await
            })*
        }
    };
}

mod agent;
mod deliveries;
mod idempotency;
mod invoices;
mod timers;
mod tracking;
mod turns;

for_each_adapter!(
    teams_round_trip,
    users_belong_to_existing_teams_with_unique_emails,
    users_list_per_team_oldest_first_with_every_field,
    keys_belong_to_users_of_their_team,
    credentials_are_found_by_hash_only,
    keys_list_per_team_oldest_first,
    revocation_keeps_the_first_time,
    key_use_never_moves_backwards,
    bootstrap_happens_once,
    concurrent_bootstraps_make_one_team,
    clients_round_trip,
    clients_are_invisible_to_other_teams,
    clients_list_in_name_order,
    replace_changes_details_and_keeps_creation,
    delete_is_permanent_and_scoped,
);

pub(crate) async fn run<F, Fut>(backend: Backend, test: F)
where
    F: FnOnce(Store) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let db = TestDb::new(backend).await;
    let store = db.open().await;
    test(store).await;
}

fn details(name: &str) -> ClientDetails {
    ClientDetails {
        name: RequiredText::parse(name).unwrap(),
        email: Email::parse("zoe@example.com").unwrap(),
        phone: OptionalText::parse("+30 210 000 0000").unwrap(),
        vat_number: OptionalText::parse("EL123456789").unwrap(),
        line1: OptionalText::parse("Οδός Ερμού 1").unwrap(),
        line2: OptionalText::parse("").unwrap(),
        line3: OptionalText::parse("Ёлка").unwrap(),
        postal_code: KeptPostalCode::parse("105 63").unwrap(),
    }
}

async fn stored_client(store: &Store, team: TeamId, name: &str) -> Client {
    let client = Client::new(team, details(name), SystemClock.now());
    store.stores().billing.create(&client).await.unwrap();
    client
}

async fn teams_round_trip(store: Store) {
    let accounts = store.accounts();
    let team = create_team(&store, "Ακμή — Ёлка").await;
    let found = accounts.get_team(team).await.unwrap().unwrap();
    assert_eq!((found.id, found.name.as_str(), found.currency.as_str()), (team, "Ακμή — Ёлка", "EUR"));
    assert_eq!(accounts.get_team(TeamId::generate()).await.unwrap(), None);
}

async fn users_belong_to_existing_teams_with_unique_emails(store: Store) {
    let accounts = store.accounts();
    let (team, other) = (create_team(&store, "A").await, create_team(&store, "B").await);
    let now = SystemClock.now();
    let user = |team, email: &str| {
        accounts::new_user(
            team,
            Email::parse(email).unwrap(),
            accounts::UserName::parse("").unwrap(),
            Role::Member,
            now,
        )
    };
    accounts.create_user(&user(team, "Ada@Example.com")).await.unwrap();
    let taken = accounts.create_user(&user(team, "ada@example.COM")).await;
    assert!(matches!(taken, Err(CreateUserError::EmailTaken)), "{taken:?}");
    accounts.create_user(&user(other, "ada@example.com")).await.unwrap();
    let orphan = accounts.create_user(&user(TeamId::generate(), "x@example.com")).await;
    assert!(matches!(orphan, Err(CreateUserError::TeamNotFound)), "{orphan:?}");
}

async fn users_list_per_team_oldest_first_with_every_field(store: Store) {
    let accounts = store.accounts();
    let (team, other) = (create_team(&store, "A").await, create_team(&store, "B").await);
    let at = |seconds: i64| chrono::DateTime::from_timestamp(1_800_000_000 + seconds, 0).unwrap();
    let user = |team, email: &str, role, seconds| {
        let name = accounts::UserName::parse("Zoë Ёлка").unwrap();
        accounts::new_user(team, Email::parse(email).unwrap(), name, role, at(seconds))
    };
    let (later, earlier) =
        (user(team, "b@example.com", Role::Member, 20), user(team, "a@example.com", Role::Admin, 10));
    for made in [&later, &earlier, &user(other, "c@example.com", Role::Owner, 0)] {
        accounts.create_user(made).await.unwrap();
    }
    assert_eq!(accounts.list_users(team).await.unwrap(), [earlier, later]);
    assert!(accounts.list_users(TeamId::generate()).await.unwrap().is_empty());
}

async fn keys_belong_to_users_of_their_team(store: Store) {
    let (team, other) = (create_team(&store, "A").await, create_team(&store, "B").await);
    let stranger = create_user(&store, other, Role::Owner).await;
    let issued = accounts::issue_api_key(team, stranger, Scope::Write, None, SystemClock.now());
    let refused = store.accounts().create_api_key(&issued.key, &issued.hash).await;
    assert!(matches!(refused, Err(CreateApiKeyError::UserNotInTeam)), "{refused:?}");
    assert_eq!(store.accounts().find_credential(&issued.hash).await.unwrap(), None);
}

async fn credentials_are_found_by_hash_only(store: Store) {
    let team = create_team(&store, "A").await;
    let admin = create_user(&store, team, Role::Admin).await;
    let scope = Scope::from_parts("restricted", &["clients:write", "agent:read"]).unwrap();
    let issued = accounts::issue_api_key(team, admin, scope, Some(TimeDelta::days(30)), SystemClock.now());
    let issued = issued.store(store.accounts().as_ref()).await.unwrap();
    let found = store.accounts().find_credential(&issued.hash).await.unwrap().unwrap();
    assert_eq!(found.key, issued.key);
    assert_eq!(found.role, Role::Admin);
    assert!(found.key.scope.allows(Permission::ClientsRead));
    assert!(!found.key.scope.allows(Permission::TrackRead));
    let unknown = accounts::ApiKeySecret::generate().hash();
    assert_eq!(store.accounts().find_credential(&unknown).await.unwrap(), None);
}

async fn keys_list_per_team_oldest_first(store: Store) {
    let (team, other) = (create_team(&store, "A").await, create_team(&store, "B").await);
    let (owner, other_owner) =
        (create_user(&store, team, Role::Owner).await, create_user(&store, other, Role::Owner).await);
    let (first, _) = create_key(&store, team, owner, Scope::ReadOnly, None).await;
    let (second, _) = create_key(&store, team, owner, Scope::Write, None).await;
    create_key(&store, other, other_owner, Scope::Write, None).await;
    let listed: Vec<_> =
        store.accounts().list_api_keys(team).await.unwrap().into_iter().map(|k| k.id).collect();
    assert_eq!(listed, [first, second]);
}

async fn revocation_keeps_the_first_time(store: Store) {
    let team = create_team(&store, "A").await;
    let owner = create_user(&store, team, Role::Owner).await;
    let issued = accounts::issue_api_key(team, owner, Scope::Write, None, SystemClock.now());
    let issued = issued.store(store.accounts().as_ref()).await.unwrap();
    let first = SystemClock.now();
    store.accounts().revoke_api_key(issued.key.id, first).await.unwrap();
    store.accounts().revoke_api_key(issued.key.id, first + TimeDelta::hours(1)).await.unwrap();
    let found = store.accounts().find_credential(&issued.hash).await.unwrap().unwrap();
    assert_eq!(found.key.revoked_at, Some(first));
    assert!(found.authenticate(SystemClock.now()).is_err());
    let unknown = store.accounts().revoke_api_key(accounts::ApiKeyId::generate(), first).await;
    assert!(matches!(unknown, Err(RevokeApiKeyError::NotFound)), "{unknown:?}");
}

async fn key_use_never_moves_backwards(store: Store) {
    let team = create_team(&store, "A").await;
    let owner = create_user(&store, team, Role::Owner).await;
    let issued = accounts::issue_api_key(team, owner, Scope::Write, None, SystemClock.now());
    let issued = issued.store(store.accounts().as_ref()).await.unwrap();
    let later = SystemClock.now() + TimeDelta::minutes(5);
    store.accounts().record_key_use(team, issued.key.id, later).await.unwrap();
    store.accounts().record_key_use(team, issued.key.id, later - TimeDelta::minutes(1)).await.unwrap();
    // Another team's id never touches the key.
    store
        .accounts()
        .record_key_use(TeamId::generate(), issued.key.id, later + TimeDelta::hours(1))
        .await
        .unwrap();
    let found = store.accounts().find_credential(&issued.hash).await.unwrap().unwrap();
    assert_eq!(found.key.last_used_at, Some(later));
}

async fn bootstrap_happens_once(store: Store) {
    let accounts: std::sync::Arc<dyn AccountStore> = store.accounts();
    let secret =
        accounts::bootstrap(accounts.as_ref(), Utc::now()).await.unwrap().expect("first run makes a key");
    let credential = accounts.find_credential(&secret.hash()).await.unwrap().unwrap();
    assert_eq!((credential.role, credential.key.scope.clone()), (Role::Owner, Scope::Write));
    assert!(accounts::bootstrap(accounts.as_ref(), Utc::now()).await.unwrap().is_none());
}

/// Replicas starting together each try the first-start bootstrap: one makes the team.
async fn concurrent_bootstraps_make_one_team(store: Store) {
    let accounts: std::sync::Arc<dyn AccountStore> = store.accounts();
    let attempt = || accounts::bootstrap(accounts.as_ref(), Utc::now());
    let (a, b, c, d) = tokio::join!(attempt(), attempt(), attempt(), attempt());
    let made = [a.unwrap(), b.unwrap(), c.unwrap(), d.unwrap()];
    assert_eq!(made.iter().filter(|secret| secret.is_some()).count(), 1, "one bootstrap makes the team");
}

async fn clients_round_trip(store: Store) {
    let team = create_team(&store, "A").await;
    let client = stored_client(&store, team, "Zoë Łukasiewicz — Ёлка ΑΒΓ").await;
    let found = store.stores().billing.get(team, client.id).await.unwrap();
    assert_eq!(found, Some(client));
}

async fn clients_are_invisible_to_other_teams(store: Store) {
    let (team, other) = (create_team(&store, "A").await, create_team(&store, "B").await);
    let client = stored_client(&store, team, "Mine").await;
    let clients = store.stores().billing;
    assert_eq!(clients.get(other, client.id).await.unwrap(), None);
    assert!(clients.list(other).await.unwrap().is_empty());
    let replaced = clients.replace(other, client.id, &details("Theirs"), SystemClock.now()).await;
    assert!(matches!(replaced, Err(ReplaceClientError::NotFound)), "{replaced:?}");
    let deleted = clients.delete(other, client.id).await;
    assert!(matches!(deleted, Err(DeleteClientError::NotFound)), "{deleted:?}");
    assert_eq!(clients.get(team, client.id).await.unwrap(), Some(client));
}

async fn clients_list_in_name_order(store: Store) {
    let team = create_team(&store, "A").await;
    for name in ["beta", "Alpha", "Élan", "alpha", "ärger"] {
        stored_client(&store, team, name).await;
    }
    let listed = store.stores().billing.list(team).await.unwrap();
    let names: Vec<_> = listed.iter().map(|c| c.details.name.as_str()).collect();
    assert_eq!(names, ["Alpha", "alpha", "beta", "ärger", "Élan"]);
}

async fn replace_changes_details_and_keeps_creation(store: Store) {
    let team = create_team(&store, "A").await;
    let client = stored_client(&store, team, "Old").await;
    let later = client.created_at + TimeDelta::seconds(90);
    let replaced = store.stores().billing.replace(team, client.id, &details("New"), later).await.unwrap();
    assert_eq!(replaced, client.clone().replaced(details("New"), later));
    assert_eq!(store.stores().billing.get(team, client.id).await.unwrap(), Some(replaced));
    let missing =
        store.stores().billing.replace(team, billing::ClientId::generate(), &details("X"), later).await;
    assert!(matches!(missing, Err(ReplaceClientError::NotFound)), "{missing:?}");
}

async fn delete_is_permanent_and_scoped(store: Store) {
    let team = create_team(&store, "A").await;
    let (gone, kept) = (stored_client(&store, team, "Gone").await, stored_client(&store, team, "Kept").await);
    let clients = store.stores().billing;
    clients.delete(team, gone.id).await.unwrap();
    assert_eq!(clients.get(team, gone.id).await.unwrap(), None);
    assert!(matches!(clients.delete(team, gone.id).await, Err(DeleteClientError::NotFound)));
    assert_eq!(clients.list(team).await.unwrap(), [kept]);
}
