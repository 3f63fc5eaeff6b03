//! The repository trigger's delivery log and durable queue.

use crate::Ports;
use crate::create_team;
use accounts::TeamId;
use chrono::{DateTime, TimeDelta, Utc};
use kernel::Id;
use triggers::github::intake::sha256_hex;
use triggers::{
    Acceptance, AttemptResult, ConversationKey, DeliveryEntry, DeliveryEntryId, DeliveryFilter, DeliveryId,
    DeliveryState, NewDelivery, RunId, Verdict,
};

/// A lease that outlasts the test.
fn lease() -> DateTime<Utc> {
    now() + TimeDelta::minutes(5)
}

/// Now, to the millisecond, as storage keeps it.
fn now() -> DateTime<Utc> {
    DateTime::from_timestamp_millis(Utc::now().timestamp_millis()).unwrap()
}

fn entry(team: TeamId, delivery: &str, body: &str, key: Option<&str>, at: DateTime<Utc>) -> DeliveryEntry {
    DeliveryEntry {
        id: DeliveryEntryId::generate(),
        team_id: team,
        delivery: DeliveryId::parse(delivery).unwrap(),
        event: "pull_request".into(),
        action: Some("opened".into()),
        repository: Some("octo-org/hello-world".into()),
        conversation: key.map(|k| ConversationKey::parse(k).unwrap()),
        summary: format!("pull_request.opened octo-org/hello-world: {delivery}"),
        verdict: Verdict::Accepted,
        note: None,
        body_sha256: sha256_hex(body.as_bytes()),
        received_at: at,
        progress: None,
    }
}

fn new(team: TeamId, delivery: &str, body: &str, key: Option<&str>, at: DateTime<Utc>) -> NewDelivery {
    NewDelivery { entry: entry(team, delivery, body, key, at), input: format!("rendered {body}") }
}

fn week_before(at: DateTime<Utc>) -> DateTime<Utc> {
    at - TimeDelta::days(7)
}

async fn accept(store: &Ports, delivery: &NewDelivery) -> Acceptance {
    let at = delivery.entry.received_at;
    store.agent().accept(delivery, week_before(at)).await.unwrap()
}

async fn log(store: &Ports, team: TeamId) -> Vec<DeliveryEntry> {
    store.agent().list_deliveries(team, &DeliveryFilter { verdict: None, limit: 500 }).await.unwrap()
}

pub async fn accepted_deliveries_are_queued_logged_and_claimed_once(store: Ports) {
    let team = create_team(&store, "Acme").await;
    let at = now();
    let delivery = new(team, "guid-1", "{\"n\":1}", Some("github:octo-org/hello-world#42"), at);
    assert_eq!(accept(&store, &delivery).await, Acceptance::Accepted);
    let logged = log(&store, team).await;
    assert_eq!(logged.len(), 1);
    let progress = logged[0].progress.clone().unwrap();
    assert_eq!((progress.state, progress.attempts, progress.run), (DeliveryState::Queued, 0, None));
    assert_eq!(
        DeliveryEntry { progress: None, ..logged[0].clone() },
        DeliveryEntry { progress: None, ..delivery.entry.clone() },
        "every field round-trips"
    );
    let pending = store.agent().pending_deliveries(team, 100).await.unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(
        (pending[0].id, pending[0].state, pending[0].next_attempt_at),
        (delivery.entry.id, DeliveryState::Queued, at)
    );
    let claimed = store.agent().claim_delivery(team, delivery.entry.id, lease()).await.unwrap().unwrap();
    assert_eq!(claimed.input, delivery.input);
    assert_eq!(claimed.attempts, 1);
    assert_eq!(claimed.conversation, delivery.entry.conversation);
    assert_eq!(claimed.summary, delivery.entry.summary, "the run keeps the summary");
    assert!(
        store.agent().claim_delivery(team, delivery.entry.id, lease()).await.unwrap().is_none(),
        "claimed once"
    );
    let other = create_team(&store, "Other").await;
    assert!(store.agent().claim_delivery(other, delivery.entry.id, lease()).await.unwrap().is_none());
    assert_eq!(store.agent().pending_deliveries(team, 100).await.unwrap()[0].state, DeliveryState::Running);
}

pub async fn a_repeated_id_or_body_is_a_duplicate_within_the_window(store: Ports) {
    let team = create_team(&store, "Acme").await;
    let at = now();
    assert_eq!(accept(&store, &new(team, "guid-1", "body one", None, at)).await, Acceptance::Accepted);
    // The same id again (a redelivery), and the same body under another id (a replay).
    assert_eq!(accept(&store, &new(team, "guid-1", "body two", None, at)).await, Acceptance::Duplicate);
    assert_eq!(accept(&store, &new(team, "guid-2", "body one", None, at)).await, Acceptance::Duplicate);
    // Another team's hook receiving the same event is its own delivery.
    let other = create_team(&store, "Other").await;
    assert_eq!(accept(&store, &new(other, "guid-1", "body one", None, at)).await, Acceptance::Accepted);
    let logged = log(&store, team).await;
    let verdicts: Vec<Verdict> = logged.iter().rev().map(|e| e.verdict).collect();
    assert_eq!(verdicts, [Verdict::Accepted, Verdict::Duplicate, Verdict::Duplicate]);
    assert!(
        logged
            .iter()
            .filter(|e| e.verdict == Verdict::Duplicate)
            .all(|e| e.progress.is_none() && e.note.is_some())
    );
    assert_eq!(
        store.agent().pending_deliveries(team, 100).await.unwrap().len(),
        1,
        "duplicates queue nothing"
    );
    // Past the window the same delivery is accepted again.
    let later = at + TimeDelta::days(8);
    assert_eq!(accept(&store, &new(team, "guid-1", "body one", None, later)).await, Acceptance::Accepted);
}

pub async fn two_copies_at_once_make_one_accepted_delivery(store: Ports) {
    let team = create_team(&store, "Acme").await;
    let at = now();
    let mut copies = tokio::task::JoinSet::new();
    for _ in 0..8 {
        let (store, copy) = (store.clone(), new(team, "guid-race", "same body", None, at));
        copies.spawn(async move { accept(&store, &copy).await });
    }
    let results = copies.join_all().await;
    assert_eq!(results.iter().filter(|r| **r == Acceptance::Accepted).count(), 1, "{results:?}");
    assert_eq!(store.agent().pending_deliveries(team, 100).await.unwrap().len(), 1);
    assert_eq!(log(&store, team).await.len(), 8, "every copy is logged");
}

pub async fn attempts_finish_retry_or_fail(store: Ports) {
    let team = create_team(&store, "Acme").await;
    let at = now();
    let mut ids = Vec::new();
    for i in 0..3 {
        let delivery = new(team, &format!("guid-{i}"), &format!("body {i}"), None, at);
        accept(&store, &delivery).await;
        ids.push(delivery.entry.id);
    }
    let queue = store.agent();
    let run = RunId::generate();
    let retry_at = at + TimeDelta::seconds(30);
    for id in &ids {
        queue.claim_delivery(team, *id, lease()).await.unwrap().unwrap();
    }
    queue.finish_attempt(team, ids[0], 1, &AttemptResult::Done { run: Some(run) }, at).await.unwrap();
    let retry = AttemptResult::Retry { run: Some(run), error: "model call failed".into(), at: retry_at };
    queue.finish_attempt(team, ids[1], 1, &retry, at).await.unwrap();
    let failed = AttemptResult::Failed { run: None, error: "gave up".into() };
    queue.finish_attempt(team, ids[2], 1, &failed, at).await.unwrap();

    let logged = log(&store, team).await;
    let progress = |id| logged.iter().find(|e| e.id == id).unwrap().progress.clone().unwrap();
    let done = progress(ids[0]);
    assert_eq!(
        (done.state, done.run, done.error, done.finished_at),
        (DeliveryState::Done, Some(run), None, Some(at))
    );
    let again = progress(ids[1]);
    assert_eq!(
        (again.state, again.error.as_deref(), again.finished_at),
        (DeliveryState::Queued, Some("model call failed"), None)
    );
    let gone = progress(ids[2]);
    assert_eq!(
        (gone.state, gone.error.as_deref(), gone.attempts),
        (DeliveryState::Failed, Some("gave up"), 1)
    );

    let pending = queue.pending_deliveries(team, 100).await.unwrap();
    assert_eq!(pending.len(), 1, "done and failed deliveries are no longer pending");
    assert!(queue.pending_deliveries(team, 0).await.unwrap().is_empty(), "bounded by the limit");
    assert_eq!((pending[0].id, pending[0].next_attempt_at), (ids[1], retry_at));
    assert_eq!(queue.claim_delivery(team, ids[1], lease()).await.unwrap().unwrap().attempts, 2);
}

pub async fn runs_whose_lease_ended_are_queued_again(store: Ports) {
    let team = create_team(&store, "Acme").await;
    let queue = store.agent();
    let (first, second) = (new(team, "a", "a", None, now()), new(team, "b", "b", None, now()));
    accept(&store, &first).await;
    accept(&store, &second).await;
    let oldest = queue.pending_deliveries(team, 1).await.unwrap();
    assert_eq!(oldest.iter().map(|d| d.id).collect::<Vec<_>>(), [first.entry.id], "the oldest first");
    let until = now() + TimeDelta::seconds(30);
    let claimed = queue.claim_delivery(team, first.entry.id, until).await.unwrap().unwrap();
    queue.claim_delivery(team, second.entry.id, until).await.unwrap().unwrap();
    assert_eq!(queue.requeue_expired(team, now()).await.unwrap(), 0, "leases still held stay running");
    // The first one's process keeps renewing; the second one's stopped.
    let renewed = until + TimeDelta::seconds(30);
    assert!(queue.renew_lease(team, first.entry.id, claimed.attempts, renewed).await.unwrap());
    assert_eq!(queue.requeue_expired(team, until + TimeDelta::seconds(1)).await.unwrap(), 1);
    let states: Vec<DeliveryState> =
        queue.pending_deliveries(team, 100).await.unwrap().iter().map(|d| d.state).collect();
    assert_eq!(states, [DeliveryState::Running, DeliveryState::Queued]);
    let resumed = queue.claim_delivery(team, second.entry.id, lease()).await.unwrap().unwrap();
    assert_eq!(resumed.attempts, 2, "the interrupted attempt counts");
    assert!(
        !queue.renew_lease(team, second.entry.id, 1, lease()).await.unwrap(),
        "the first attempt no longer holds it"
    );
    assert!(queue.renew_lease(team, second.entry.id, 2, lease()).await.unwrap());
    // The first attempt's late result changes nothing; the second's lands.
    let done = AttemptResult::Done { run: None };
    let state = async || {
        let log = log(&store, team).await;
        log.iter().find(|e| e.id == second.entry.id).unwrap().progress.clone().unwrap().state
    };
    queue.finish_attempt(team, second.entry.id, 1, &done, now()).await.unwrap();
    assert_eq!(state().await, DeliveryState::Running);
    queue.finish_attempt(team, second.entry.id, 2, &done, now()).await.unwrap();
    assert_eq!(state().await, DeliveryState::Done);
}

pub async fn pruning_forgets_old_records_but_not_pending_deliveries(store: Ports) {
    let team = create_team(&store, "Acme").await;
    let queue = store.agent();
    let old = now() - TimeDelta::days(40);
    let (done, pending) = (new(team, "old-done", "1", None, old), new(team, "old-pending", "2", None, old));
    accept(&store, &done).await;
    accept(&store, &pending).await;
    queue.claim_delivery(team, done.entry.id, lease()).await.unwrap();
    queue.finish_attempt(team, done.entry.id, 1, &AttemptResult::Done { run: None }, old).await.unwrap();
    let fresh = new(team, "fresh", "3", None, now());
    accept(&store, &fresh).await;
    let removed =
        queue.prune_deliveries(team, week_before(now()), now() - TimeDelta::days(30)).await.unwrap();
    assert_eq!(removed, 3, "two old dedupe records and the old finished log entry");
    let left: Vec<String> = log(&store, team).await.iter().map(|e| e.delivery.to_string()).collect();
    assert_eq!(left, ["fresh", "old-pending"]);
    // The old delivery's id is free again; the fresh one's is still remembered.
    assert_eq!(accept(&store, &new(team, "old-done", "1", None, now())).await, Acceptance::Accepted);
    assert_eq!(accept(&store, &new(team, "fresh", "4", None, now())).await, Acceptance::Duplicate);
}

pub async fn the_log_lists_newest_first_filtered_and_per_team(store: Ports) {
    let team = create_team(&store, "Acme").await;
    let other = create_team(&store, "Other").await;
    let at = now();
    accept(&store, &new(team, "first", "1", None, at)).await;
    let ignored = DeliveryEntry {
        verdict: Verdict::Ignored,
        note: Some("event star is not in the trigger's events".into()),
        event: "star".into(),
        ..entry(team, "second", "2", None, at + TimeDelta::seconds(1))
    };
    store.agent().log_delivery(&ignored).await.unwrap();
    accept(&store, &new(team, "third", "3", None, at + TimeDelta::seconds(2))).await;
    accept(&store, &new(other, "elsewhere", "4", None, at)).await;
    let names =
        |entries: Vec<DeliveryEntry>| entries.iter().map(|e| e.delivery.to_string()).collect::<Vec<_>>();
    assert_eq!(names(log(&store, team).await), ["third", "second", "first"]);
    let only_ignored = DeliveryFilter { verdict: Some(Verdict::Ignored), limit: 10 };
    let listed = store.agent().list_deliveries(team, &only_ignored).await.unwrap();
    assert_eq!(listed, [ignored]);
    let newest =
        store.agent().list_deliveries(team, &DeliveryFilter { verdict: None, limit: 1 }).await.unwrap();
    assert_eq!(names(newest), ["third"]);
    assert_eq!(names(log(&store, other).await), ["elsewhere"]);
}
