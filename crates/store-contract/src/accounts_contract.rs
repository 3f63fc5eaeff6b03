//! The accounts and clients ports: teams, users, keys, the first-start bootstrap, clients.

use crate::Ports;
use crate::{create_key, create_team, create_user};
use accounts::{
    AccountStore, CreateApiKeyError, CreateUserError, Permission, RevokeApiKeyError, Role, Scope, TeamId,
};
use billing::client::{KeptPostalCode, OptionalText, RequiredText};
use billing::{Client, ClientDetails, DeleteClientError, ReplaceClientError};
use chrono::{TimeDelta, Utc};
use kernel::{Clock, Email, Id, SystemClock};

fn details(name: &str) -> ClientDetails {
    ClientDetails {
        language: Some(locale::Language::Dutch),
        peppol_id: Some(billing::peppol::PeppolId::parse("9933:EL123456789").unwrap()),
        name: RequiredText::parse(name).unwrap(),
        email: Email::parse("zoe@example.com").unwrap(),
        phone: OptionalText::parse("+30 210 000 0000").unwrap(),
        vat_number: OptionalText::parse("EL123456789").unwrap(),
        line1: OptionalText::parse("Οδός Ερμού 1").unwrap(),
        line2: OptionalText::parse("").unwrap(),
        line3: OptionalText::parse("Ёлка").unwrap(),
        postal_code: KeptPostalCode::parse("105 63").unwrap(),
        city: OptionalText::parse("Αθήνα").unwrap(),
        country_code: Some(billing::CountryCode::parse("GR").unwrap()),
        buyer_reference: OptionalText::parse("04011000-1234512345-06").unwrap(),
        reminders_enabled: true,
        currency: Some(billing::money::Currency::parse("CHF").unwrap()),
        payment_terms: Some(billing::client::PaymentTerms::new(14).unwrap()),
    }
}

async fn stored_client(store: &Ports, team: TeamId, name: &str) -> Client {
    let client = Client::new(team, details(name), SystemClock.now());
    store.billing().create(&client).await.unwrap();
    client
}

pub async fn teams_round_trip(store: Ports) {
    let accounts = store.accounts();
    let team = create_team(&store, "Ακμή — Ёлка").await;
    let found = accounts.get_team(team).await.unwrap().unwrap();
    assert_eq!((found.id, found.name.as_str(), found.currency.as_str()), (team, "Ακμή — Ёлка", "EUR"));
    assert_eq!(accounts.get_team(TeamId::generate()).await.unwrap(), None);
}

pub async fn users_belong_to_existing_teams_with_unique_emails(store: Ports) {
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

pub async fn users_list_per_team_oldest_first_with_every_field(store: Ports) {
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
    assert_eq!(accounts.list_users(team).await.unwrap(), [earlier.clone(), later]);
    assert!(accounts.list_users(TeamId::generate()).await.unwrap().is_empty());
    assert_eq!(accounts.get_user(team, earlier.id).await.unwrap(), Some(earlier.clone()));
    assert_eq!(accounts.get_user(other, earlier.id).await.unwrap(), None, "another team's user is none");
    assert_eq!(accounts.get_user(team, accounts::UserId::generate()).await.unwrap(), None);
}

pub async fn keys_belong_to_users_of_their_team(store: Ports) {
    let (team, other) = (create_team(&store, "A").await, create_team(&store, "B").await);
    let stranger = create_user(&store, other, Role::Owner).await;
    let issued = accounts::issue_api_key(team, stranger, Scope::Write, None, SystemClock.now());
    let refused = store.accounts().create_api_key(&issued.key, &issued.hash).await;
    assert!(matches!(refused, Err(CreateApiKeyError::UserNotInTeam)), "{refused:?}");
    assert_eq!(store.accounts().find_credential(&issued.hash).await.unwrap(), None);
}

pub async fn credentials_are_found_by_hash_only(store: Ports) {
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

pub async fn keys_list_per_team_oldest_first(store: Ports) {
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

pub async fn revocation_keeps_the_first_time(store: Ports) {
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

pub async fn key_use_never_moves_backwards(store: Ports) {
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

pub async fn bootstrap_happens_once(store: Ports) {
    let accounts: std::sync::Arc<dyn AccountStore> = store.accounts();
    let secret =
        accounts::bootstrap(accounts.as_ref(), Utc::now()).await.unwrap().expect("first run makes a key");
    let credential = accounts.find_credential(&secret.hash()).await.unwrap().unwrap();
    assert_eq!((credential.role, credential.key.scope.clone()), (Role::Owner, Scope::Write));
    assert!(accounts::bootstrap(accounts.as_ref(), Utc::now()).await.unwrap().is_none());
}

/// Replicas starting together each try the first-start bootstrap: one makes the team.
pub async fn concurrent_bootstraps_make_one_team(store: Ports) {
    let accounts: std::sync::Arc<dyn AccountStore> = store.accounts();
    let attempt = || accounts::bootstrap(accounts.as_ref(), Utc::now());
    let (a, b, c, d) = tokio::join!(attempt(), attempt(), attempt(), attempt());
    let made = [a.unwrap(), b.unwrap(), c.unwrap(), d.unwrap()];
    assert_eq!(made.iter().filter(|secret| secret.is_some()).count(), 1, "one bootstrap makes the team");
}

pub async fn clients_round_trip(store: Ports) {
    let team = create_team(&store, "A").await;
    let client = stored_client(&store, team, "Zoë Łukasiewicz — Ёлка ΑΒΓ").await;
    let found = store.billing().get(team, client.id).await.unwrap();
    assert_eq!(found, Some(client));
}

pub async fn clients_are_invisible_to_other_teams(store: Ports) {
    let (team, other) = (create_team(&store, "A").await, create_team(&store, "B").await);
    let client = stored_client(&store, team, "Mine").await;
    let clients = store.billing();
    assert_eq!(clients.get(other, client.id).await.unwrap(), None);
    assert!(clients.list(other).await.unwrap().is_empty());
    let replaced = clients.replace(other, client.id, &details("Theirs"), SystemClock.now()).await;
    assert!(matches!(replaced, Err(ReplaceClientError::NotFound)), "{replaced:?}");
    let deleted = clients.delete(other, client.id, chrono::Utc::now()).await;
    assert!(matches!(deleted, Err(DeleteClientError::NotFound)), "{deleted:?}");
    assert_eq!(clients.get(team, client.id).await.unwrap(), Some(client));
}

pub async fn clients_list_in_name_order(store: Ports) {
    let team = create_team(&store, "A").await;
    for name in ["beta", "Alpha", "Élan", "alpha", "ärger"] {
        stored_client(&store, team, name).await;
    }
    let listed = store.billing().list(team).await.unwrap();
    let names: Vec<_> = listed.iter().map(|c| c.details.name.as_str()).collect();
    assert_eq!(names, ["Alpha", "alpha", "beta", "ärger", "Élan"]);
}

pub async fn replace_changes_details_and_keeps_creation(store: Ports) {
    let team = create_team(&store, "A").await;
    let client = stored_client(&store, team, "Old").await;
    let later = client.created_at + TimeDelta::seconds(90);
    let replaced = store.billing().replace(team, client.id, &details("New"), later).await.unwrap();
    assert_eq!(replaced, client.clone().replaced(details("New"), later));
    assert_eq!(store.billing().get(team, client.id).await.unwrap(), Some(replaced));
    let missing = store.billing().replace(team, billing::ClientId::generate(), &details("X"), later).await;
    assert!(matches!(missing, Err(ReplaceClientError::NotFound)), "{missing:?}");
}

pub async fn delete_is_permanent_and_scoped(store: Ports) {
    let team = create_team(&store, "A").await;
    let (gone, kept) = (stored_client(&store, team, "Gone").await, stored_client(&store, team, "Kept").await);
    let clients = store.billing();
    clients.delete(team, gone.id, chrono::Utc::now()).await.unwrap();
    assert_eq!(clients.get(team, gone.id).await.unwrap(), None);
    assert!(matches!(
        clients.delete(team, gone.id, chrono::Utc::now()).await,
        Err(DeleteClientError::NotFound)
    ));
    assert_eq!(clients.list(team).await.unwrap(), [kept]);
}
