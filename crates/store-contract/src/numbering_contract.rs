//! The numbering port's contract: each series numbered by the team's pattern then, each
//! count gapless, a yearly count by the issue date's year in UTC, and a number never
//! issued twice.

use std::sync::Arc;

use accounts::TeamId;
use billing::credit::{CreditLines, NewCreditNote};
use billing::numbering::{Numbering, NumberingChange, NumberingPattern, Series};
use billing::store::{BillTo, CreateInvoiceError, LedgerError};
use billing::{BillingStore, InvoiceFilter};
use kernel::{Id, SearchText};

use crate::Ports;
use crate::invoices::{at, fixture};

fn pattern(text: &str) -> NumberingPattern {
    NumberingPattern::parse(text).unwrap()
}

fn note_at(created_at: &str) -> NewCreditNote {
    NewCreditNote { id: Id::generate(), lines: CreditLines::Full, reason: None, created_at: at(created_at) }
}

/// The numbers of the team's invoices that `filter` shows, in order of text.
async fn numbers_listed(
    billing: &Arc<dyn BillingStore>,
    team: TeamId,
    filter: &InvoiceFilter,
) -> Vec<String> {
    let listed = billing.list_invoices(team, filter).await.unwrap();
    let mut numbers: Vec<String> = listed.into_iter().map(|invoice| invoice.number.to_string()).collect();
    numbers.sort();
    numbers
}

pub async fn documents_take_the_teams_pattern_and_count_by_issue_year(store: Ports) {
    let f = fixture(store).await;
    assert_eq!(f.billing.numbering(f.team).await.unwrap(), Numbering::default());
    let first = f.invoice("2026-11-20").await;
    assert_eq!(first.number.as_str(), "INV-0001");

    let yearly = Numbering {
        invoices: pattern("{YYYY}-{0000}"),
        credit_notes: pattern("CN{YY}{000}"),
        quotes: pattern("A/{0}"),
    };
    f.billing.set_numbering(f.team, &NumberingChange::all(&yearly)).await.unwrap();
    assert_eq!(f.billing.numbering(f.team).await.unwrap(), yearly);
    let mut numbers = Vec::new();
    // By the issue date's year in UTC: 23:30 at UTC-02:00 on New Year's Eve is next year.
    for issued in ["2026-11-21", "2027-01-02", "2026-12-31T23:59:59Z", "2026-12-31T23:30:00-02:00"] {
        numbers.push(f.invoice(issued).await.number.to_string());
    }
    assert_eq!(numbers, ["2026-0001", "2027-0001", "2026-0002", "2027-0002"]);

    // Back to a pattern without a year: its count goes on where it stopped.
    let running = Numbering { invoices: pattern("INV-{0000}"), ..yearly };
    f.billing.set_numbering(f.team, &NumberingChange::all(&running)).await.unwrap();
    assert_eq!(f.invoice("2026-11-22").await.number.as_str(), "INV-0002");

    // Credit notes count on their own; a note names its invoice's number.
    let (note, _) =
        f.billing.issue_credit_note(f.team, first.id, note_at("2026-11-23T10:00:00Z")).await.unwrap();
    assert_eq!((note.number.as_str(), note.invoice_number.as_str()), ("CN26001", "INV-0001"));
    let stored = f.billing.get_credit_note(f.team, note.id).await.unwrap().unwrap();
    assert_eq!(stored, note);

    // The running count of the team's place in its invoices stays gapless under it all.
    assert_eq!(f.serials().await, [1, 2, 3, 4, 5, 6]);
    let search = async |text: &str| {
        numbers_listed(
            &f.billing,
            f.team,
            &InvoiceFilter { text: Some(SearchText::parse(text).unwrap()), ..InvoiceFilter::default() },
        )
        .await
    };
    assert_eq!(search("2027-2").await, ["2027-0002"]);
    assert_eq!(search("inv-0002").await, ["INV-0002"]);
    assert_eq!(search("1").await, ["2026-0001", "2027-0001", "INV-0001"]);
    assert!(search("2027-3").await.is_empty());
}

pub async fn a_number_taken_already_is_refused_and_its_count_given_back(store: Ports) {
    let f = fixture(store).await;
    let set = |invoices: &str, credit_notes: &str| Numbering {
        invoices: pattern(invoices),
        credit_notes: pattern(credit_notes),
        ..Numbering::default()
    };
    f.billing.set_numbering(f.team, &NumberingChange::all(&set("{YYYY}-{0}", "{YYYY}-{0}"))).await.unwrap();
    let invoice = f.invoice("2026-11-20").await;
    assert_eq!(invoice.number.as_str(), "2026-1");
    let (note, _) =
        f.billing.issue_credit_note(f.team, invoice.id, note_at("2026-11-21T10:00:00Z")).await.unwrap();
    assert_eq!(note.number.as_str(), "2026-1", "each series counts on its own");

    // A pattern without a year that makes the same text: refused, nothing made.
    f.billing.set_numbering(f.team, &NumberingChange::all(&set("2026-{0}", "2026-{0}"))).await.unwrap();
    let draft = f.draft(BillTo::Existing(f.client), "2026-11-22", &[("Work", "10", "1")]);
    match f.billing.create_invoice(draft).await {
        Err(CreateInvoiceError::NumberTaken(taken)) => assert_eq!(taken.number.as_str(), "2026-1"),
        other => panic!("expected the number to be taken, got {other:?}"),
    }
    assert_eq!(f.serials().await, [1]);
    // Its count was given back: the next pattern's first number is 1.
    f.billing.set_numbering(f.team, &NumberingChange::all(&set("R-{0}", "2026-{0}"))).await.unwrap();
    assert_eq!(f.invoice("2026-11-22").await.number.as_str(), "R-1");
    let refused = f.billing.issue_credit_note(f.team, invoice.id, note_at("2026-11-23T10:00:00Z")).await;
    match refused {
        Err(LedgerError::NumberTaken(taken)) => assert_eq!(taken.number.as_str(), "2026-1"),
        other => panic!("expected the credit note's number to be taken, got {other:?}"),
    }
    let notes =
        f.billing.list_credit_notes(f.team, &billing::credit::CreditNoteFilter::default()).await.unwrap();
    assert_eq!(notes.len(), 1);
}

pub async fn yearly_counts_stay_gapless_under_concurrency(store: Ports) {
    let f = Arc::new(fixture(store).await);
    let numbering = Numbering { invoices: pattern("{YYYY}-{0000}"), ..Numbering::default() };
    f.billing.set_numbering(f.team, &NumberingChange::all(&numbering)).await.unwrap();
    let tasks: Vec<_> = (0..8)
        .map(|task| {
            let f = f.clone();
            tokio::spawn(async move {
                for made in 0..6 {
                    let issued = if (task + made) % 2 == 0 { "2026-11-20" } else { "2027-02-01" };
                    let draft = f.draft(BillTo::Existing(f.client), issued, &[("Work", "10", "1")]);
                    f.billing.create_invoice(draft).await.unwrap();
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    let numbers = numbers_listed(&f.billing, f.team, &InvoiceFilter::default()).await;
    let expected: Vec<String> =
        ["2026", "2027"].iter().flat_map(|year| (1..=24).map(move |n| format!("{year}-{n:04}"))).collect();
    assert_eq!(numbers, expected);
}

pub async fn changes_of_different_series_all_hold(store: Ports) {
    let f = Arc::new(fixture(store).await);
    let one = |series: Series, text: &str| {
        let mut change = NumberingChange::default();
        change.set(series, pattern(text));
        change
    };
    // Set at once, each naming its own series: none undoes another.
    let changes = [
        one(Series::Invoices, "R{YY}-{000}"),
        one(Series::CreditNotes, "G{YY}-{000}"),
        one(Series::Quotes, "A{YY}-{000}"),
    ];
    let tasks: Vec<_> = changes
        .into_iter()
        .map(|change| {
            let f = f.clone();
            tokio::spawn(async move { f.billing.set_numbering(f.team, &change).await.unwrap() })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    let expected = Numbering {
        invoices: pattern("R{YY}-{000}"),
        credit_notes: pattern("G{YY}-{000}"),
        quotes: pattern("A{YY}-{000}"),
    };
    assert_eq!(f.billing.numbering(f.team).await.unwrap(), expected);
    // A change naming no series changes nothing.
    f.billing.set_numbering(f.team, &NumberingChange::default()).await.unwrap();
    assert_eq!(f.billing.numbering(f.team).await.unwrap(), expected);
}
