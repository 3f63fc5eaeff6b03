//! The ledger port's contract: every write of an invoice's books plays its ledger under
//! the invoice's lock and keeps the balance and status the ledger gives; credit notes take
//! serials of their own; what clients owe sums by age.

use billing::credit::{CreditLines, CreditNoteFilter, CreditNoteId, NewCreditNote};
use billing::invoice::{Description, price_lines};
use billing::ledger::{EntryAmount, EntryFilter, EntryKind, LedgerRule, NewEntry};
use billing::money::{Decimal, parse_decimal};
use billing::receivables::Age;
use billing::store::{BillTo, DeleteInvoiceError, LedgerError, SaveInvoiceError, StatusWrite};
use billing::{Invoice, InvoiceStatus, LedgerEntryId, LineInput, TaxRule, Totals};
use chrono::{NaiveDate, TimeDelta};
use kernel::Id;

use crate::Ports;
use crate::invoices::{Fixture, at, entry, eur, fixture, fixture_for};

fn d(text: &str) -> Decimal {
    parse_decimal(text).unwrap()
}

fn day(text: &str) -> NaiveDate {
    NaiveDate::parse_from_str(text, "%Y-%m-%d").unwrap()
}

fn pay(amount: &str, on: &str) -> NewEntry {
    entry(EntryKind::Payment, EntryAmount::Exactly(d(amount)), on)
}

fn refund(amount: &str, on: &str) -> NewEntry {
    entry(EntryKind::Refund, EntryAmount::Exactly(d(amount)), on)
}

/// An invoice of the fixture's client for exactly `total` (one line, no tax).
async fn invoice_of(f: &Fixture, total: &str, issued: &str) -> Invoice {
    let mut draft = f.draft(BillTo::Existing(f.client), issued, &[("Work", total, "1")]);
    draft.tax_rule = TaxRule::Flat(Decimal::ZERO);
    draft.totals =
        Totals::compute(&draft.line_items, &billing::Vat::default(), draft.tax_rule, None, eur()).unwrap();
    f.billing.create_invoice(draft).await.unwrap()
}

fn rule(result: Result<impl std::fmt::Debug, LedgerError>) -> LedgerRule {
    match result {
        Err(LedgerError::Rule(rule)) => rule,
        other => panic!("expected a refusal of the books, got {other:?}"),
    }
}

pub async fn payments_move_the_balance_and_the_status(store: Ports) {
    let f = fixture(store).await;
    let invoice = invoice_of(&f, "100.00", "2026-11-01").await;
    assert_eq!((invoice.status, invoice.balance.due()), (InvoiceStatus::Pending, d("100.00")));
    let (first, after) =
        f.billing.record_entry(f.team, invoice.id, pay("29.21", "2026-11-05")).await.unwrap();
    assert_eq!((first.amount, first.invoice_id, first.kind), (d("29.21"), invoice.id, EntryKind::Payment));
    assert_eq!(
        (after.status, after.balance.paid, after.balance.due()),
        (InvoiceStatus::PaidPartial, d("29.21"), d("70.79"))
    );
    assert_eq!(
        rule(f.billing.record_entry(f.team, invoice.id, pay("70.80", "2026-11-06")).await),
        LedgerRule::ExceedsDue { due: d("70.79") }
    );
    let (rest, paid) = f
        .billing
        .record_entry(f.team, invoice.id, entry(EntryKind::Payment, EntryAmount::AllDue, "2026-11-07"))
        .await
        .unwrap();
    assert_eq!(rest.amount, d("70.79"));
    assert_eq!(
        (paid.status, paid.balance.due(), paid.balance.paid_on),
        (InvoiceStatus::Paid, Decimal::ZERO, Some(day("2026-11-07")))
    );
    // What is stored is what was answered, and the refused payment left nothing behind.
    assert_eq!(f.billing.get_invoice(f.team, invoice.id).await.unwrap(), Some(paid));
    let listed = f
        .billing
        .list_entries(f.team, &EntryFilter { invoice: Some(invoice.id), ..Default::default() })
        .await
        .unwrap();
    assert_eq!(listed, [rest.clone(), first.clone()], "newest day first");
    assert_eq!(f.billing.get_entry(f.team, first.id).await.unwrap(), Some(first));
    assert!(matches!(
        f.billing.record_entry(f.team, billing::InvoiceId::generate(), pay("1", "2026-11-07")).await,
        Err(LedgerError::NotFound)
    ));
    assert_eq!(
        rule(f.billing.record_entry(f.team, invoice.id, pay("0.001", "2026-11-07")).await),
        LedgerRule::FinerThanCurrency { currency: eur(), places: 2 }
    );
}

pub async fn refunds_voids_and_write_offs_keep_the_books(store: Ports) {
    let f = fixture(store).await;
    let invoice = invoice_of(&f, "100.00", "2026-11-01").await;
    let (payment, _) = f.billing.record_entry(f.team, invoice.id, pay("60.00", "2026-11-02")).await.unwrap();
    assert_eq!(
        rule(f.billing.record_entry(f.team, invoice.id, refund("60.01", "2026-11-03")).await),
        LedgerRule::ExceedsPaid { paid: d("60.00") }
    );
    let (given_back, after) =
        f.billing.record_entry(f.team, invoice.id, refund("20.00", "2026-11-03")).await.unwrap();
    assert_eq!(
        (after.balance.paid, after.balance.due(), after.status),
        (d("40.00"), d("60.00"), InvoiceStatus::PaidPartial)
    );
    // Voiding the payment would leave the refund unbacked.
    let now = at("2026-11-04T09:00:00Z");
    assert!(matches!(
        rule(f.billing.void_entry(f.team, payment.id, None, now).await),
        LedgerRule::VoidBreaks(_)
    ));
    let reason = billing::ledger::Notes::parse("entered twice").unwrap();
    let (voided, after) =
        f.billing.void_entry(f.team, given_back.id, Some(reason.clone()), now).await.unwrap();
    assert_eq!((voided.voided_at, voided.void_reason), (Some(now), Some(reason)));
    assert_eq!((after.balance.paid, after.status), (d("60.00"), InvoiceStatus::PaidPartial));
    assert_eq!(rule(f.billing.void_entry(f.team, given_back.id, None, now).await), LedgerRule::AlreadyVoided);
    assert!(matches!(
        f.billing.void_entry(f.team, LedgerEntryId::generate(), None, now).await,
        Err(LedgerError::NotFound)
    ));
    // The voided refund stays listed.
    let listed = f.billing.list_entries(f.team, &EntryFilter::default()).await.unwrap();
    assert_eq!(listed.len(), 2);
    assert!(listed.iter().any(|e| e.id == given_back.id && e.voided_at == Some(now)));
    // Writing off forgives what is due.
    let (written_off, after) = f
        .billing
        .record_entry(f.team, invoice.id, entry(EntryKind::WriteOff, EntryAmount::AllDue, "2026-11-05"))
        .await
        .unwrap();
    assert_eq!(
        (written_off.amount, after.status, after.balance.due()),
        (d("40.00"), InvoiceStatus::Expired, Decimal::ZERO)
    );
    assert_eq!(
        rule(
            f.billing
                .record_entry(
                    f.team,
                    invoice.id,
                    entry(EntryKind::WriteOff, EntryAmount::AllDue, "2026-11-05")
                )
                .await
        ),
        LedgerRule::NothingDue
    );
    // An invoice with books is kept.
    assert!(matches!(
        f.billing.delete_invoice(f.team, invoice.id, chrono::Utc::now()).await,
        Err(DeleteInvoiceError::HasMoney)
    ));
    assert!(f.billing.get_invoice(f.team, invoice.id).await.unwrap().is_some());
}

pub async fn updates_keep_the_total_above_what_was_recorded(store: Ports) {
    let f = fixture(store).await;
    let invoice = invoice_of(&f, "100.00", "2026-11-01").await;
    f.billing.record_entry(f.team, invoice.id, pay("80.00", "2026-11-02")).await.unwrap();
    let current = f.billing.get_invoice(f.team, invoice.id).await.unwrap().unwrap();
    let lower = |amount: &str| {
        let line_items = price_lines(
            vec![LineInput {
                discount: None,
                description: Description::parse("Work").unwrap(),
                unit_price: d(amount),
                quantity: Decimal::ONE,
                amount: None,
                unit_code: None,
                vat: billing::LineVat::default(),
            }],
            eur(),
            at("2026-11-03"),
        )
        .unwrap();
        let totals =
            Totals::compute(&line_items, &billing::Vat::default(), current.tax_rule, None, eur()).unwrap();
        Invoice { line_items, totals, updated_at: at("2026-11-03"), ..current.clone() }
    };
    let refused = f.billing.replace_invoice(&lower("79.99"), true, StatusWrite::Keep).await;
    assert!(
        matches!(refused, Err(SaveInvoiceError::Ledger(LedgerRule::TotalBelowRecorded { ref recorded, .. })) if *recorded == d("80.00")),
        "{refused:?}"
    );
    assert_eq!(
        f.billing.get_invoice(f.team, invoice.id).await.unwrap(),
        Some(current.clone()),
        "nothing changed"
    );
    // Down to what was paid: the invoice is PAID.
    let settled = f.billing.replace_invoice(&lower("80.00"), true, StatusWrite::Keep).await.unwrap();
    assert_eq!((settled.status, settled.balance.due()), (InvoiceStatus::Paid, Decimal::ZERO));
    // PENDING is refused once money was recorded.
    let pending = f.billing.replace_invoice(&settled, false, StatusWrite::Pending).await;
    assert!(matches!(pending, Err(SaveInvoiceError::Ledger(LedgerRule::MoneyRecorded))), "{pending:?}");
    // PAID asked of a PAID invoice does nothing; EXPIRED asked of it is refused.
    let again = entry(EntryKind::Payment, EntryAmount::AllDue, "2026-11-04");
    assert_eq!(
        f.billing.replace_invoice(&settled, false, StatusWrite::Settle(again)).await.unwrap().balance,
        settled.balance
    );
    let expire = entry(EntryKind::WriteOff, EntryAmount::AllDue, "2026-11-04");
    let refused = f.billing.replace_invoice(&settled, false, StatusWrite::Settle(expire)).await;
    assert!(matches!(refused, Err(SaveInvoiceError::Ledger(LedgerRule::NothingDue))), "{refused:?}");
    // A status given on create is recorded in the invoice's own transaction.
    let mut paid_draft = f.draft(BillTo::Existing(f.client), "2026-11-05", &[("Work", "10", "1")]);
    paid_draft.opening = Some(entry(EntryKind::Payment, EntryAmount::AllDue, "2026-11-05"));
    let paid = f.billing.create_invoice(paid_draft).await.unwrap();
    assert_eq!((paid.status, paid.balance.paid), (InvoiceStatus::Paid, paid.totals.total));
    let listed = f
        .billing
        .list_entries(f.team, &EntryFilter { invoice: Some(paid.id), ..Default::default() })
        .await
        .unwrap();
    assert_eq!(listed.len(), 1);
}

pub async fn credit_notes_take_their_own_serials_and_lower_what_is_due(store: Ports) {
    let f = fixture(store).await;
    let invoice = invoice_of(&f, "100.00", "2026-11-01").await;
    f.billing.record_entry(f.team, invoice.id, pay("80.00", "2026-11-02")).await.unwrap();
    let note = |lines: CreditLines, minute: u32| NewCreditNote {
        id: CreditNoteId::generate(),
        lines,
        reason: None,
        created_at: at("2026-11-03T10:00:00Z") + TimeDelta::minutes(i64::from(minute)),
    };
    let part = CreditLines::Lines(vec![LineInput {
        discount: None,
        description: Description::parse("Not delivered").unwrap(),
        unit_price: d("50"),
        quantity: Decimal::ONE,
        amount: None,
        unit_code: None,
        vat: billing::LineVat::default(),
    }]);
    let (first, after) =
        f.billing.issue_credit_note(f.team, invoice.id, note(part.clone(), 0)).await.unwrap();
    assert_eq!(first.number.to_string(), "CN-0001");
    assert_eq!((&first.invoice_number, first.totals.total), (&invoice.number, d("50.00")));
    assert_eq!((first.application.applied, first.application.refundable), (d("20.00"), d("30.00")));
    assert_eq!(
        (after.balance.credited, after.balance.due(), after.status),
        (d("20.00"), Decimal::ZERO, InvoiceStatus::Paid)
    );
    // Refunds pay the refundable credit out first, in the order they were written even when
    // the writer's clock says otherwise (here a day behind the note's).
    let (_, after) = f.billing.record_entry(f.team, invoice.id, refund("30.00", "2026-11-02")).await.unwrap();
    assert_eq!(
        (after.balance.paid, after.balance.credited, after.balance.due()),
        (d("50.00"), d("50.00"), Decimal::ZERO)
    );
    let (_, after) = f.billing.record_entry(f.team, invoice.id, refund("10.00", "2026-11-02")).await.unwrap();
    assert_eq!(
        (after.balance.paid, after.balance.credited, after.balance.due(), after.status),
        (d("40.00"), d("50.00"), d("10.00"), InvoiceStatus::PaidPartial)
    );
    // All of an invoice's credit notes stay within its total.
    let too_much = CreditLines::Lines(vec![LineInput {
        discount: None,
        description: Description::parse("More").unwrap(),
        unit_price: d("50.01"),
        quantity: Decimal::ONE,
        amount: None,
        unit_code: None,
        vat: billing::LineVat::default(),
    }]);
    assert_eq!(
        rule(f.billing.issue_credit_note(f.team, invoice.id, note(too_much, 1)).await),
        LedgerRule::CreditExceedsTotal { credited: d("100.01"), total: d("100.00") }
    );
    // A refused note gives its serial back.
    let other = invoice_of(&f, "40.00", "2026-11-05").await;
    let (full, credited) =
        f.billing.issue_credit_note(f.team, other.id, note(CreditLines::Full, 2)).await.unwrap();
    assert_eq!((full.number.to_string(), full.totals.total), ("CN-0002".to_owned(), d("40.00")));
    assert_eq!((credited.status, credited.balance.due()), (InvoiceStatus::Expired, Decimal::ZERO));
    assert_eq!(f.billing.get_credit_note(f.team, first.id).await.unwrap(), Some(first.clone()));
    assert_eq!(f.billing.find_credit_note(full.id).await.unwrap(), Some(full.clone()));
    let listed = f.billing.list_credit_notes(f.team, &CreditNoteFilter::default()).await.unwrap();
    assert_eq!(listed, [full.clone(), first.clone()], "newest serial first");
    let of_invoice = CreditNoteFilter { invoice: Some(invoice.id), ..Default::default() };
    assert_eq!(f.billing.list_credit_notes(f.team, &of_invoice).await.unwrap(), std::slice::from_ref(&first));
    let after_full =
        CreditNoteFilter { before_serial: Some(full.serial), limit: Some(1), ..Default::default() };
    assert_eq!(f.billing.list_credit_notes(f.team, &after_full).await.unwrap(), std::slice::from_ref(&first));
    // By the instant they were issued: from is inclusive, before exclusive.
    let full_issued = Some(full.issue_date);
    let from_full = CreditNoteFilter { issued_from: full_issued, ..Default::default() };
    assert_eq!(f.billing.list_credit_notes(f.team, &from_full).await.unwrap(), std::slice::from_ref(&full));
    let before_full = CreditNoteFilter { issued_before: full_issued, ..Default::default() };
    assert_eq!(f.billing.list_credit_notes(f.team, &before_full).await.unwrap(), [first]);
    assert!(matches!(
        f.billing.delete_invoice(f.team, other.id, chrono::Utc::now()).await,
        Err(DeleteInvoiceError::HasMoney)
    ));
}

pub async fn books_are_invisible_to_other_teams(store: Ports) {
    let f = fixture(store.clone()).await;
    let invoice = invoice_of(&f, "100.00", "2026-11-01").await;
    let (payment, _) = f.billing.record_entry(f.team, invoice.id, pay("10.00", "2026-11-02")).await.unwrap();
    let other = fixture_for(store, crate::create_team(&f.store, "Other").await).await;
    assert!(matches!(
        other.billing.record_entry(other.team, invoice.id, pay("1.00", "2026-11-02")).await,
        Err(LedgerError::NotFound)
    ));
    assert!(matches!(
        other.billing.void_entry(other.team, payment.id, None, at("2026-11-03")).await,
        Err(LedgerError::NotFound)
    ));
    assert_eq!(other.billing.get_entry(other.team, payment.id).await.unwrap(), None);
    assert!(other.billing.list_entries(other.team, &EntryFilter::default()).await.unwrap().is_empty());
    let note = NewCreditNote {
        id: CreditNoteId::generate(),
        lines: CreditLines::Full,
        reason: None,
        created_at: at("2026-11-03"),
    };
    assert!(matches!(
        other.billing.issue_credit_note(other.team, invoice.id, note).await,
        Err(LedgerError::NotFound)
    ));
    assert!(other.billing.receivables(other.team, day("2026-11-30")).await.unwrap().is_empty());
}

pub async fn concurrent_payments_are_played_one_after_the_other(store: Ports) {
    let f = fixture(store).await;
    let invoice = invoice_of(&f, "100.00", "2026-11-01").await;
    let payments = (0..20).map(|_| {
        let billing = f.billing.clone();
        let (team, id) = (f.team, invoice.id);
        tokio::spawn(async move { billing.record_entry(team, id, pay("10.00", "2026-11-02")).await })
    });
    let mut recorded = 0;
    for payment in payments.collect::<Vec<_>>() {
        match payment.await.unwrap() {
            Ok(_) => recorded += 1,
            Err(LedgerError::Rule(LedgerRule::ExceedsDue { .. })) => {}
            Err(other) => panic!("unexpected: {other:?}"),
        }
    }
    assert_eq!(recorded, 10);
    let after = f.billing.get_invoice(f.team, invoice.id).await.unwrap().unwrap();
    assert_eq!((after.balance.paid, after.status), (d("100.00"), InvoiceStatus::Paid));
}

/// Voids, payments and deletes of different invoices at once: each waits for the others'
/// writes and lands (on SQLite, a transaction that read before its first write would fail
/// with "database is locked" after another connection wrote).
pub async fn concurrent_voids_payments_and_deletes_all_land(store: Ports) {
    let f = fixture(store).await;
    let mut paid = Vec::new();
    for _ in 0..6 {
        let invoice = invoice_of(&f, "100.00", "2026-11-01").await;
        let (entry, _) =
            f.billing.record_entry(f.team, invoice.id, pay("40.00", "2026-11-02")).await.unwrap();
        paid.push((invoice.id, entry.id));
    }
    let mut spare = Vec::new();
    for _ in 0..6 {
        spare.push(invoice_of(&f, "100.00", "2026-11-01").await.id);
    }
    let mut writes = Vec::new();
    for ((invoice, entry), other) in paid.iter().copied().zip(spare.iter().copied()) {
        let (billing, team) = (f.billing.clone(), f.team);
        writes.push(tokio::spawn(async move {
            billing
                .void_entry(team, entry, None, at("2026-11-03T10:00:00Z"))
                .await
                .map(drop)
                .map_err(|e| format!("void: {e:?}"))
        }));
        let (billing, team) = (f.billing.clone(), f.team);
        writes.push(tokio::spawn(async move {
            billing
                .record_entry(team, invoice, pay("10.00", "2026-11-03"))
                .await
                .map(drop)
                .map_err(|e| format!("payment: {e:?}"))
        }));
        let (billing, team) = (f.billing.clone(), f.team);
        writes.push(tokio::spawn(async move {
            billing
                .delete_invoice(team, other, chrono::Utc::now())
                .await
                .map_err(|e| format!("delete: {e:?}"))
        }));
    }
    for write in writes {
        write.await.unwrap().unwrap();
    }
    for (invoice, _) in paid {
        let after = f.billing.get_invoice(f.team, invoice).await.unwrap().unwrap();
        assert_eq!((after.balance.paid, after.status), (d("10.00"), InvoiceStatus::PaidPartial));
    }
    for invoice in spare {
        assert_eq!(f.billing.get_invoice(f.team, invoice).await.unwrap(), None);
    }
}

pub async fn concurrent_credit_notes_take_gapless_serials(store: Ports) {
    let f = fixture(store).await;
    let mut invoices = Vec::new();
    for _ in 0..4 {
        invoices.push(invoice_of(&f, "10.00", "2026-11-01").await);
    }
    let notes = invoices.iter().map(|invoice| {
        let billing = f.billing.clone();
        let (team, id) = (f.team, invoice.id);
        tokio::spawn(async move {
            let note = NewCreditNote {
                id: CreditNoteId::generate(),
                lines: CreditLines::Full,
                reason: None,
                created_at: at("2026-11-02"),
            };
            billing.issue_credit_note(team, id, note).await.unwrap().0.serial.number()
        })
    });
    let mut serials = Vec::new();
    for note in notes.collect::<Vec<_>>() {
        serials.push(note.await.unwrap());
    }
    serials.sort_unstable();
    assert_eq!(serials, [1, 2, 3, 4]);
}

pub async fn receivables_sum_what_is_due_by_age(store: Ports) {
    let f = fixture(store).await;
    // Due 30 days after issue: on 30 December, the first is 59 days past due, the second 1,
    // the third not yet due.
    let old = invoice_of(&f, "100.00", "2026-10-02").await;
    let _recent = invoice_of(&f, "50.00", "2026-11-20").await;
    let _current = invoice_of(&f, "20.00", "2026-12-15").await;
    let settled = invoice_of(&f, "70.00", "2026-10-02").await;
    f.billing.record_entry(f.team, old.id, pay("40.00", "2026-11-02")).await.unwrap();
    f.billing.record_entry(f.team, settled.id, pay("70.00", "2026-11-02")).await.unwrap();
    let owed = f.billing.receivables(f.team, day("2026-12-30")).await.unwrap();
    assert_eq!(owed.len(), 1);
    let owed = &owed[0];
    assert_eq!((owed.client_id, owed.currency), (f.client, eur()));
    assert_eq!(owed.of(Age::Current), d("20.00"));
    assert_eq!(owed.of(Age::Days1To30), d("50.00"));
    assert_eq!(owed.of(Age::Days31To60), d("60.00"));
    assert_eq!(owed.of(Age::Days61To90), Decimal::ZERO);
    assert_eq!(owed.total(), d("130.00"));
}
