//! The bank port's contract: a statement's transactions kept once however often and however
//! concurrently it is imported, a transaction booked once through the ledger (what is
//! above an invoice's due becoming its client's credit), a booking undone, and money out
//! never booked.

use std::sync::Arc;

use accounts::Currency;
use billing::banking::{
    Allocation, BankError, BankStatementId, BankTransactionId, CsvColumns, CsvMapping, NewStatement,
    Statement, StatementEntry, StatementFormat, TransactionFilter, TransactionStatus, entry_keys,
};
use billing::ledger::LedgerEntryId;
use billing::money::parse_decimal;
use billing::{Invoice, InvoiceStatus};
use chrono::NaiveDate;
use kernel::Id;

use crate::Ports;
use crate::invoices::{Fixture, at, fixture};

fn d(text: &str) -> billing::money::Decimal {
    parse_decimal(text).unwrap()
}

fn eur() -> Currency {
    Currency::parse("EUR").unwrap()
}

fn entry(amount: &str, text: &str, bank_reference: Option<&str>) -> StatementEntry {
    StatementEntry {
        booked_on: NaiveDate::from_ymd_opt(2026, 11, 20).unwrap(),
        value_on: None,
        amount: d(amount),
        currency: eur(),
        counterparty_name: Some("Zoë Łukasiewicz".into()),
        counterparty_iban: Some("DE02120300000000202051".into()),
        text: text.into(),
        reference: None,
        bank_reference: bank_reference.map(str::to_owned),
    }
}

fn statement(entries: Vec<StatementEntry>) -> Statement {
    Statement {
        account: Some("DE44500105175407324931".into()),
        currency: eur(),
        opening: None,
        closing: None,
        from: None,
        to: None,
        entries,
    }
}

/// `statement` as an import of its own would keep it: new ids, the same keys.
fn new(statement: &Statement) -> NewStatement {
    NewStatement {
        id: BankStatementId::generate(),
        format: StatementFormat::Camt053,
        statement: statement.clone(),
        keys: entry_keys(statement),
        ids: statement.entries.iter().map(|_| BankTransactionId::generate()).collect(),
        imported_at: at("2026-11-21T06:00:00Z"),
    }
}

fn bank(f: &Fixture) -> Arc<dyn billing::BillingStore> {
    f.billing.clone()
}

async fn listed(f: &Fixture, statuses: &[TransactionStatus]) -> usize {
    let filter = TransactionFilter { statuses: statuses.to_vec(), statement: None, after: None, limit: 1000 };
    f.billing.list_transactions(f.team, &filter).await.unwrap().len()
}

pub async fn a_statement_is_kept_once_however_often_it_is_imported(store: Ports) {
    let f = fixture(store).await;
    let statement = statement(vec![
        entry("10.00", "a", Some("B-1")),
        entry("20.00", "same", None),
        entry("20.00", "same", None),
        entry("-5.00", "fee", None),
    ]);
    let (first, added) = f.billing.import_statement(f.team, &new(&statement)).await.unwrap();
    assert_eq!((first.entries, first.duplicates, added.len()), (4, 0, 4));
    assert_eq!(
        added.iter().map(|t| t.status).collect::<Vec<_>>(),
        [
            TransactionStatus::Unmatched,
            TransactionStatus::Unmatched,
            TransactionStatus::Unmatched,
            TransactionStatus::Ignored
        ]
    );
    let found = f.billing.get_statement(f.team, first.id).await.unwrap().unwrap();
    assert_eq!((found.entries, found.account.as_deref()), (4, Some("DE44500105175407324931")));

    // The same file again, and an overlapping one, concurrently: nothing twice.
    let mut longer = statement.clone();
    longer.entries.push(entry("30.00", "new", Some("B-2")));
    let tasks: Vec<_> = (0..8)
        .map(|i| {
            let (billing, team) = (bank(&f), f.team);
            let new = new(if i % 2 == 0 { &statement } else { &longer });
            tokio::spawn(async move { billing.import_statement(team, &new).await.unwrap().1.len() })
        })
        .collect();
    let mut added = 0;
    for task in tasks {
        added += task.await.unwrap();
    }
    assert_eq!(added, 1, "only the overlapping file's new entry");
    assert_eq!(listed(&f, &[]).await, 5);
    assert_eq!(listed(&f, &[TransactionStatus::Ignored]).await, 1);
    let other = crate::create_team(&f.store, "Other").await;
    assert_eq!(f.billing.import_statement(other, &new(&statement)).await.unwrap().1.len(), 4, "per team");
    assert!(f.billing.get_statement(other, first.id).await.unwrap().is_none());
}

async fn one_unmatched(f: &Fixture, amount: &str) -> billing::banking::BankTransaction {
    let (_, mut added) =
        f.billing.import_statement(f.team, &new(&statement(vec![entry(amount, "x", None)]))).await.unwrap();
    added.pop().unwrap()
}

async fn book(
    f: &Fixture,
    transaction: BankTransactionId,
    allocations: &[Allocation],
) -> Result<billing::banking::BankTransaction, BankError> {
    let entries: Vec<LedgerEntryId> = allocations.iter().map(|_| LedgerEntryId::generate()).collect();
    f.billing.book_transaction(f.team, transaction, allocations, &entries, at("2026-11-21T07:00:00Z")).await
}

async fn stored(f: &Fixture, invoice: &Invoice) -> Invoice {
    f.billing.get_invoice(f.team, invoice.id).await.unwrap().unwrap()
}

pub async fn a_transaction_pays_once_and_what_is_above_the_due_is_credit(store: Ports) {
    let f = fixture(store).await;
    let invoice = f.invoice("2026-11-10").await;
    let due = invoice.balance.due();
    let open = f.billing.open_invoices(f.team).await.unwrap();
    assert_eq!(open.iter().map(|o| (o.id, o.due)).collect::<Vec<_>>(), [(invoice.id, due)]);

    let transaction = one_unmatched(&f, &(due + d("10.00")).to_string()).await;
    let wrong = [Allocation { invoice: invoice.id, amount: due }];
    assert!(matches!(book(&f, transaction.id, &wrong).await, Err(BankError::Unallocated { .. })));
    let allocations = [Allocation { invoice: invoice.id, amount: due + d("10.00") }];
    // Racing bookings of one transaction: one books it.
    let tasks: Vec<_> = (0..6)
        .map(|_| {
            let (billing, team, id) = (bank(&f), f.team, transaction.id);
            tokio::spawn(async move {
                let entries = [LedgerEntryId::generate()];
                billing.book_transaction(team, id, &allocations, &entries, at("2026-11-21T07:00:00Z")).await
            })
        })
        .collect();
    let mut booked = Vec::new();
    for task in tasks {
        match task.await.unwrap() {
            Ok(transaction) => booked.push(transaction),
            Err(BankError::AlreadyMatched) => {}
            Err(other) => panic!("{other:?}"),
        }
    }
    let [booked] = booked.try_into().unwrap();
    assert_eq!(booked.status, TransactionStatus::Matched);
    assert_eq!((booked.payments.len(), booked.payments[0].amount, booked.credited), (1, due, d("10.00")));
    let paid = stored(&f, &invoice).await;
    assert_eq!((paid.status, paid.balance.due()), (InvoiceStatus::Paid, d("0")));
    assert!(f.billing.open_invoices(f.team).await.unwrap().is_empty());
    let again = f.billing.get_transaction(f.team, transaction.id).await.unwrap().unwrap();
    assert_eq!(again, booked);

    // Undone: the payment voided, the credit taken back, unmatched again.
    let undone =
        f.billing.unmatch_transaction(f.team, transaction.id, at("2026-11-22T00:00:00Z")).await.unwrap();
    assert_eq!(
        (undone.status, undone.payments.len(), undone.credited),
        (TransactionStatus::Unmatched, 0, d("0"))
    );
    assert_eq!(stored(&f, &invoice).await.balance.due(), due);
    assert!(matches!(
        f.billing.unmatch_transaction(f.team, transaction.id, at("2026-11-22T00:00:00Z")).await,
        Err(BankError::NotMatched)
    ));
    // And booked again, by hand, as a suggestion confirmed.
    f.billing.suggest(f.team, transaction.id, invoice.id).await.unwrap();
    assert_eq!(listed(&f, &[TransactionStatus::Suggested]).await, 1);
    assert_eq!(book(&f, transaction.id, &allocations).await.unwrap().status, TransactionStatus::Matched);
}

pub async fn money_out_and_strangers_invoices_are_never_booked(store: Ports) {
    let f = fixture(store).await;
    let invoice = f.invoice("2026-11-10").await;
    let (_, mut added) = f
        .billing
        .import_statement(f.team, &new(&statement(vec![entry("-5.00", "fee", None)])))
        .await
        .unwrap();
    let debit = added.pop().unwrap();
    let share = [Allocation { invoice: invoice.id, amount: d("5.00") }];
    assert!(matches!(book(&f, debit.id, &share).await, Err(BankError::Debit)));
    let credit = one_unmatched(&f, "5.00").await;
    let stranger = crate::invoices::fixture(f.store.clone()).await.invoice("2026-11-10").await;
    let theirs = [Allocation { invoice: stranger.id, amount: d("5.00") }];
    assert!(matches!(book(&f, credit.id, &theirs).await, Err(BankError::InvoiceNotFound(_))));
    assert_eq!(
        f.billing.get_transaction(f.team, credit.id).await.unwrap().unwrap().status,
        TransactionStatus::Unmatched
    );
}

pub async fn a_csv_mapping_round_trips(store: Ports) {
    let f = fixture(store).await;
    assert_eq!(f.billing.csv_mapping(f.team).await.unwrap(), None);
    let mapping = CsvMapping {
        delimiter: b';',
        decimal_separator: ',',
        date_format: "%d.%m.%Y".into(),
        columns: CsvColumns {
            date: "Buchungstag".into(),
            amount: "Betrag".into(),
            currency: None,
            counterparty_name: Some("Name".into()),
            counterparty_iban: None,
            text: "Verwendungszweck".into(),
            reference: None,
        },
    };
    f.billing.save_csv_mapping(f.team, &mapping, at("2026-11-21T06:00:00Z")).await.unwrap();
    f.billing.save_csv_mapping(f.team, &mapping, at("2026-11-21T06:00:01Z")).await.unwrap();
    assert_eq!(f.billing.csv_mapping(f.team).await.unwrap(), Some(mapping));
}

pub async fn thousands_of_entries_import_whole_and_each_unmatched_credit_raises_its_event(store: Ports) {
    let f = fixture(store).await;
    let entries: Vec<StatementEntry> = (1..=2500)
        .map(|n| entry(&format!("{n}.00"), &format!("transfer {n}"), Some(&format!("B-{n}"))))
        .collect();
    // Every seventh kept before, so that some fall in every thousand the adapter writes at once.
    let earlier = statement(entries.iter().step_by(7).cloned().collect());
    f.billing.import_statement(f.team, &new(&earlier)).await.unwrap();
    let whole = statement(entries);
    let (imported, added) = f.billing.import_statement(f.team, &new(&whole)).await.unwrap();
    let kept_before = earlier.entries.len();
    assert_eq!((imported.entries, imported.duplicates, added.len()), (2500, kept_before, 2500 - kept_before));
    let mut texts: Vec<&str> = added.iter().map(|t| t.entry.text.as_str()).collect();
    let mut expected: Vec<String> =
        (1..=2500).filter(|n| (n - 1) % 7 != 0).map(|n| format!("transfer {n}")).collect();
    texts.sort_unstable();
    expected.sort_unstable();
    assert_eq!(texts, expected, "the new entries, each once");

    f.billing.finish_import(f.team, imported.id, (0, 0), &added, at("2026-11-21T06:00:01Z")).await.unwrap();
    let events = f.store.notify().list_events(f.team, 5000).await.unwrap();
    let mut subjects: Vec<uuid::Uuid> = events
        .iter()
        .filter(|event| event.kind == notify::EventType::BankTransactionUnmatched)
        .map(|event| event.subject)
        .collect();
    let mut unmatched: Vec<uuid::Uuid> = added.iter().map(|t| t.id.as_uuid()).collect();
    subjects.sort_unstable();
    unmatched.sort_unstable();
    assert_eq!(subjects, unmatched, "an event for each unmatched credit");
    let all = TransactionFilter { statuses: Vec::new(), statement: None, after: None, limit: 5000 };
    assert_eq!(f.billing.list_transactions(f.team, &all).await.unwrap().len(), 2500);
}
