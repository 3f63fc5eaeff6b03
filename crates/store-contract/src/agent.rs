//! The agent runtime's ports: conversation memory and run history.

use crate::Ports;
use crate::create_team;
use accounts::TeamId;
use chrono::{DateTime, TimeDelta, Utc};
use kernel::{Clock, Id, SystemClock};
use triggers::{
    ConversationKey, Message, Role, RunFilter, RunId, RunRecord, RunStatus, ToolCallRecord, TriggerKind,
    Usage,
};

fn key(text: &str) -> ConversationKey {
    ConversationKey::parse(text).unwrap()
}

async fn remember(store: &Ports, team: TeamId, conversation: &str, messages: &[Message]) {
    store.agent().append_messages(team, &key(conversation), messages, SystemClock.now()).await.unwrap();
}

async fn recall(store: &Ports, team: TeamId, conversation: &str, limit: u32) -> Vec<Message> {
    store.agent().recent_messages(team, &key(conversation), limit).await.unwrap()
}

pub async fn memory_gives_the_last_messages_in_order(store: Ports) {
    let team = create_team(&store, "Acme").await;
    assert!(recall(&store, team, "c", 50).await.is_empty());
    remember(&store, team, "c", &[Message::user("one"), Message::assistant("two")]).await;
    remember(&store, team, "c", &[Message::user("three"), Message::assistant("four")]).await;
    let all = recall(&store, team, "c", 50).await;
    let contents: Vec<&str> = all.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(contents, ["one", "two", "three", "four"]);
    assert_eq!(all[0].role, Role::User);
    assert_eq!(all[1].role, Role::Assistant);
    let last = recall(&store, team, "c", 3).await;
    let contents: Vec<&str> = last.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(contents, ["two", "three", "four"], "the last three, oldest first");
}

pub async fn memory_is_per_conversation_and_per_team(store: Ports) {
    let (acme, other) = (create_team(&store, "Acme").await, create_team(&store, "Other").await);
    remember(&store, acme, "github:acme/api#1", &[Message::user("acme's")]).await;
    remember(&store, other, "github:acme/api#1", &[Message::user("other's")]).await;
    remember(&store, acme, "github:acme/api#2", &[Message::user("another conversation")]).await;
    let acme_one = recall(&store, acme, "github:acme/api#1", 50).await;
    assert_eq!(acme_one, [Message::user("acme's")]);
    assert_eq!(recall(&store, other, "github:acme/api#1", 50).await, [Message::user("other's")]);
    assert!(recall(&store, other, "github:acme/api#2", 50).await.is_empty());
}

fn run(team: TeamId, started_at: DateTime<Utc>, conversation: Option<&str>, status: RunStatus) -> RunRecord {
    RunRecord {
        id: RunId::generate(),
        team_id: team,
        trigger: TriggerKind::Webhook,
        conversation: conversation.map(key),
        input_excerpt: "Summarise ticket 42 — übersicht".into(),
        status,
        steps: 3,
        usage: Usage { input_tokens: 1200, output_tokens: 345 },
        started_at,
        finished_at: started_at + TimeDelta::milliseconds(1534),
        error: (status != RunStatus::Ok).then(|| "model call failed: 500".to_owned()),
        tool_calls: vec![
            ToolCallRecord::new("list_invoices", "{}", "[{\"serial\": \"INV-0001\"}]", true, 12),
            ToolCallRecord::new("mark_invoice_paid", r#"{"id": "ü"}"#, "error: invoice not found", false, 3),
        ],
        model_input: Some("Summarise ticket 42 — übersicht\nwith its history".into()),
        reply: (status == RunStatus::Ok).then(|| "Ticket 42: paid, closed.".to_owned()),
    }
}

/// Now, to the millisecond, as storage keeps it.
fn now() -> DateTime<Utc> {
    DateTime::from_timestamp_millis(Utc::now().timestamp_millis()).unwrap()
}

pub async fn runs_round_trip_every_field(store: Ports) {
    let team = create_team(&store, "Acme").await;
    let history = store.agent();
    for record in
        [run(team, now(), Some("ticket-42"), RunStatus::Failed), run(team, now(), None, RunStatus::Ok)]
    {
        history.record_run(&record).await.unwrap();
        assert_eq!(history.find_run(team, record.id).await.unwrap(), Some(record));
    }
    let mut timed_out = run(team, now(), Some("x"), RunStatus::Timeout);
    timed_out.trigger = TriggerKind::Github;
    timed_out.usage = Usage { input_tokens: u64::from(u32::MAX) * 4, output_tokens: 0 };
    // A run recorded before the texts were kept has neither.
    timed_out.model_input = None;
    history.record_run(&timed_out).await.unwrap();
    assert_eq!(history.find_run(team, timed_out.id).await.unwrap(), Some(timed_out));
    assert_eq!(history.find_run(team, RunId::generate()).await.unwrap(), None);
}

pub async fn runs_list_newest_first_filtered_and_limited(store: Ports) {
    let team = create_team(&store, "Acme").await;
    let history = store.agent();
    let start = now() - TimeDelta::hours(1);
    let runs: Vec<RunRecord> = (0..5)
        .map(|i| {
            let conversation = if i % 2 == 0 { Some("even") } else { None };
            run(team, start + TimeDelta::minutes(i), conversation, RunStatus::Ok)
        })
        .collect();
    // Recorded out of order: the listing orders them.
    for record in runs.iter().rev() {
        history.record_run(record).await.unwrap();
    }
    let ids = |listed: Vec<RunRecord>| listed.into_iter().map(|r| r.id).collect::<Vec<_>>();
    let all = history.list_runs(team, &RunFilter { conversation: None, limit: 50 }).await.unwrap();
    assert_eq!(ids(all), runs.iter().rev().map(|r| r.id).collect::<Vec<_>>());
    let two = history.list_runs(team, &RunFilter { conversation: None, limit: 2 }).await.unwrap();
    assert_eq!(ids(two), [runs[4].id, runs[3].id]);
    let even =
        history.list_runs(team, &RunFilter { conversation: Some(key("even")), limit: 50 }).await.unwrap();
    assert_eq!(ids(even), [runs[4].id, runs[2].id, runs[0].id]);
}

pub async fn runs_are_invisible_to_other_teams(store: Ports) {
    let (acme, other) = (create_team(&store, "Acme").await, create_team(&store, "Other").await);
    let record = run(acme, now(), Some("c"), RunStatus::Rejected);
    store.agent().record_run(&record).await.unwrap();
    assert_eq!(store.agent().find_run(other, record.id).await.unwrap(), None);
    let listed = store.agent().list_runs(other, &RunFilter { conversation: None, limit: 50 }).await.unwrap();
    assert!(listed.is_empty());
}

pub async fn runs_recorded_together_are_all_stored_or_none_is(store: Ports) {
    let team = create_team(&store, "Acme").await;
    let history = store.agent();
    history.record_runs(&[]).await.unwrap();
    let group: Vec<RunRecord> = (0..3).map(|_| run(team, now(), Some("c"), RunStatus::Ok)).collect();
    history.record_runs(&group).await.unwrap();
    for record in &group {
        assert_eq!(history.find_run(team, record.id).await.unwrap().as_ref(), Some(record));
    }
    // A run recorded twice refuses its whole group: the new runs beside it are not stored.
    let fresh = [run(team, now(), None, RunStatus::Ok), run(team, now(), None, RunStatus::Failed)];
    let refused = [fresh[0].clone(), group[1].clone(), fresh[1].clone()];
    assert!(history.record_runs(&refused).await.is_err());
    for record in &fresh {
        assert_eq!(history.find_run(team, record.id).await.unwrap(), None);
    }
    let all = history.list_runs(team, &RunFilter { conversation: None, limit: 50 }).await.unwrap();
    assert_eq!(all.len(), 3);
    // More than one statement's worth (1,000 rows) is split, and still stored whole.
    let many: Vec<RunRecord> = (0..2_500).map(|_| run(team, now(), None, RunStatus::Ok)).collect();
    history.record_runs(&many).await.unwrap();
    for record in [&many[0], &many[1_000], &many[2_499]] {
        assert_eq!(history.find_run(team, record.id).await.unwrap().as_ref(), Some(record));
    }
    let all = history.list_runs(team, &RunFilter { conversation: None, limit: 500 }).await.unwrap();
    assert_eq!(all.len(), 500, "the listing's limit, of 2,503 runs");
}
