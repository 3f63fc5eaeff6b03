//! Migrations that change data, run on data made before them, on SQLite and PostgreSQL.

#![expect(clippy::unwrap_used, reason = "a failed step fails the test")]

mod support;

use accounts::Role;
use billing::ledger::{EntryAmount, EntryFilter, EntryKind, NewEntry, PaymentMethod};
use billing::money::{Decimal, parse_decimal};
use billing::{InvoiceStatus, LedgerEntryId};
use diesel::Connection;
use diesel::connection::SimpleConnection;
use diesel_async::AsyncPgConnection;
use diesel_async::async_connection_wrapper::AsyncConnectionWrapper;
use diesel_migrations::{FileBasedMigrations, MigrationHarness};
use kernel::Id;
use notify::webhooks::EndpointDescription;
use notify::{EventFilter, EventType, SigningSecret, WebhookEndpoint, WebhookEndpointId, WebhookUrl};
use store_contract::Database;
use store_contract::invoices::{at, fixture, fixture_for};

/// Takes the migrations back on `conn` down to `version`'s (`000021`: it and every later one
/// by its down.sql), runs `sql`, and leaves them for the next start to run again.
fn before<C>(mut conn: C, dir: &str, version: &str, sql: &str)
where
    C: Connection + MigrationHarness<C::Backend>,
{
    let migrations =
        FileBasedMigrations::from_path(format!("{}/../../migrations/{dir}", env!("CARGO_MANIFEST_DIR")))
            .unwrap();
    loop {
        let reverted = conn.revert_last_migration(migrations.clone()).unwrap();
        if reverted.to_string().ends_with(version) {
            break;
        }
    }
    conn.batch_execute(sql).unwrap();
}

/// Runs `sql` on the database at `url`, past the store.
async fn execute(url: &str, sql: &'static str) {
    let url = url.to_owned();
    tokio::task::spawn_blocking(move || {
        if let Some(path) = url.strip_prefix("sqlite://") {
            diesel::SqliteConnection::establish(path).unwrap().batch_execute(sql).unwrap();
        } else {
            AsyncConnectionWrapper::<AsyncPgConnection>::establish(&url).unwrap().batch_execute(sql).unwrap();
        }
    })
    .await
    .unwrap();
}

/// The database at `url` as it was before migration `version`, with `sql` run on it then.
async fn as_before(url: &str, version: &'static str, sql: String) {
    let url = url.to_owned();
    tokio::task::spawn_blocking(move || {
        if let Some(path) = url.strip_prefix("sqlite://") {
            before(diesel::SqliteConnection::establish(path).unwrap(), "sqlite", version, &sql);
        } else {
            let conn = AsyncConnectionWrapper::<AsyncPgConnection>::establish(&url).unwrap();
            before(conn, "postgres", version, &sql);
        }
    })
    .await
    .unwrap();
}

/// Invoices marked `PAID`, `EXPIRED`, `PAID_PARTIAL` and `OVERDUE` by hand before the payments
/// ledger: the first two get an entry of their total, the others read PENDING, and their
/// books take new entries after it.
async fn statuses_set_by_hand_become_the_books(database: Database) {
    let f = fixture(support::open_url(&database.url).await.1).await;
    let team = f.team;
    let mut invoices = Vec::new();
    for _ in 0..4 {
        invoices.push(f.invoice("2026-10-01").await);
    }
    drop(f);
    let hand_set = "UPDATE invoices SET status = CASE serial WHEN 1 THEN 'PAID' WHEN 2 THEN 'EXPIRED' \
                    WHEN 3 THEN 'PAID_PARTIAL' ELSE 'OVERDUE' END";
    as_before(&database.url, "000021", hand_set.to_owned()).await;

    let f = fixture_for(support::open(database).await.1, team).await;
    let read = async |n: usize| f.billing.get_invoice(team, invoices[n].id).await.unwrap().unwrap();
    let entries = async |n: usize| {
        let filter = EntryFilter { invoice: Some(invoices[n].id), ..EntryFilter::default() };
        f.billing.list_entries(team, &filter).await.unwrap()
    };
    let total = invoices[0].totals.total;
    let (paid, expired) = (read(0).await, read(1).await);
    assert_eq!((paid.status, paid.balance.paid, paid.balance.due()), (InvoiceStatus::Paid, total, 0.into()));
    assert_eq!(paid.balance.paid_on, Some(invoices[0].updated_at.date_naive()));
    let [opening] = entries(0).await.try_into().unwrap();
    assert_eq!(
        (opening.kind, opening.amount, opening.method),
        (EntryKind::Payment, total, PaymentMethod::Other)
    );
    assert_eq!(
        opening.notes.unwrap().as_str(),
        "recorded when the payments ledger arrived: the invoice was PAID"
    );
    assert_eq!((expired.status, expired.balance.written_off), (InvoiceStatus::Expired, total));
    assert_eq!(entries(1).await[0].kind, EntryKind::WriteOff);
    for n in [2, 3] {
        let invoice = read(n).await;
        assert_eq!((invoice.status, invoice.balance.recorded()), (InvoiceStatus::Pending, 0.into()));
        assert!(entries(n).await.is_empty());
    }

    // The migrated books take new entries after the opening one.
    let now = at("2026-11-25T12:00:00Z");
    let refund = NewEntry {
        id: LedgerEntryId::generate(),
        kind: EntryKind::Refund,
        amount: EntryAmount::Exactly(parse_decimal("10").unwrap()),
        on: now.date_naive(),
        method: PaymentMethod::Other,
        reference: None,
        notes: None,
        created_at: now,
    };
    let (entry, after) = f.billing.record_entry(team, invoices[0].id, refund).await.unwrap();
    assert_eq!((entry.position, after.status), (1, InvoiceStatus::PaidPartial));
    assert_eq!(after.balance.paid, total - parse_decimal("10").unwrap());
}

#[tokio::test]
async fn on_sqlite_statuses_set_by_hand_become_the_books() {
    statuses_set_by_hand_become_the_books(Database::sqlite()).await;
}

#[tokio::test]
async fn on_postgres_statuses_set_by_hand_become_the_books() {
    statuses_set_by_hand_become_the_books(Database::postgres().await).await;
}

/// Endpoints made before their makers were recorded act for the team's oldest owner, and a
/// row an earlier release writes without one reads the same; the events of time recorded
/// before carry the user their data names.
async fn makers_and_owners_are_filled_in(database: Database) {
    let (_, ports) = support::open_url(&database.url).await;
    let team = store_contract::create_team(&ports, "Acme").await;
    let member = store_contract::create_user(&ports, team, Role::Member).await;
    let owner = store_contract::create_user(&ports, team, Role::Owner).await;
    store_contract::create_user(&ports, team, Role::Owner).await;
    let now = at("2026-11-25T12:00:00Z");
    let endpoint = WebhookEndpoint {
        id: WebhookEndpointId::generate(),
        team_id: team,
        url: WebhookUrl::parse("https://hooks.example.com/billable").unwrap(),
        events: EventFilter::parse(&["*"]).unwrap(),
        description: EndpointDescription::parse("books").unwrap(),
        created_by: member,
        secret: SigningSecret::generate(),
        previous_secret: None,
        disabled: None,
        created_at: now,
        updated_at: now,
    };
    assert!(ports.notify().create_endpoint(&endpoint).await.unwrap());
    let time = store_contract::tracking_contract::Fixture {
        store: ports.clone(),
        track: ports.track(),
        team,
        user: member,
    };
    time.logged(time.entry("2026-11-24T09:00:00Z", &[])).await;
    drop((time, ports));
    // The data an earlier release recorded: the entry as the API showed it.
    let recorded = format!(
        "UPDATE events SET data = '{{\"id\":\"x\",\"userId\":\"{member}\"}}' WHERE type = 'time_entry.created'"
    );
    as_before(&database.url, "000031", recorded).await;

    let url = database.url.clone();
    let (_, ports) = support::open(database).await;
    let notify = ports.notify();
    let stored = notify.get_endpoint(team, endpoint.id).await.unwrap().unwrap();
    assert_eq!(stored.created_by, owner, "the team's oldest owner");
    execute(&url, "UPDATE webhook_endpoints SET created_by = NULL").await;
    let unnamed = notify.list_endpoints(team).await.unwrap();
    assert_eq!(
        unnamed.iter().map(|e| e.created_by).collect::<Vec<_>>(),
        [owner],
        "as an earlier release wrote it"
    );
    let events = notify.list_events(team, 10).await.unwrap();
    let time_event = events.iter().find(|e| e.kind == EventType::TimeEntryCreated).unwrap();
    assert_eq!(time_event.owner, Some(member));
}

#[tokio::test]
async fn on_sqlite_makers_and_owners_are_filled_in() {
    makers_and_owners_are_filled_in(Database::sqlite()).await;
}

#[tokio::test]
async fn on_postgres_makers_and_owners_are_filled_in() {
    makers_and_owners_are_filled_in(Database::postgres().await).await;
}

/// Invoices reminded before reminders waited for sending count as sent; an unsent one loses
/// the next reminder it had; a sent one keeps both.
async fn reminded_invoices_count_as_sent(database: Database) {
    let f = fixture(support::open_url(&database.url).await.1).await;
    let team = f.team;
    let mut invoices = Vec::new();
    for _ in 0..3 {
        invoices.push(f.invoice("2026-10-01").await);
    }
    drop(f);
    let serials = "UPDATE invoices SET reminders_sent = 2, sent_at = NULL, \
                   next_reminder_at = '2026-12-01 00:00:00+00:00' WHERE serial = 1; \
                   UPDATE invoices SET sent_at = NULL, next_reminder_at = '2026-12-01 00:00:00+00:00' WHERE serial = 2; \
                   UPDATE invoices SET sent_at = '2026-10-02 00:00:00+00:00', \
                   next_reminder_at = '2026-12-01 00:00:00+00:00' WHERE serial = 3";
    as_before(&database.url, "000032", serials.to_owned()).await;
    let f = fixture_for(support::open(database).await.1, team).await;
    let read = async |n: usize| f.billing.get_invoice(team, invoices[n].id).await.unwrap().unwrap().chasing;
    let (reminded, unsent, sent) = (read(0).await, read(1).await, read(2).await);
    assert!(reminded.sent_at.is_some() && reminded.next_reminder_at.is_some(), "{reminded:?}");
    assert_eq!((unsent.sent_at, unsent.next_reminder_at), (None, None));
    assert_eq!(sent.sent_at, Some(at("2026-10-02T00:00:00Z")));
    assert!(sent.next_reminder_at.is_some());
}

#[tokio::test]
async fn on_sqlite_reminded_invoices_count_as_sent() {
    reminded_invoices_count_as_sent(Database::sqlite()).await;
}

#[tokio::test]
async fn on_postgres_reminded_invoices_count_as_sent() {
    reminded_invoices_count_as_sent(Database::postgres().await).await;
}

/// Invoices and credit notes made before lines had a VAT of their own read the same after:
/// every line takes its document's category and rate, and no amount changes.
async fn lines_take_their_invoices_vat(database: Database) {
    let f = fixture(support::open_url(&database.url).await.1).await;
    let team = f.team;
    let invoice = f.invoice("2026-10-01").await;
    let note = billing::credit::NewCreditNote {
        id: Id::generate(),
        lines: billing::credit::CreditLines::Full,
        reason: None,
        created_at: at("2026-10-02T00:00:00Z"),
    };
    let (note, _) = f.billing.issue_credit_note(team, invoice.id, note).await.unwrap();
    let invoice = f.billing.get_invoice(team, invoice.id).await.unwrap().unwrap();
    drop(f);
    as_before(&database.url, "000033", String::new()).await;
    let f = fixture_for(support::open(database).await.1, team).await;
    let after = f.billing.get_invoice(team, invoice.id).await.unwrap().unwrap();
    // Going back before 000033 went back before the supply's columns too (000035): what an
    // invoice made then states of its supply is nothing.
    assert_eq!(after, billing::Invoice { supply: billing::Supply::default(), ..invoice });
    assert!(after.line_items.iter().all(|line| line.vat == billing::LineVat::invoices()));
    let groups = after.vat_breakdown();
    assert_eq!(groups.len(), 1);
    assert_eq!((groups[0].taxable_amount, groups[0].tax_amount), (after.totals.subtotal, after.totals.tax));
    let notes =
        f.billing.list_credit_notes(team, &billing::credit::CreditNoteFilter::default()).await.unwrap();
    assert_eq!(notes, [note]);
}

#[tokio::test]
async fn on_sqlite_lines_take_their_invoices_vat() {
    lines_take_their_invoices_vat(Database::sqlite()).await;
}

#[tokio::test]
async fn on_postgres_lines_take_their_invoices_vat() {
    lines_take_their_invoices_vat(Database::postgres().await).await;
}

/// Projects made before projects had clients read the same after, belonging to no client,
/// and their sections and time entries still refer to them.
async fn projects_keep_their_time_and_belong_to_no_client(database: Database) {
    let store = support::open_url(&database.url).await.1;
    let f = store_contract::tracking_contract::fixture(store).await;
    let team = f.team;
    let project = tracking::Project::new(
        team,
        store_contract::tracking_contract::title("Site"),
        None,
        at("2026-10-01T00:00:00Z"),
    )
    .with_rate(tracking::HourlyRate::parse(parse_decimal("95.5").unwrap()).ok());
    f.track.create_project(&project).await.unwrap();
    let section = f.section(&project, "Design").await;
    let entry = f
        .logged(tracking::TimeEntry {
            project_id: Some(project.id),
            section_id: Some(section.id),
            ..f.entry("2026-10-02T00:00:00Z", &[])
        })
        .await;
    drop(f);
    as_before(&database.url, "000034", String::new()).await;
    // The ports keep the database: they live to the end.
    let ports = support::open(database).await.1;
    let track = ports.track();
    let after = track.get_project(team, project.id).await.unwrap().unwrap();
    assert_eq!((&after, after.client_id), (&project, None));
    assert_eq!(track.get_entry(team, entry.id).await.unwrap().unwrap(), entry);
    assert_eq!(track.list_sections(team, project.id).await.unwrap(), [section]);
    // The references hold as before: a project with time cannot go.
    let deleted = track.delete_project(team, project.id).await;
    assert!(matches!(deleted, Err(tracking::DeleteError::HasTimeEntries)), "{deleted:?}");
}

#[tokio::test]
async fn on_sqlite_projects_keep_their_time_and_belong_to_no_client() {
    projects_keep_their_time_and_belong_to_no_client(Database::sqlite()).await;
}

#[tokio::test]
async fn on_postgres_projects_keep_their_time_and_belong_to_no_client() {
    projects_keep_their_time_and_belong_to_no_client(Database::postgres().await).await;
}

/// Invoices and credit notes made before numbering patterns keep their numbers, a serial
/// past four digits included, and each series goes on from its last.
async fn documents_keep_their_numbers_and_series_go_on(database: Database) {
    let f = fixture(support::open_url(&database.url).await.1).await;
    let team = f.team;
    let first = f.invoice("2026-10-01").await;
    let second = f.invoice("2026-10-02").await;
    let note = billing::credit::NewCreditNote {
        id: Id::generate(),
        lines: billing::credit::CreditLines::Full,
        reason: None,
        created_at: at("2026-10-03T00:00:00Z"),
    };
    let (note, _) = f.billing.issue_credit_note(team, first.id, note).await.unwrap();
    drop(f);
    let wide = "UPDATE invoices SET serial = 12345 WHERE serial = 2; \
                UPDATE invoice_serials SET last_serial = 12345";
    as_before(&database.url, "000037", wide.to_owned()).await;
    let f = fixture_for(support::open(database).await.1, team).await;
    let read = async |id| f.billing.get_invoice(team, id).await.unwrap().unwrap().number.to_string();
    assert_eq!(
        (read(first.id).await, read(second.id).await),
        ("INV-0001".to_owned(), "INV-12345".to_owned())
    );
    let notes =
        f.billing.list_credit_notes(team, &billing::credit::CreditNoteFilter::default()).await.unwrap();
    assert_eq!(notes, [note]);
    assert_eq!(f.invoice("2026-10-04").await.number.as_str(), "INV-12346");
    let another = billing::credit::NewCreditNote {
        id: Id::generate(),
        lines: billing::credit::CreditLines::Full,
        reason: None,
        created_at: at("2026-10-05T00:00:00Z"),
    };
    let (another, _) = f.billing.issue_credit_note(team, second.id, another).await.unwrap();
    assert_eq!(another.number.as_str(), "CN-0002");
    // Searches find the numbers kept as they find new ones.
    let filter = billing::InvoiceFilter {
        text: Some(kernel::SearchText::parse("inv-12345").unwrap()),
        ..billing::InvoiceFilter::default()
    };
    let found = f.billing.list_invoices(team, &filter).await.unwrap();
    assert_eq!(found.iter().map(|invoice| invoice.id).collect::<Vec<_>>(), [second.id]);
}

#[tokio::test]
async fn on_sqlite_documents_keep_their_numbers_and_series_go_on() {
    documents_keep_their_numbers_and_series_go_on(Database::sqlite()).await;
}

#[tokio::test]
async fn on_postgres_documents_keep_their_numbers_and_series_go_on() {
    documents_keep_their_numbers_and_series_go_on(Database::postgres().await).await;
}

/// Invoices, their lines and credit notes made before discounts and Peppol addresses read
/// back as they were: no discount, every total the same; clients and senders have no
/// Peppol address; and the next invoice may take discounts.
async fn documents_before_discounts_keep_every_figure(database: Database) {
    let f = fixture(support::open_url(&database.url).await.1).await;
    let team = f.team;
    let invoice = f.invoice("2026-10-01").await;
    let note = billing::credit::NewCreditNote {
        id: Id::generate(),
        lines: billing::credit::CreditLines::Full,
        reason: None,
        created_at: at("2026-10-03T00:00:00Z"),
    };
    let (note, _) = f.billing.issue_credit_note(team, invoice.id, note).await.unwrap();
    let client = f.billing.get(team, f.client).await.unwrap().unwrap();
    let invoice = f.billing.get_invoice(team, invoice.id).await.unwrap().unwrap();
    drop(f);
    as_before(&database.url, "000038", String::new()).await;
    let f = fixture_for(support::open(database).await.1, team).await;
    let after = f.billing.get_invoice(team, invoice.id).await.unwrap().unwrap();
    assert_eq!(after, invoice);
    assert_eq!((after.discount, after.totals.discount_total), (None, Decimal::ZERO));
    assert!(after.line_items.iter().all(|line| line.discount.is_none() && line.net_amount() == line.amount));
    let notes =
        f.billing.list_credit_notes(team, &billing::credit::CreditNoteFilter::default()).await.unwrap();
    assert_eq!(notes, [note]);
    assert_eq!(f.billing.get(team, client.id).await.unwrap().unwrap(), client);
    assert_eq!(client.details.peppol_id, None);
    let mut draft =
        f.draft(billing::store::BillTo::Existing(f.client), "2026-10-04", &[("Work", "100", "1")]);
    draft.discount = Some(billing::Discount::Percentage(Decimal::new(10, 0)));
    draft.totals = billing::Pricing {
        items: &draft.line_items,
        vat: &draft.vat,
        rule: draft.tax_rule,
        discount: draft.discount,
        currency: draft.currency,
    }
    .totals(None)
    .unwrap();
    let discounted = f.billing.create_invoice(draft).await.unwrap();
    assert_eq!(f.billing.get_invoice(team, discounted.id).await.unwrap().unwrap(), discounted);
    assert_eq!(discounted.totals.total, Decimal::new(10_710, 2), "90.00 and 19 %");
}

#[tokio::test]
async fn on_sqlite_documents_before_discounts_keep_every_figure() {
    documents_before_discounts_keep_every_figure(Database::sqlite()).await;
}

#[tokio::test]
async fn on_postgres_documents_before_discounts_keep_every_figure() {
    documents_before_discounts_keep_every_figure(Database::postgres().await).await;
}

/// Invoices, clients and senders made before languages and payment references: the
/// invoices answer their number's creditor reference, clients the team's language, senders
/// English and the `auto` payment QR code; new rows keep what they are given.
async fn rows_before_languages_read_as_they_did(database: Database) {
    let f = fixture(support::open_url(&database.url).await.1).await;
    let team = f.team;
    let invoice = f.invoice("2026-10-01").await;
    let client = f.billing.get(team, f.client).await.unwrap().unwrap();
    let sender = f.billing.default_sender(team).await.unwrap().unwrap();
    drop(f);
    as_before(&database.url, "000040", String::new()).await;
    let f = fixture_for(support::open(database).await.1, team).await;
    let after = f.billing.get_invoice(team, invoice.id).await.unwrap().unwrap();
    assert_eq!(after, invoice);
    assert_eq!(after.payment_reference, billing::PaymentReference::creditor(invoice.number.as_str()));
    assert_eq!(f.billing.get(team, client.id).await.unwrap().unwrap().details.language, None);
    let sender = f.billing.get_sender(team, sender.id).await.unwrap().unwrap();
    assert_eq!(sender.details.language, locale::Language::English);
    assert_eq!(sender.details.payment_qr, billing::payment_qr::QrChoice::Auto);
    let mut details = client.details.clone();
    details.language = Some(locale::Language::German);
    let changed = f.billing.replace(team, client.id, &details, at("2026-10-05T00:00:00Z")).await.unwrap();
    assert_eq!(changed.details.language, Some(locale::Language::German));
    assert_eq!(f.billing.get(team, client.id).await.unwrap().unwrap(), changed);
}

#[tokio::test]
async fn on_sqlite_rows_before_languages_read_as_they_did() {
    rows_before_languages_read_as_they_did(Database::sqlite()).await;
}

#[tokio::test]
async fn on_postgres_rows_before_languages_read_as_they_did() {
    rows_before_languages_read_as_they_did(Database::postgres().await).await;
}
