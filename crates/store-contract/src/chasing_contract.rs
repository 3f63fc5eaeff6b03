//! The contract of sending and chasing: every write records its events in its own
//! transaction; the job queue leases each job to one claimer, fences finishes, takes over
//! what a dead claimer left and keeps a thread's order; messages, reminders, the overdue
//! pass and webhook deliveries keep their promises, once each, whatever races.

use std::sync::Arc;

use accounts::{Role, TeamId, UserId};
use billing::ledger::{EntryAmount, EntryKind};
use billing::store::BillTo;
use billing::{Client, Invoice, InvoiceStatus};
use chrono::{DateTime, TimeDelta, Utc};
use kernel::Replaced;
use kernel::{Email, Id, uuid::Uuid};
use notify::jobs::Claim;
use notify::mail::{QueueMessageError, Recipients, RetryMessageError};
use notify::reminders::{ComposeReminder, ReminderStep};
use notify::webhooks::{AttemptReport, DeliveryFilter, RedeliverError};
use notify::{
    Attachment, ClaimedJob, DeliveryStatus, EventFilter, EventType, Finish, JobFilter, JobKind, JobState,
    MailSubject, Message, MessageFilter, MessageKind, MessageStatus, NewEvent, NewMessage, NotifyStore,
    ReminderPolicy, SigningSecret, WebhookEndpoint, WebhookEndpointId, WebhookUrl,
};
use tracking::{RunningTimer, TimeEntry};

use crate::invoices::entry;
use crate::invoices::{Fixture, at, client_details, fixture};
use crate::{Ports, create_team, create_user};

/// The team's events, oldest first: (type, subject).
async fn events(notify: &Arc<dyn NotifyStore>, team: TeamId) -> Vec<(EventType, Uuid)> {
    let mut events = notify.list_events(team, 1000).await.unwrap();
    events.reverse();
    events.into_iter().map(|e| (e.kind, e.subject)).collect()
}

/// Claims every job due at `due` of `kinds`, leased for `lease` from `now`.
async fn claim(
    notify: &Arc<dyn NotifyStore>,
    kinds: &[JobKind],
    due: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Vec<ClaimedJob> {
    notify
        .claim_jobs(&Claim {
            kinds: kinds.to_vec(),
            due,
            now,
            lease_until: now + TimeDelta::seconds(30),
            limit: 100,
        })
        .await
        .unwrap()
}

fn email(text: &str) -> Email {
    Email::parse(text).unwrap()
}

/// A message of `kind` about `invoice`, with one attachment.
fn message(invoice: &Invoice, kind: MessageKind, queued_at: DateTime<Utc>) -> NewMessage {
    let attachment = Attachment {
        filename: format!("{}.pdf", invoice.number),
        content_type: billing::issue::MediaType::Pdf.as_str().into(),
        bytes: b"%PDF-1.7 not really".to_vec(),
    };
    let message = Message::queued(
        invoice.team_id,
        notify::mail::Concerning::Invoice(invoice.id),
        kind,
        Recipients::new(vec![email("zoe@example.com")], vec![email("books@example.com")]).unwrap(),
        MailSubject::parse(format!("Rechnung {} für Zoë", invoice.number)).unwrap(),
        notify::MailBody::parse("Bitte zahlen.").unwrap(),
        std::slice::from_ref(&attachment),
        &email("billing@acme.example"),
        queued_at,
    );
    NewMessage { message, attachments: vec![attachment] }
}

fn policy(enabled: bool, steps: &[i32]) -> ReminderPolicy {
    let (subject, body) = MessageKind::Reminder.default_templates(locale::Language::English);
    ReminderPolicy::new(enabled, steps, subject, body).unwrap()
}

/// Words reminders as the REST adapter does, without links.
struct Reminders;

impl ComposeReminder for Reminders {
    fn compose(
        &self,
        policy: &ReminderPolicy,
        invoice: &Invoice,
        client: &Client,
        team_language: locale::Language,
        step: ReminderStep,
        now: DateTime<Utc>,
    ) -> Option<NewMessage> {
        let from = email("billing@acme.example");
        notify::reminders::reminder_message(
            policy,
            invoice,
            client,
            team_language,
            Some(step),
            &from,
            notify::mail::DocumentLinks {
                pdf: "https://x.example/pdf".into(),
                page: "https://x.example/invoices/x".into(),
            },
            now,
        )
    }
}

/// An endpoint of `team` taking `patterns`, made by a user the store does not know: the
/// team's data goes to it (to fail saying why), no one's time does.
fn endpoint(team: TeamId, patterns: &[&str], created_at: DateTime<Utc>) -> WebhookEndpoint {
    WebhookEndpoint {
        id: WebhookEndpointId::generate(),
        team_id: team,
        url: WebhookUrl::parse("https://hooks.example.com/billable").unwrap(),
        events: EventFilter::parse(patterns).unwrap(),
        description: notify::webhooks::EndpointDescription::parse("books").unwrap(),
        created_by: UserId::generate(),
        secret: SigningSecret::generate(),
        previous_secret: None,
        disabled: None,
        created_at,
        updated_at: created_at,
    }
}

pub async fn every_write_records_its_events_in_order(store: Ports) {
    let f = fixture(store).await;
    let notify = f.store.notify();
    let before = events(&notify, f.team).await.len();
    let invoice = f.invoice("2026-11-20").await;
    let paid = f
        .billing
        .record_entry(f.team, invoice.id, entry(EntryKind::Payment, EntryAmount::AllDue, "2026-11-21"))
        .await
        .unwrap()
        .0;
    let refund = f
        .billing
        .record_entry(
            f.team,
            invoice.id,
            entry(EntryKind::Refund, EntryAmount::Exactly(billing::money::Decimal::ONE), "2026-11-22"),
        )
        .await
        .unwrap()
        .0;
    f.billing.void_entry(f.team, refund.id, None, at("2026-11-23T10:00:00Z")).await.unwrap();
    let inline = Client::new(f.team, client_details("Ann", "ann@example.com"), at("2026-11-24"));
    let second = f
        .billing
        .create_invoice(f.draft(
            BillTo::Inline { email: email("ann@example.com"), new_client: Box::new(inline.clone()) },
            "2026-11-24",
            &[("Work", "10", "1")],
        ))
        .await
        .unwrap();
    f.billing.delete_invoice(f.team, second.id, at("2026-11-25T00:00:00Z")).await.unwrap();
    let got = events(&notify, f.team).await[before..].to_vec();
    assert_eq!(
        got,
        [
            (EventType::InvoiceCreated, invoice.id.as_uuid()),
            (EventType::PaymentCreated, paid.id.as_uuid()),
            (EventType::InvoicePaid, invoice.id.as_uuid()),
            (EventType::PaymentRefunded, refund.id.as_uuid()),
            (EventType::PaymentVoided, refund.id.as_uuid()),
            (EventType::ClientCreated, inline.id.as_uuid()),
            (EventType::InvoiceCreated, second.id.as_uuid()),
            (EventType::InvoiceDeleted, second.id.as_uuid()),
        ]
    );
    // Their threads: an invoice's own, its payments', the client's.
    let listed = notify.list_events(f.team, 1000).await.unwrap();
    let thread_of = |subject: Uuid| listed.iter().find(|e| e.subject == subject).unwrap().thread.clone();
    assert_eq!(thread_of(paid.id.as_uuid()), format!("invoice:{}", invoice.id));
    assert_eq!(thread_of(inline.id.as_uuid()), format!("client:{}", inline.id));
    // A store given no wording of its own describes a resource by its id.
    let data: serde_json::Value = serde_json::from_str(&listed[0].data).unwrap();
    assert_eq!(data["id"], listed[0].subject.to_string());
    assert!(listed.iter().all(|e| !e.dispatched));
}

pub async fn tracking_writes_record_their_events(store: Ports) {
    let team = create_team(&store, "Acme").await;
    let user = create_user(&store, team, Role::Member).await;
    let notify = store.notify();
    let track = store.track();
    let t = crate::tracking_contract::Fixture { store: store.clone(), track: track.clone(), team, user };
    let entry = t.logged(t.entry("2026-11-20T09:00:00Z", &[])).await;
    let changed =
        tracking::TimeEntry { billable: false, updated_at: at("2026-11-20T13:00:00Z"), ..entry.clone() };
    track.replace_entry(&changed).await.unwrap();
    track.delete_entry(team, entry.id, at("2026-11-20T14:00:00Z")).await.unwrap();
    let timer = RunningTimer {
        id: tracking::TimerId::generate(),
        team_id: team,
        user_id: user,
        task_name: tracking::TaskName::parse("Review").unwrap(),
        description: None,
        project_id: None,
        section_id: None,
        tags: Vec::new(),
        started_at: at("2026-11-20T15:00:00Z"),
    };
    track.start_timer(&timer).await.unwrap();
    let logged = timer.clone().into_entry(tracking::TimeEntryId::generate(), at("2026-11-20T16:00:00Z"));
    track.stop_timer(&timer, &logged).await.unwrap();
    let other = RunningTimer { id: tracking::TimerId::generate(), ..timer.clone() };
    track.start_timer(&other).await.unwrap();
    track.discard_timer(&other, at("2026-11-20T17:00:00Z")).await.unwrap();
    assert_eq!(
        events(&notify, team).await,
        [
            (EventType::TimeEntryCreated, entry.id.as_uuid()),
            (EventType::TimeEntryUpdated, entry.id.as_uuid()),
            (EventType::TimeEntryDeleted, entry.id.as_uuid()),
            (EventType::TimerStarted, timer.id.as_uuid()),
            (EventType::TimerStopped, timer.id.as_uuid()),
            (EventType::TimeEntryCreated, logged.id.as_uuid()),
            (EventType::TimerStarted, other.id.as_uuid()),
            (EventType::TimerStopped, other.id.as_uuid()),
        ]
    );
}

pub async fn refused_writes_and_previews_record_nothing(store: Ports) {
    let f = fixture(store).await;
    let notify = f.store.notify();
    let invoice = f.invoice("2026-11-20").await;
    let before = events(&notify, f.team).await;
    let too_much = entry(
        EntryKind::Payment,
        EntryAmount::Exactly(billing::money::Decimal::from(1_000_000)),
        "2026-11-21",
    );
    assert!(f.billing.record_entry(f.team, invoice.id, too_much).await.is_err());
    let preview = f.draft(BillTo::Existing(f.client), "2026-11-21", &[("Work", "1", "1")]);
    f.billing.preview_invoice(preview).await.unwrap();
    let unknown = billing::ClientId::generate();
    assert!(
        f.billing
            .create_invoice(f.draft(BillTo::Existing(unknown), "2026-11-21", &[("Work", "1", "1")]))
            .await
            .is_err()
    );
    assert!(
        f.billing.delete(f.team, f.client, at("2026-11-21T00:00:00Z")).await.is_err(),
        "the client has invoices"
    );
    assert_eq!(events(&notify, f.team).await, before);
}

pub async fn dispatch_hands_each_event_once_to_matching_endpoints_and_the_agent(store: Ports) {
    let f = fixture(store).await;
    let notify = f.store.notify();
    let now = at("2026-11-20T10:00:00Z");
    // The fixture's own events (its client) go to nobody.
    notify.dispatch_events(100, now).await.unwrap();
    let payments = endpoint(f.team, &["payment.*", "invoice.paid"], now);
    let everything = endpoint(f.team, &["*"], now);
    let mut off = endpoint(f.team, &["*"], now);
    off.disabled = Some(notify::webhooks::Disabled { at: now, reason: "gone".into() });
    for e in [&payments, &everything, &off] {
        assert!(notify.create_endpoint(e).await.unwrap());
    }
    notify.subscribe_agent(f.team, Some(&EventFilter::parse(&["invoice.*"]).unwrap())).await.unwrap();
    let invoice = f.invoice("2026-11-20").await;
    f.billing
        .record_entry(f.team, invoice.id, entry(EntryKind::Payment, EntryAmount::AllDue, "2026-11-21"))
        .await
        .unwrap();
    // invoice.created, payment.created, invoice.paid.
    let (a, b) = tokio::join!(notify.dispatch_events(100, now), notify.dispatch_events(100, now));
    assert_eq!(a.unwrap() + b.unwrap(), 3, "each event handed out once");
    assert_eq!(notify.dispatch_events(100, now).await.unwrap(), 0);
    let deliveries = |endpoint: WebhookEndpointId| {
        let notify = notify.clone();
        let team = f.team;
        async move {
            let filter = DeliveryFilter { status: None, before: None, limit: 100 };
            let mut types: Vec<EventType> = notify
                .list_deliveries(team, endpoint, &filter)
                .await
                .unwrap()
                .iter()
                .map(|d| d.event_type)
                .collect();
            types.sort();
            types
        }
    };
    assert_eq!(deliveries(payments.id).await, [EventType::InvoicePaid, EventType::PaymentCreated]);
    assert_eq!(
        deliveries(everything.id).await,
        [EventType::InvoiceCreated, EventType::InvoicePaid, EventType::PaymentCreated]
    );
    assert!(deliveries(off.id).await.is_empty(), "a disabled endpoint gets nothing");
    let jobs = notify
        .list_jobs(&JobFilter { team: Some(f.team), state: None, kind: None, limit: 100 })
        .await
        .unwrap();
    let count = |kind| jobs.iter().filter(|j| j.kind == kind).count();
    assert_eq!(count(JobKind::Webhook), 5);
    assert_eq!(count(JobKind::Agent), 2, "invoice.created and invoice.paid wake the agent");
    assert!(
        jobs.iter()
            .filter(|j| j.kind == JobKind::Agent)
            .all(|j| j.thread == Some(format!("invoice:{}", invoice.id)))
    );
    assert!(notify.list_events(f.team, 10).await.unwrap().iter().all(|e| e.dispatched));
}

/// An endpoint gets what its maker may read, as the team has the maker: an owner's the
/// team's time, a member's their own, one whose maker is not in the team no one's (and the
/// team's data fails to deliver, saying why). Each personal event keeps whose it is.
pub async fn endpoints_get_only_what_their_maker_may_read(store: Ports) {
    let f = fixture(store).await;
    let notify = f.store.notify();
    let now = at("2026-11-20T10:00:00Z");
    notify.dispatch_events(100, now).await.unwrap();
    let owner = create_user(&f.store, f.team, Role::Owner).await;
    let member = create_user(&f.store, f.team, Role::Member).await;
    let colleague = create_user(&f.store, f.team, Role::Member).await;
    let made_by = |maker| WebhookEndpoint {
        created_by: maker,
        ..endpoint(f.team, &["time_entry.*", "invoice.created"], now)
    };
    let (by_owner, by_member, by_stranger) = (made_by(owner), made_by(member), made_by(UserId::generate()));
    for made in [&by_owner, &by_member, &by_stranger] {
        assert!(notify.create_endpoint(made).await.unwrap());
        assert_eq!(
            notify.get_endpoint(f.team, made.id).await.unwrap().map(|e| e.created_by),
            Some(made.created_by)
        );
    }
    let time = crate::tracking_contract::Fixture {
        store: f.store.clone(),
        track: f.store.track(),
        team: f.team,
        user: member,
    };
    let mine = time.logged(time.entry("2026-11-19T09:00:00Z", &[])).await;
    let theirs =
        time.logged(TimeEntry { user_id: colleague, ..time.entry("2026-11-19T10:00:00Z", &[]) }).await;
    f.invoice("2026-11-20").await;
    let recorded = notify.list_events(f.team, 3).await.unwrap();
    let owners: Vec<(EventType, Option<UserId>)> = recorded.iter().rev().map(|e| (e.kind, e.owner)).collect();
    assert_eq!(
        owners,
        [
            (EventType::TimeEntryCreated, Some(member)),
            (EventType::TimeEntryCreated, Some(colleague)),
            (EventType::InvoiceCreated, None)
        ]
    );
    notify.dispatch_events(100, now).await.unwrap();
    let filter = DeliveryFilter { status: None, before: None, limit: 100 };
    let got = async |endpoint: &WebhookEndpoint| {
        let deliveries = notify.list_deliveries(f.team, endpoint.id, &filter).await.unwrap();
        let mut events: Vec<notify::EventId> = deliveries.iter().map(|d| d.event_id).collect();
        events.sort();
        events
    };
    let id_of = |entry: &TimeEntry| recorded.iter().find(|e| e.subject == entry.id.as_uuid()).unwrap().id;
    let invoice_event = recorded[0].id;
    let sorted = |mut ids: Vec<notify::EventId>| {
        ids.sort();
        ids
    };
    assert_eq!(got(&by_owner).await, sorted(vec![id_of(&mine), id_of(&theirs), invoice_event]));
    assert_eq!(got(&by_member).await, sorted(vec![id_of(&mine), invoice_event]), "a member's own time only");
    assert_eq!(got(&by_stranger).await, [invoice_event], "no one's time once the maker is gone");
    // Each delivery carries its maker as the team has them, and what that makes of it.
    for job in claim(&notify, &[JobKind::Webhook], now, now).await {
        let outgoing = notify.start_delivery(&job).await.unwrap().unwrap();
        let maker = outgoing.endpoint.created_by;
        let expected_reader = [(owner, Role::Owner), (member, Role::Member)]
            .into_iter()
            .find(|(user, _)| *user == maker)
            .map(|(user_id, role)| tracking::Actor { user_id, role });
        assert_eq!(outgoing.reader, expected_reader);
        let refusal = outgoing.refusal();
        if maker == by_stranger.created_by {
            assert_eq!(refusal.as_deref(), Some("the user who made the endpoint is no longer in the team"));
        } else {
            assert_eq!(refusal, None);
        }
    }
}

pub async fn jobs_are_claimed_once_leased_fenced_and_taken_over(store: Ports) {
    let f = fixture(store).await;
    let notify = f.store.notify();
    let now = at("2026-11-20T10:00:00Z");
    let invoice = f.invoice("2026-11-20").await;
    let queued = notify.queue_message(&message(&invoice, MessageKind::Invoice, now)).await.unwrap();
    assert!(
        claim(&notify, &[JobKind::Mail], now - TimeDelta::seconds(1), now).await.is_empty(),
        "not due yet"
    );
    assert!(claim(&notify, &[JobKind::Webhook], now, now).await.is_empty(), "only the kinds asked for");
    let (a, b) =
        tokio::join!(claim(&notify, &[JobKind::Mail], now, now), claim(&notify, &[JobKind::Mail], now, now));
    let mut claimed: Vec<ClaimedJob> = a.into_iter().chain(b).collect();
    assert_eq!(claimed.len(), 1, "one claimer gets it");
    let first = claimed.pop().unwrap();
    assert_eq!((first.subject, first.attempt), (queued.id.as_uuid(), 1));
    assert!(notify.renew_job(&first, now + TimeDelta::seconds(60)).await.unwrap());
    assert!(claim(&notify, &[JobKind::Mail], now, now + TimeDelta::seconds(59)).await.is_empty(), "leased");
    // Its lease ends: another process takes it over, and the first can no longer finish it.
    let taken = claim(&notify, &[JobKind::Mail], now, now + TimeDelta::seconds(61)).await;
    assert_eq!(taken.len(), 1);
    assert_eq!(taken[0].attempt, 2);
    assert!(!notify.renew_job(&first, now + TimeDelta::seconds(120)).await.unwrap());
    assert!(!notify.finish_job(&first, &Finish::Done, now).await.unwrap());
    let retry = Finish::Retry { at: now + TimeDelta::seconds(300), error: "451 busy".into() };
    assert!(notify.finish_job(&taken[0], &retry, now).await.unwrap());
    assert!(claim(&notify, &[JobKind::Mail], now + TimeDelta::seconds(299), now).await.is_empty());
    let again = claim(&notify, &[JobKind::Mail], now + TimeDelta::seconds(300), now).await;
    assert_eq!(again[0].attempt, 3);
    assert!(notify.finish_job(&again[0], &Finish::Failed { error: "550 no".into() }, now).await.unwrap());
    let jobs = notify
        .list_jobs(&JobFilter { team: Some(f.team), state: Some(JobState::Failed), kind: None, limit: 10 })
        .await
        .unwrap();
    assert_eq!(jobs.len(), 1);
    assert_eq!((jobs[0].attempts, jobs[0].last_error.as_deref()), (3, Some("550 no")));
    assert!(jobs[0].finished_at.is_some());
    // Finished jobs are pruned once old enough.
    assert!(notify.prune_jobs(now + TimeDelta::days(1)).await.unwrap() >= 1);
    assert!(
        notify
            .list_jobs(&JobFilter { team: Some(f.team), state: None, kind: None, limit: 10 })
            .await
            .unwrap()
            .is_empty()
    );
}

pub async fn jobs_of_one_thread_run_in_order(store: Ports) {
    let f = fixture(store).await;
    let notify = f.store.notify();
    let now = at("2026-11-20T10:00:00Z");
    notify.dispatch_events(100, now).await.unwrap();
    notify.subscribe_agent(f.team, Some(&EventFilter::everything())).await.unwrap();
    let one = f.invoice("2026-11-20").await;
    let two = f.invoice("2026-11-20").await;
    let (payment, _) = f
        .billing
        .record_entry(f.team, one.id, entry(EntryKind::Payment, EntryAmount::AllDue, "2026-11-21"))
        .await
        .unwrap();
    notify.dispatch_events(100, now).await.unwrap();
    // Each invoice's first event runs; its later ones wait for it.
    let heads = claim(&notify, &[JobKind::Agent], now, now).await;
    let subjects: Vec<Uuid> = heads.iter().map(|j| j.subject).collect();
    let listed = notify.list_events(f.team, 100).await.unwrap();
    let event_of = |kind: EventType, subject: Uuid| {
        listed.iter().find(|e| e.kind == kind && e.subject == subject).unwrap().id.as_uuid()
    };
    assert_eq!(heads.len(), 2, "{subjects:?}");
    assert!(subjects.contains(&event_of(EventType::InvoiceCreated, one.id.as_uuid())));
    assert!(subjects.contains(&event_of(EventType::InvoiceCreated, two.id.as_uuid())));
    assert!(claim(&notify, &[JobKind::Agent], now, now).await.is_empty(), "the rest wait for their heads");
    // A retry keeps its place: the next of its thread still waits.
    let first =
        heads.iter().find(|j| j.subject == event_of(EventType::InvoiceCreated, one.id.as_uuid())).unwrap();
    notify.finish_job(first, &Finish::Retry { at: now, error: "model down".into() }, now).await.unwrap();
    let retried = claim(&notify, &[JobKind::Agent], now, now).await;
    assert_eq!(retried.iter().map(|j| j.subject).collect::<Vec<_>>(), [first.subject]);
    notify.finish_job(&retried[0], &Finish::Done, now).await.unwrap();
    let next: Vec<Uuid> =
        claim(&notify, &[JobKind::Agent], now, now).await.iter().map(|j| j.subject).collect();
    assert_eq!(next, [event_of(EventType::PaymentCreated, payment.id.as_uuid())]);
}

pub async fn messages_are_queued_sent_failed_and_retried(store: Ports) {
    let f = fixture(store).await;
    let notify = f.store.notify();
    let now = at("2026-11-20T10:00:00Z");
    let invoice = f.invoice("2026-11-20").await;
    let other = create_team(&f.store, "Other").await;
    let mut stranger = message(&invoice, MessageKind::Invoice, now);
    stranger.message.team_id = other;
    assert!(matches!(notify.queue_message(&stranger).await, Err(QueueMessageError::NotFound)));
    let queued = notify.queue_message(&message(&invoice, MessageKind::Invoice, now)).await.unwrap();
    assert_eq!((queued.status, queued.attempts), (MessageStatus::Queued, 0));
    assert_eq!(queued.attachments[0].size, 19);
    let job = claim(&notify, &[JobKind::Mail], now, now).await.pop().unwrap();
    let outgoing = notify.start_sending(&job).await.unwrap().unwrap();
    assert_eq!(outgoing.attachments[0].bytes, b"%PDF-1.7 not really");
    assert_eq!(outgoing.message.status, MessageStatus::Sending);
    assert!(notify.finish_sending(&job, &Finish::Done, now + TimeDelta::seconds(1)).await.unwrap());
    let sent = notify.get_message(f.team, queued.id).await.unwrap().unwrap();
    assert_eq!(
        (sent.status, sent.attempts, sent.sent_at),
        (MessageStatus::Sent, 1, Some(now + TimeDelta::seconds(1)))
    );
    assert_eq!(sent.message_id, queued.message_id);
    let stored = f.billing.get_invoice(f.team, invoice.id).await.unwrap().unwrap();
    assert_eq!(stored.chasing.sent_at, Some(now + TimeDelta::seconds(1)));
    assert!(events(&notify, f.team).await.contains(&(EventType::InvoiceSent, invoice.id.as_uuid())));
    assert!(matches!(
        notify.retry_message(f.team, queued.id, now).await,
        Err(RetryMessageError::NotFailed(MessageStatus::Sent))
    ));

    // A reminder that fails for good, then is tried again.
    let reminder = notify.queue_message(&message(&invoice, MessageKind::Reminder, now)).await.unwrap();
    let job = claim(&notify, &[JobKind::Mail], now, now).await.pop().unwrap();
    notify.start_sending(&job).await.unwrap().unwrap();
    notify
        .finish_sending(&job, &Finish::Failed { error: "550 5.1.1 no such mailbox".into() }, now)
        .await
        .unwrap();
    let failed = notify.get_message(f.team, reminder.id).await.unwrap().unwrap();
    assert_eq!(
        (failed.status, failed.last_error.as_deref()),
        (MessageStatus::Failed, Some("550 5.1.1 no such mailbox"))
    );
    assert!(events(&notify, f.team).await.contains(&(EventType::MessageFailed, reminder.id.as_uuid())));
    let retried = notify.retry_message(f.team, reminder.id, now).await.unwrap();
    assert_eq!(retried.status, MessageStatus::Queued);
    let job = claim(&notify, &[JobKind::Mail], now, now).await.pop().unwrap();
    assert_eq!(job.attempt, 1, "a new job");
    notify.start_sending(&job).await.unwrap().unwrap();
    notify.finish_sending(&job, &Finish::Done, now).await.unwrap();
    let stored = f.billing.get_invoice(f.team, invoice.id).await.unwrap().unwrap();
    assert_eq!(stored.chasing.reminders_sent, 1);
    let again = notify.get_message(f.team, reminder.id).await.unwrap().unwrap();
    assert_eq!(
        (again.status, again.attempts, again.message_id),
        (MessageStatus::Sent, 2, reminder.message_id)
    );

    let filter =
        |status| MessageFilter { invoice: Some(invoice.id), quote: None, status, before: None, limit: 10 };
    let listed = notify.list_messages(f.team, &filter(None)).await.unwrap();
    assert_eq!(listed.iter().map(|m| m.id).collect::<Vec<_>>(), [reminder.id, queued.id], "newest first");
    assert_eq!(notify.list_messages(other, &filter(None)).await.unwrap(), []);
    assert!(notify.get_message(other, queued.id).await.unwrap().is_none());
    let page = MessageFilter { before: Some(reminder.id), ..filter(Some(MessageStatus::Sent)) };
    assert_eq!(
        notify.list_messages(f.team, &page).await.unwrap().iter().map(|m| m.id).collect::<Vec<_>>(),
        [queued.id]
    );
}

/// The fixture's invoice due on 2026-12-10 (its issue date + 30 days).
async fn due_invoice(f: &Fixture) -> Invoice {
    let invoice = f.invoice("2026-11-10").await;
    assert_eq!(invoice.due_date, Some(at("2026-12-10")));
    invoice
}

pub async fn reminders_follow_the_policy_once_per_step(store: Ports) {
    let f = fixture(store).await;
    let notify = f.store.notify();
    let invoice = due_invoice(&f).await;
    let next = |f: &Fixture| {
        let billing = f.billing.clone();
        let (team, id) = (f.team, invoice.id);
        async move { billing.get_invoice(team, id).await.unwrap().unwrap().chasing.next_reminder_at }
    };
    assert_eq!(next(&f).await, None, "no policy, no reminder");
    notify.set_reminder_policy(f.team, &policy(true, &[-3, 0, 7]), at("2026-11-20")).await.unwrap();
    assert_eq!(notify.reminder_policy(f.team).await.unwrap(), policy(true, &[-3, 0, 7]));
    assert_eq!(next(&f).await, None, "never sent: nobody is reminded of it");
    let marked = notify.mark_sent(f.team, invoice.id, at("2026-11-21")).await.unwrap().unwrap();
    assert_eq!(marked.chasing.next_reminder_at, Some(at("2026-12-07")));
    assert_eq!(next(&f).await, Some(at("2026-12-07")));
    // A new invoice gets its schedule once it is sent.
    let later = f.invoice("2026-11-15").await;
    assert_eq!(later.chasing.next_reminder_at, None);
    notify.mark_sent(f.team, later.id, at("2026-11-21")).await.unwrap().unwrap();
    assert_eq!(
        f.billing.get_invoice(f.team, later.id).await.unwrap().unwrap().chasing.next_reminder_at,
        Some(at("2026-12-12"))
    );

    assert_eq!(notify.queue_due_reminders(at("2026-12-06T23:59:59Z"), &Reminders, 100).await.unwrap(), 0);
    assert_eq!(notify.queue_due_reminders(at("2026-12-07"), &Reminders, 100).await.unwrap(), 1);
    assert_eq!(next(&f).await, Some(at("2026-12-10")));
    assert_eq!(notify.queue_due_reminders(at("2026-12-07"), &Reminders, 100).await.unwrap(), 0, "once");
    // After a pause, the latest step that came is sent, the one before it passed over.
    assert_eq!(
        notify.queue_due_reminders(at("2026-12-20"), &Reminders, 100).await.unwrap(),
        2,
        "both invoices"
    );
    let messages = notify
        .list_messages(
            f.team,
            &MessageFilter { invoice: Some(invoice.id), quote: None, status: None, before: None, limit: 10 },
        )
        .await
        .unwrap();
    assert_eq!(messages.iter().map(|m| m.reminder_step).collect::<Vec<_>>(), [Some(7), Some(-3)]);
    assert!(
        messages
            .iter()
            .all(|m| m.kind == MessageKind::Reminder && m.recipients.to()[0].as_str() == "zoe@example.com")
    );
    assert!(messages[0].subject.as_str().contains(&invoice.number.to_string()), "{:?}", messages[0].subject);
    assert_eq!(next(&f).await, None, "no step left");

    // Paid: nothing more; a client who takes none gets none.
    f.billing
        .record_entry(f.team, later.id, entry(EntryKind::Payment, EntryAmount::AllDue, "2026-12-21"))
        .await
        .unwrap();
    let paid = f.billing.get_invoice(f.team, later.id).await.unwrap().unwrap();
    assert_eq!(paid.chasing.next_reminder_at, None);
    let third = f.invoice("2026-11-16").await;
    let third = notify.mark_sent(f.team, third.id, at("2026-11-21")).await.unwrap().unwrap();
    assert!(third.chasing.next_reminder_at.is_some());
    let mut details = client_details("Zoë Łukasiewicz — Ёлка ΑΒΓ", "zoe@example.com");
    details.reminders_enabled = false;
    f.billing.replace(f.team, f.client, &details, at("2026-11-30")).await.unwrap();
    assert_eq!(
        f.billing.get_invoice(f.team, third.id).await.unwrap().unwrap().chasing.next_reminder_at,
        None
    );
    assert_eq!(notify.queue_due_reminders(at("2027-01-31"), &Reminders, 100).await.unwrap(), 0);
    details.reminders_enabled = true;
    f.billing.replace(f.team, f.client, &details, at("2026-12-01")).await.unwrap();
    assert!(
        f.billing.get_invoice(f.team, third.id).await.unwrap().unwrap().chasing.next_reminder_at.is_some()
    );
    // Turning the policy off stops every schedule.
    notify.set_reminder_policy(f.team, &policy(false, &[0]), at("2026-12-01")).await.unwrap();
    assert_eq!(
        f.billing.get_invoice(f.team, third.id).await.unwrap().unwrap().chasing.next_reminder_at,
        None
    );
}

/// A reminder on the default wording speaks its client's language, and a client without one
/// reads the team's: the language of the invoice's sender.
pub async fn a_reminder_speaks_the_clients_language_or_else_the_teams(store: Ports) {
    let f = fixture(store).await;
    let notify = f.store.notify();
    let invoice = due_invoice(&f).await;
    let sender = f.billing.get_sender(f.team, invoice.sender_id).await.unwrap().unwrap();
    let mut details = sender.details.clone();
    details.language = locale::Language::German;
    f.billing.update_sender(f.team, sender.id, &details, at("2026-11-20")).await.unwrap().unwrap();
    notify.set_reminder_policy(f.team, &policy(true, &[0, 7]), at("2026-11-20")).await.unwrap();
    notify.mark_sent(f.team, invoice.id, at("2026-11-21")).await.unwrap().unwrap();
    let reminded = async |day: &str| {
        assert_eq!(notify.queue_due_reminders(at(day), &Reminders, 100).await.unwrap(), 1);
        let filter =
            MessageFilter { invoice: Some(invoice.id), quote: None, status: None, before: None, limit: 1 };
        notify.list_messages(f.team, &filter).await.unwrap().remove(0).subject.as_str().to_owned()
    };
    let subject_in = |language| {
        let (subject, _) = MessageKind::Reminder.default_templates(language);
        subject.as_str().split('{').next().unwrap().to_owned()
    };
    let german = reminded("2026-12-10").await;
    assert!(german.starts_with(&subject_in(locale::Language::German)), "{german:?}");
    assert_ne!(subject_in(locale::Language::German), subject_in(locale::Language::English));
    let mut client = client_details("Zoë Łukasiewicz — Ёлка ΑΒΓ", "zoe@example.com");
    client.language = Some(locale::Language::French);
    f.billing.replace(f.team, f.client, &client, at("2026-12-11")).await.unwrap();
    let french = reminded("2026-12-17").await;
    assert!(french.starts_with(&subject_in(locale::Language::French)), "{french:?}");
}

/// Marking an invoice sent sets `sent_at` once, raises `invoice.sent` once, and schedules
/// its reminders; another team's or an unknown invoice is none.
pub async fn marking_an_invoice_sent_happens_once(store: Ports) {
    let f = fixture(store).await;
    let notify = f.store.notify();
    notify.set_reminder_policy(f.team, &policy(true, &[0]), at("2026-11-20")).await.unwrap();
    let invoice = due_invoice(&f).await;
    let before = events(&notify, f.team).await.len();
    let marked = notify.mark_sent(f.team, invoice.id, at("2026-11-21")).await.unwrap().unwrap();
    assert_eq!(marked.chasing.sent_at, Some(at("2026-11-21")));
    assert_eq!(marked.chasing.next_reminder_at, Some(at("2026-12-10")));
    let again = notify.mark_sent(f.team, invoice.id, at("2026-11-22")).await.unwrap().unwrap();
    assert_eq!(again.chasing.sent_at, Some(at("2026-11-21")), "the first time stays");
    let raised = events(&notify, f.team).await;
    assert_eq!(raised[before..], [(EventType::InvoiceSent, invoice.id.as_uuid())]);
    let other = create_team(&f.store, "Other").await;
    assert_eq!(notify.mark_sent(other, invoice.id, at("2026-11-21")).await.unwrap(), None);
    assert_eq!(
        notify.mark_sent(f.team, billing::InvoiceId::generate(), at("2026-11-21")).await.unwrap(),
        None
    );
    assert_eq!(f.billing.get_invoice(f.team, invoice.id).await.unwrap().unwrap().chasing, marked.chasing);
}

/// What is due is counted without doing any of it.
pub async fn due_work_counts_what_a_pass_would_find(store: Ports) {
    let f = fixture(store).await;
    let notify = f.store.notify();
    let now = at("2026-12-20T10:00:00Z");
    notify.dispatch_events(100, now).await.unwrap();
    assert!(notify.create_endpoint(&endpoint(f.team, &["invoice.*"], now)).await.unwrap());
    notify.set_reminder_policy(f.team, &policy(true, &[0]), at("2026-11-20")).await.unwrap();
    let invoice = due_invoice(&f).await;
    notify.mark_sent(f.team, invoice.id, at("2026-11-21")).await.unwrap().unwrap();
    notify.queue_message(&message(&invoice, MessageKind::Invoice, now)).await.unwrap();
    let due = notify.due_work(now).await.unwrap();
    let expected = notify::DueWork { overdue: 1, reminders: 1, events: 2, mail: 1, webhooks: 0, agent: 0 };
    assert_eq!(due, expected, "invoice.created and invoice.sent wait");
    let earlier = notify.due_work(at("2026-12-09")).await.unwrap();
    assert_eq!(earlier, notify::DueWork { overdue: 0, reminders: 0, mail: 0, ..expected }, "not due yet");
    assert_eq!(notify.due_work(now).await.unwrap(), due, "counting changes nothing");
    notify.dispatch_events(100, now).await.unwrap();
    let dispatched = notify.due_work(now).await.unwrap();
    assert_eq!((dispatched.events, dispatched.webhooks), (0, 2));
}

pub async fn concurrent_reminder_passes_send_each_step_once(store: Ports) {
    let f = fixture(store).await;
    let notify = f.store.notify();
    notify.set_reminder_policy(f.team, &policy(true, &[0, 7]), at("2026-11-20")).await.unwrap();
    let mut invoices = Vec::new();
    for _ in 0..5 {
        let invoice = due_invoice(&f).await;
        notify.mark_sent(f.team, invoice.id, at("2026-11-21")).await.unwrap().unwrap();
        invoices.push(invoice);
    }
    for day in ["2026-12-10", "2026-12-17"] {
        let (a, b, c) = tokio::join!(
            notify.queue_due_reminders(at(day), &Reminders, 100),
            notify.queue_due_reminders(at(day), &Reminders, 100),
            notify.queue_due_reminders(at(day), &Reminders, 100)
        );
        assert_eq!(a.unwrap() + b.unwrap() + c.unwrap(), 5, "{day}: one reminder per invoice");
    }
    let all = notify
        .list_messages(
            f.team,
            &MessageFilter { invoice: None, quote: None, status: None, before: None, limit: 100 },
        )
        .await
        .unwrap();
    assert_eq!(all.len(), 10);
    for invoice in &invoices {
        let mut steps: Vec<Option<i32>> =
            all.iter().filter(|m| m.about.invoice() == Some(invoice.id)).map(|m| m.reminder_step).collect();
        steps.sort();
        assert_eq!(steps, [Some(0), Some(7)]);
    }
}

pub async fn overdue_is_announced_once_per_due_date(store: Ports) {
    let f = fixture(store).await;
    let notify = f.store.notify();
    let invoice = due_invoice(&f).await;
    let paid = due_invoice(&f).await;
    f.billing
        .record_entry(f.team, paid.id, entry(EntryKind::Payment, EntryAmount::AllDue, "2026-11-21"))
        .await
        .unwrap();
    let overdue = |events: &[(EventType, Uuid)]| {
        events.iter().filter(|(kind, _)| *kind == EventType::InvoiceOverdue).count()
    };
    assert_eq!(notify.mark_overdue(at("2026-12-10"), 100).await.unwrap(), 0, "due, not past due");
    let (a, b) =
        tokio::join!(notify.mark_overdue(at("2026-12-11"), 100), notify.mark_overdue(at("2026-12-11"), 100));
    assert_eq!(a.unwrap() + b.unwrap(), 1);
    assert_eq!(notify.mark_overdue(at("2026-12-20"), 100).await.unwrap(), 0, "once");
    let got = events(&notify, f.team).await;
    assert_eq!(overdue(&got), 1);
    assert!(got.contains(&(EventType::InvoiceOverdue, invoice.id.as_uuid())));
    // A new due date is announced again once it passes.
    let changed = Invoice {
        due_date: Some(at("2027-01-10")),
        updated_at: at("2026-12-21"),
        ..f.billing.get_invoice(f.team, invoice.id).await.unwrap().unwrap()
    };
    f.billing.replace_invoice(&changed, false, billing::store::StatusWrite::Keep).await.unwrap();
    assert_eq!(notify.mark_overdue(at("2026-12-31"), 100).await.unwrap(), 0);
    assert_eq!(notify.mark_overdue(at("2027-01-11"), 100).await.unwrap(), 1);
    assert_eq!(
        f.billing.get_invoice(f.team, invoice.id).await.unwrap().unwrap().status,
        InvoiceStatus::Pending
    );
}

/// `rotated` replaces `hook` as read; a write from what was read before (it would undo the
/// rotation) is refused, and another team has no such endpoint.
async fn replaces_only_what_was_read(
    notify: &Arc<dyn NotifyStore>,
    hook: &WebhookEndpoint,
    rotated: &WebhookEndpoint,
    other: TeamId,
) {
    assert_eq!(notify.replace_endpoint(rotated, hook.updated_at).await.unwrap(), Replaced::Written);
    let stale = WebhookEndpoint { disabled: None, ..hook.clone() };
    assert_eq!(notify.replace_endpoint(&stale, hook.updated_at).await.unwrap(), Replaced::Stale);
    let elsewhere = WebhookEndpoint { team_id: other, ..rotated.clone() };
    assert_eq!(notify.replace_endpoint(&elsewhere, rotated.updated_at).await.unwrap(), Replaced::Missing);
}

pub async fn webhook_endpoints_keep_their_deliveries(store: Ports) {
    let f = fixture(store).await;
    let notify = f.store.notify();
    let now = at("2026-11-20T10:00:00Z");
    notify.dispatch_events(100, now).await.unwrap();
    let hook = endpoint(f.team, &["invoice.*"], now);
    assert!(notify.create_endpoint(&hook).await.unwrap());
    assert_eq!(notify.get_endpoint(f.team, hook.id).await.unwrap().as_ref(), Some(&hook));
    let other = create_team(&f.store, "Other").await;
    assert_eq!(notify.get_endpoint(other, hook.id).await.unwrap(), None);
    assert!(notify.list_endpoints(other).await.unwrap().is_empty());
    let rotated = WebhookEndpoint {
        secret: SigningSecret::generate(),
        previous_secret: Some((hook.secret.clone(), now + TimeDelta::hours(24))),
        updated_at: now + TimeDelta::minutes(1),
        ..hook.clone()
    };
    replaces_only_what_was_read(&notify, &hook, &rotated, other).await;
    assert_eq!(notify.list_endpoints(f.team).await.unwrap(), std::slice::from_ref(&rotated));

    let test = NewEvent {
        id: notify::EventId::generate(),
        team_id: f.team,
        kind: EventType::WebhookTest,
        subject: hook.id.as_uuid(),
        thread: format!("webhook:{}", hook.id),
        data: "{}".into(),
        owner: None,
        occurred_at: now,
    };
    assert_eq!(notify.queue_test(other, hook.id, &test).await.unwrap(), None, "not the team's");
    let delivery = notify.queue_test(f.team, hook.id, &test).await.unwrap().unwrap();
    assert_eq!(notify.dispatch_events(100, now).await.unwrap(), 0, "a test is dispatched already");
    let job = claim(&notify, &[JobKind::Webhook], now, now).await.pop().unwrap();
    let outgoing = notify.start_delivery(&job).await.unwrap().unwrap();
    assert_eq!(
        (outgoing.delivery.id, outgoing.event.id, outgoing.endpoint.id),
        (delivery.id, test.id, hook.id)
    );
    let gone = AttemptReport { response_status: Some(410), duration_ms: 12, error: Some("410 Gone".into()) };
    assert!(
        notify
            .finish_delivery(
                &job,
                &gone,
                &Finish::Failed { error: "410 Gone".into() },
                Some("the receiver answered 410 Gone"),
                now
            )
            .await
            .unwrap()
    );
    let stored = notify.get_endpoint(f.team, hook.id).await.unwrap().unwrap();
    assert_eq!(stored.disabled.map(|d| d.reason), Some("the receiver answered 410 Gone".into()));
    let listed = notify
        .list_deliveries(f.team, hook.id, &DeliveryFilter { status: None, before: None, limit: 10 })
        .await
        .unwrap();
    assert_eq!(
        (listed[0].status, listed[0].attempts, listed[0].response_status),
        (DeliveryStatus::Failed, 1, Some(410))
    );
    assert!(matches!(
        notify.redeliver(f.team, hook.id, delivery.id, now).await,
        Err(RedeliverError::Disabled)
    ));
    // The disable changed the endpoint: a write from what was read before it is refused.
    assert_eq!(notify.replace_endpoint(&rotated, rotated.updated_at).await.unwrap(), Replaced::Stale);
    assert_eq!(notify.replace_endpoint(&rotated, stored.updated_at).await.unwrap(), Replaced::Written);
    let again = notify.redeliver(f.team, hook.id, delivery.id, now).await.unwrap();
    assert_eq!(again.status, DeliveryStatus::Pending);
    // A delivery still to be made keeps its event (and so itself), however old.
    notify.prune_jobs(now + TimeDelta::days(60)).await.unwrap();
    let pending = DeliveryFilter { status: Some(DeliveryStatus::Pending), before: None, limit: 10 };
    let kept = notify.list_deliveries(f.team, hook.id, &pending).await.unwrap();
    assert_eq!(kept.iter().map(|d| d.id).collect::<Vec<_>>(), [delivery.id]);
    assert!(matches!(
        notify.redeliver(f.team, hook.id, delivery.id, now).await,
        Err(RedeliverError::Pending)
    ));
    assert!(matches!(
        notify.redeliver(other, hook.id, delivery.id, now).await,
        Err(RedeliverError::NotFound)
    ));
    let job = claim(&notify, &[JobKind::Webhook], now, now).await.pop().unwrap();
    let report = AttemptReport { response_status: Some(204), duration_ms: 3, error: None };
    notify.finish_delivery(&job, &report, &Finish::Done, None, now).await.unwrap();
    let listed = notify
        .list_deliveries(
            f.team,
            hook.id,
            &DeliveryFilter { status: Some(DeliveryStatus::Succeeded), before: None, limit: 10 },
        )
        .await
        .unwrap();
    assert_eq!((listed[0].attempts, listed[0].event_id), (2, test.id), "the same webhook-id");
    assert!(!notify.delete_endpoint(other, hook.id).await.unwrap());
    assert!(notify.delete_endpoint(f.team, hook.id).await.unwrap());
    assert!(notify.list_endpoints(f.team).await.unwrap().is_empty());
}

pub async fn a_team_keeps_at_most_its_endpoints_under_concurrent_creates(store: Ports) {
    let f = fixture(store).await;
    let notify = f.store.notify();
    let now = at("2026-11-20T10:00:00Z");
    for _ in 1..notify::webhooks::MAX_ENDPOINTS {
        assert!(notify.create_endpoint(&endpoint(f.team, &["*"], now)).await.unwrap());
    }
    let (a, b, c) =
        (endpoint(f.team, &["*"], now), endpoint(f.team, &["*"], now), endpoint(f.team, &["*"], now));
    let (a, b, c) =
        tokio::join!(notify.create_endpoint(&a), notify.create_endpoint(&b), notify.create_endpoint(&c));
    let created = [a.unwrap(), b.unwrap(), c.unwrap()].into_iter().filter(|created| *created).count();
    assert_eq!(created, 1, "one more fits");
    assert_eq!(notify.list_endpoints(f.team).await.unwrap().len(), notify::webhooks::MAX_ENDPOINTS);
    let other = create_team(&f.store, "Other").await;
    assert!(notify.create_endpoint(&endpoint(other, &["*"], now)).await.unwrap(), "another team's count");
}

pub async fn a_job_is_finished_only_by_the_attempt_that_holds_it(store: Ports) {
    let f = fixture(store).await;
    let notify = f.store.notify();
    let now = at("2026-11-20T10:00:00Z");
    let invoice = f.invoice("2026-11-20").await;
    notify.queue_message(&message(&invoice, MessageKind::Invoice, now)).await.unwrap();
    let job = claim(&notify, &[JobKind::Mail], now, now).await.pop().unwrap();
    let stranger = ClaimedJob { team_id: create_team(&f.store, "Other").await, ..job.clone() };
    assert!(!notify.finish_job(&stranger, &Finish::Done, now).await.unwrap());
    assert!(
        !notify.finish_sending(&ClaimedJob { attempt: 2, ..job.clone() }, &Finish::Done, now).await.unwrap()
    );
    assert!(notify.finish_sending(&job, &Finish::Done, now).await.unwrap());
}
