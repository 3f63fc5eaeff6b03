//! Migrations that change data, run on data made before them, on SQLite and PostgreSQL.

#![expect(clippy::unwrap_used, reason = "a failed step fails the test")]

mod support;

use accounts::Role;
use billing::ledger::{EntryAmount, EntryFilter, EntryKind, NewEntry, PaymentMethod};
use billing::money::{Decimal, parse_decimal};
use billing::{InvoiceStatus, LedgerEntryId};
use std::collections::BTreeMap;

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

/// A connection past the store, on either database.
enum Raw {
    Sqlite(diesel::SqliteConnection),
    Postgres(Box<AsyncConnectionWrapper<AsyncPgConnection>>),
}

#[derive(diesel::QueryableByName)]
struct Line {
    #[diesel(sql_type = diesel::sql_types::Text)]
    line: String,
}

impl Raw {
    fn open(url: &str) -> Self {
        match url.strip_prefix("sqlite://") {
            Some(path) => Self::Sqlite(diesel::SqliteConnection::establish(path).unwrap()),
            None => Self::Postgres(Box::new(AsyncConnectionWrapper::establish(url).unwrap())),
        }
    }

    fn lines(&mut self, sql: &str) -> Vec<String> {
        use diesel::RunQueryDsl;
        let lines = match self {
            Self::Sqlite(conn) => diesel::sql_query(sql).load::<Line>(conn),
            Self::Postgres(conn) => diesel::sql_query(sql).load::<Line>(&mut **conn),
        };
        lines.unwrap_or_else(|e| panic!("{sql}: {e}")).into_iter().map(|l| l.line).collect()
    }

    /// Every row of every table but the migrations' own, as text: table by table, each row
    /// with its columns in the order of their names (but the `skipped` ones), the rows
    /// sorted.
    fn dump(&mut self, skipped: &[(&str, &str)]) -> BTreeMap<String, Vec<String>> {
        let sqlite = matches!(self, Self::Sqlite(_));
        let tables = self.lines(if sqlite {
            "SELECT name AS line FROM sqlite_master WHERE type = 'table' \
             AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name <> '__diesel_schema_migrations'"
        } else {
            "SELECT table_name::text AS line FROM information_schema.tables WHERE table_schema = current_schema() \
             AND table_type = 'BASE TABLE' AND table_name <> '__diesel_schema_migrations'"
        });
        tables
            .into_iter()
            .filter(|table| !skipped.contains(&(table.as_str(), "*")))
            .map(|table| {
                let mut columns = self.lines(&if sqlite {
                    format!("SELECT name AS line FROM pragma_table_info('{table}')")
                } else {
                    format!(
                        "SELECT column_name::text AS line FROM information_schema.columns \
                         WHERE table_schema = current_schema() AND table_name = '{table}'"
                    )
                });
                columns.retain(|column| !skipped.contains(&(table.as_str(), column.as_str())));
                columns.sort();
                let row = columns
                    .iter()
                    .map(|c| {
                        if sqlite {
                            format!("quote(\"{c}\")")
                        } else {
                            format!("quote_nullable(\"{c}\"::text)")
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(" || '|' || ");
                let mut rows = self.lines(&format!("SELECT {row} AS line FROM \"{table}\""));
                rows.sort();
                (table, rows)
            })
            .collect()
    }

    fn migrations(&self) -> FileBasedMigrations {
        let dir = if matches!(self, Self::Sqlite(_)) { "sqlite" } else { "postgres" };
        FileBasedMigrations::from_path(format!("{}/../../migrations/{dir}", env!("CARGO_MANIFEST_DIR")))
            .unwrap()
    }

    /// Takes the last applied migration back by its down.sql; returns its version.
    fn revert_last(&mut self) -> String {
        let migrations = self.migrations();
        let version = match self {
            Self::Sqlite(conn) => conn.revert_last_migration(migrations).map(|v| v.to_string()),
            Self::Postgres(conn) => conn.revert_last_migration(migrations).map(|v| v.to_string()),
        };
        version.unwrap()
    }

    /// Runs every migration not applied yet, as a start of the current release does.
    fn upgrade(&mut self) {
        let migrations = self.migrations();
        match self {
            Self::Sqlite(conn) => drop(conn.run_pending_migrations(migrations).unwrap()),
            Self::Postgres(conn) => drop(conn.run_pending_migrations(migrations).unwrap()),
        }
    }

    fn applied(&mut self) -> usize {
        match self {
            Self::Sqlite(conn) => conn.applied_migrations().unwrap().len(),
            Self::Postgres(conn) => conn.applied_migrations().unwrap().len(),
        }
    }
}

/// Data of every kind, made as the contract suite makes it, a team per part.
async fn every_kind_of_data(ports: &store_contract::Ports) {
    use store_contract::{
        accounts_contract, agent, banking_contract, cards_contract, chasing_contract, deliveries,
        idempotency, invoices, ledger_contract, numbering_contract, quotes_contract, recurring_contract,
        timers, tracking_contract,
    };
    accounts_contract::keys_list_per_team_oldest_first(ports.clone()).await;
    invoices::discounts_round_trip_and_credit_notes_take_them(ports.clone()).await;
    invoices::an_invoice_is_in_its_clients_currency_with_its_exchange_kept(ports.clone()).await;
    invoices::an_invoice_keeps_its_supply_as_a_day_a_period_or_none(ports.clone()).await;
    ledger_contract::refunds_voids_and_write_offs_keep_the_books(ports.clone()).await;
    ledger_contract::credit_notes_take_their_own_serials_and_lower_what_is_due(ports.clone()).await;
    numbering_contract::changes_of_different_series_all_hold(ports.clone()).await;
    quotes_contract::an_accepted_quote_takes_deposits_then_its_final_invoice_deducts_them(ports.clone())
        .await;
    quotes_contract::a_quote_is_mailed_in_a_thread_of_its_own(ports.clone()).await;
    banking_contract::a_transaction_pays_once_and_what_is_above_the_due_is_credit(ports.clone()).await;
    banking_contract::a_csv_mapping_round_trips(ports.clone()).await;
    cards_contract::a_card_refund_gives_back_the_credit_first_once(ports.clone()).await;
    let card_team = store_contract::create_team(ports, "Cards").await;
    let account = billing::cards::CardAccount {
        team_id: card_team,
        processor: billing::cards::Processor::Stripe,
        secret_key: billing::cards::stripe_secret_key("sk_test_upgrade").unwrap(),
        webhook_secret: billing::cards::stripe_webhook_secret("whsec_upgrade").unwrap(),
        token_hash: billing::cards::WebhookToken::generate().hash(),
        created_at: at("2026-11-20T10:00:00Z"),
        updated_at: at("2026-11-20T10:00:00Z"),
    };
    ports.billing().connect_card_account(&account).await.unwrap();
    tracking_contract::entries_round_trip_with_their_tags(ports.clone()).await;
    tracking_contract::billed_time_is_locked_and_released_with_its_invoice(ports.clone()).await;
    tracking_contract::deleting_a_project_takes_its_sections(ports.clone()).await;
    timers::a_timer_round_trips_with_its_tags_current(ports.clone()).await;
    // First of the recurring parts: its passes run every team's due recurring invoices.
    recurring_contract::racing_passes_make_each_period_s_invoice_once_and_skip_the_missed_ones(ports.clone())
        .await;
    recurring_contract::recurring_invoices_round_trip_and_stay_in_their_team(ports.clone()).await;
    let agent_team = store_contract::create_team(ports, "Agent").await;
    let invoices_only = EventFilter::parse(&["invoice.*"]).unwrap();
    ports.notify().subscribe_agent(agent_team, Some(&invoices_only)).await.unwrap();
    chasing_contract::every_write_records_its_events_in_order(ports.clone()).await;
    chasing_contract::reminders_follow_the_policy_once_per_step(ports.clone()).await;
    chasing_contract::endpoints_get_only_what_their_maker_may_read(ports.clone()).await;
    chasing_contract::messages_are_queued_sent_failed_and_retried(ports.clone()).await;
    agent::runs_round_trip_every_field(ports.clone()).await;
    agent::memory_gives_the_last_messages_in_order(ports.clone()).await;
    deliveries::attempts_finish_retry_or_fail(ports.clone()).await;
    idempotency::an_answered_key_gives_its_answer_to_the_same_request_only(ports.clone()).await;
}

/// A database holding data of every kind, taken back to each earlier migration state in
/// turn: from each, the current release's migrations upgrade it with every row of that
/// state intact (read back after taking the upgrade down again), and the store reads it.
async fn every_earlier_state_upgrades_with_its_data_intact(database: Database) {
    let (_, ports) = support::open_url(&database.url).await;
    every_kind_of_data(&ports).await;
    drop(ports);
    let url = database.url.clone();
    // The PostgreSQL connection of the harness blocks on a runtime of its own: it is used,
    // and dropped, off the test's.
    let (mut raw, dump, current) = tokio::task::spawn_blocking(move || {
        let mut raw = Raw::open(&url);
        let (dump, current) = (raw.dump(&[]), raw.applied());
        (raw, dump, current)
    })
    .await
    .unwrap();
    // A conversation's place in line is held only while a run of the agent waits or runs.
    let transient = ["agent_turns"];
    let empty: Vec<_> = dump
        .into_iter()
        .filter(|(table, rows)| rows.is_empty() && !transient.contains(&table.as_str()))
        .map(|(table, _)| table)
        .collect();
    assert!(empty.is_empty(), "tables the data leaves empty: {empty:?}");
    for state in (1..current).rev() {
        let (back, version, before);
        (raw, version, before) = tokio::task::spawn_blocking(move || {
            let version = raw.revert_last();
            assert_eq!(raw.applied(), state);
            let before = raw.dump(&changed_on_purpose(&version));
            raw.upgrade();
            (raw, version, before)
        })
        .await
        .unwrap();
        // The current store reads the upgraded database: every team, with its invoices.
        let (_, ports) = support::open_url(&database.url).await;
        let mut invoices = 0;
        for team in ports.accounts().list_teams().await.unwrap() {
            invoices += ports
                .billing()
                .list_invoices(team.id, &billing::InvoiceFilter::default())
                .await
                .unwrap()
                .len();
        }
        assert_eq!(invoices, before.get("invoices").map_or(0, Vec::len), "upgraded from before {version}");
        drop(ports);
        let skipped = changed_on_purpose(&version);
        (raw, back) = tokio::task::spawn_blocking(move || {
            while raw.applied() > state {
                raw.revert_last();
            }
            let after = raw.dump(&skipped);
            (raw, after)
        })
        .await
        .unwrap();
        assert!(
            before == back,
            "the data of the state before {version} changed in its upgrade: {}",
            diff(&before, &back)
        );
    }
    tokio::task::spawn_blocking(move || drop(raw)).await.unwrap();
}

/// What migrations change in the data on purpose, each tested on its own above: (version,
/// table, column).
const CHANGES_ON_PURPOSE: [(&str, &str, &str); 2] = [
    // The listing revisions count every change of time entries and their tags, a
    // migration's rewrite of them included, so that no listing kept before it is served
    // after it (every version: `*` is the whole table).
    ("99999999999999", "track_revisions", "*"),
    // Statuses set by hand before the ledger: PAID_PARTIAL and OVERDUE read PENDING
    // (`statuses_set_by_hand_become_the_books`).
    ("20261125000021", "invoices", "status"),
];

/// The columns an upgrade from the state before `version` changes on purpose.
fn changed_on_purpose(version: &str) -> Vec<(&'static str, &'static str)> {
    CHANGES_ON_PURPOSE
        .iter()
        .filter(|(at, ..)| *at >= version)
        .map(|(_, table, column)| (*table, *column))
        .collect()
}

/// The tables whose rows differ, with a row of each side that the other lacks.
fn diff(before: &BTreeMap<String, Vec<String>>, after: &BTreeMap<String, Vec<String>>) -> String {
    let mut said = Vec::new();
    for (table, rows) in before {
        let other = after.get(table).cloned().unwrap_or_default();
        if *rows != other {
            let lost = rows.iter().find(|row| !other.contains(row));
            let made = other.iter().find(|row| !rows.contains(row));
            said.push(format!("{table}: before {lost:?}, after {made:?}"));
        }
    }
    said.extend(
        after.keys().filter(|table| !before.contains_key(*table)).map(|table| format!("{table}: new")),
    );
    said.join("; ")
}

#[tokio::test]
async fn on_sqlite_every_earlier_state_upgrades_with_its_data_intact() {
    every_earlier_state_upgrades_with_its_data_intact(Database::sqlite()).await;
}

#[tokio::test]
async fn on_postgres_every_earlier_state_upgrades_with_its_data_intact() {
    every_earlier_state_upgrades_with_its_data_intact(Database::postgres().await).await;
}
