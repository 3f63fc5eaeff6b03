//! Migrations that change data, run on data made before them, on SQLite and PostgreSQL.

#![expect(clippy::unwrap_used, reason = "a failed step fails the test")]

mod support;

use billing::ledger::{EntryAmount, EntryFilter, EntryKind, NewEntry, PaymentMethod};
use billing::money::parse_decimal;
use billing::{InvoiceStatus, LedgerEntryId};
use diesel::Connection;
use diesel_async::AsyncPgConnection;
use diesel_async::async_connection_wrapper::AsyncConnectionWrapper;
use diesel_migrations::{FileBasedMigrations, MigrationHarness};
use kernel::Id;
use store_contract::Database;
use store_contract::invoices::{at, fixture, fixture_for};

/// Takes the migrations back on `conn` down to the payments ledger's (000021, and every
/// later one by its down.sql), runs `sql`, and leaves them for the next start to run again.
fn before_the_payments_ledger<C>(mut conn: C, dir: &str, sql: &str)
where
    C: Connection + MigrationHarness<C::Backend>,
{
    let migrations =
        FileBasedMigrations::from_path(format!("{}/../../migrations/{dir}", env!("CARGO_MANIFEST_DIR")))
            .unwrap();
    loop {
        let reverted = conn.revert_last_migration(migrations.clone()).unwrap();
        if reverted.to_string().ends_with("000021") {
            break;
        }
    }
    conn.batch_execute(sql).unwrap();
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
    let url = database.url.clone();
    tokio::task::spawn_blocking(move || {
        if url.starts_with("sqlite://") {
            let path = url.trim_start_matches("sqlite://");
            before_the_payments_ledger(
                diesel::SqliteConnection::establish(path).unwrap(),
                "sqlite",
                hand_set,
            );
        } else {
            let conn = AsyncConnectionWrapper::<AsyncPgConnection>::establish(&url).unwrap();
            before_the_payments_ledger(conn, "postgres", hand_set);
        }
    })
    .await
    .unwrap();

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
