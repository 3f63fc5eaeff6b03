//! The card port's contract: a processor's payment or refund is booked once, whatever the
//! retries and however many writers race; what an invoice no longer owes becomes its
//! client's credit, which a later invoice takes; accounts are found by their token's hash.

use billing::cards::{
    Booked, CardAccount, CardPayment, CardRefund, Processor, WebhookToken, stripe_secret_key,
    stripe_webhook_secret,
};
use billing::ledger::{LedgerRule, PaymentMethod, Reference};
use billing::money::{Decimal, parse_decimal};
use billing::store::LedgerError;
use billing::{Invoice, InvoiceStatus, LedgerEntryId, TaxRule, Totals};
use chrono::NaiveDate;
use kernel::Id;
use notify::EventType;

use crate::Ports;
use crate::invoices::{Fixture, at, eur, fixture};

fn d(text: &str) -> Decimal {
    parse_decimal(text).unwrap()
}

fn reference(text: &str) -> Reference {
    Reference::parse(text).unwrap()
}

async fn invoice_of(f: &Fixture, total: &str) -> Invoice {
    let mut draft =
        f.draft(billing::store::BillTo::Existing(f.client), "2026-11-01", &[("Work", total, "1")]);
    draft.tax_rule = TaxRule::Flat(Decimal::ZERO);
    draft.totals =
        Totals::compute(&draft.line_items, &billing::Vat::default(), draft.tax_rule, None, eur()).unwrap();
    f.billing.create_invoice(draft).await.unwrap()
}

fn paid(invoice: &Invoice, intent: &str, amount: &str) -> CardPayment {
    CardPayment {
        invoice_id: invoice.id,
        reference: reference(intent),
        amount: d(amount),
        currency: eur(),
        on: NaiveDate::from_ymd_opt(2026, 11, 20).unwrap(),
    }
}

/// Stripe's report that `total` of the payment `intent` is refunded by now.
fn refunded(intent: &str, total: &str) -> CardRefund {
    CardRefund {
        payment: reference(intent),
        charge: reference(&intent.replace("pi_", "ch_")),
        refunded: d(total),
        currency: eur(),
        on: NaiveDate::from_ymd_opt(2026, 11, 21).unwrap(),
    }
}

async fn book(f: &Fixture, payment: CardPayment) -> Booked {
    f.billing
        .book_card_payment(
            f.team,
            Processor::Stripe,
            payment,
            LedgerEntryId::generate(),
            at("2026-11-20T10:00:00Z"),
        )
        .await
        .unwrap()
}

async fn report_refund(f: &Fixture, refund: CardRefund) -> Result<Booked, LedgerError> {
    f.billing
        .book_card_refund(
            f.team,
            Processor::Stripe,
            refund,
            LedgerEntryId::generate(),
            at("2026-11-21T10:00:00Z"),
        )
        .await
}

async fn credit_of(f: &Fixture) -> Vec<Decimal> {
    let balances = f.billing.credit_balances(f.team, Some(f.client)).await.unwrap();
    balances.into_iter().map(|credit| credit.amount).collect()
}

pub async fn a_card_payment_is_booked_once(store: Ports) {
    let f = fixture(store).await;
    let invoice = invoice_of(&f, "100.00").await;
    let Booked::Now { entry: Some(entry), credit, invoice: after } =
        book(&f, paid(&invoice, "pi_1", "100.00")).await
    else {
        panic!("the first report books")
    };
    assert_eq!(
        (entry.amount, entry.method, entry.reference),
        (d("100.00"), PaymentMethod::Card, Some(reference("pi_1")))
    );
    assert_eq!((credit, after.status), (Decimal::ZERO, InvoiceStatus::Paid));
    // Stripe's retry, and the PaymentIntent's own event: the same payment.
    assert_eq!(book(&f, paid(&invoice, "pi_1", "100.00")).await, Booked::Already);
    assert_eq!(f.billing.get_invoice(f.team, invoice.id).await.unwrap(), Some(*after));
    assert!(credit_of(&f).await.is_empty());
}

pub async fn money_beyond_what_is_due_becomes_the_clients_credit(store: Ports) {
    let f = fixture(store).await;
    let first = invoice_of(&f, "100.00").await;
    let second = invoice_of(&f, "50.00").await;
    book(&f, paid(&first, "pi_1", "60.00")).await;
    // The client paid again in full: 40 settles the invoice, 60 is credit.
    let Booked::Now { entry: Some(entry), credit, invoice } = book(&f, paid(&first, "pi_2", "100.00")).await
    else {
        panic!("booked")
    };
    assert_eq!((entry.amount, credit, invoice.status), (d("40.00"), d("60.00"), InvoiceStatus::Paid));
    // A paid invoice takes nothing: all of it is credit.
    let Booked::Now { entry: None, credit, .. } = book(&f, paid(&first, "pi_3", "5.00")).await else {
        panic!("booked as credit only")
    };
    assert_eq!((credit, credit_of(&f).await), (d("5.00"), vec![d("65.00")]));
    let kinds: Vec<EventType> =
        f.store.notify().list_events(f.team, 100).await.unwrap().iter().map(|event| event.kind).collect();
    assert_eq!(kinds.iter().filter(|kind| **kind == EventType::InvoiceOverpaid).count(), 2);
    // The credit pays the second invoice, never beyond what the client holds or what is due.
    let now = at("2026-11-22T10:00:00Z");
    let (entry, second) =
        f.billing.apply_credit(f.team, second.id, d("50.00"), LedgerEntryId::generate(), now).await.unwrap();
    assert_eq!((entry.amount, second.status), (d("50.00"), InvoiceStatus::Paid));
    assert_eq!(credit_of(&f).await, vec![d("15.00")]);
    let third = invoice_of(&f, "20.00").await;
    let short = f.billing.apply_credit(f.team, third.id, d("15.01"), LedgerEntryId::generate(), now).await;
    assert!(
        matches!(short, Err(LedgerError::Rule(LedgerRule::CreditShort { available })) if available == d("15.00"))
    );
    assert_eq!(credit_of(&f).await, vec![d("15.00")]);
    // Another team sees none of it.
    let other = fixture(f.store.clone()).await;
    assert!(other.billing.credit_balances(other.team, None).await.unwrap().is_empty());
}

pub async fn a_card_refund_gives_back_the_credit_first_once(store: Ports) {
    let f = fixture(store).await;
    let invoice = invoice_of(&f, "100.00").await;
    book(&f, paid(&invoice, "pi_1", "130.00")).await;
    assert_eq!(credit_of(&f).await, vec![d("30.00")]);
    let refund = |total: &str| report_refund(&f, refunded("pi_1", total));
    let Ok(Booked::Now { entry: Some(entry), credit, invoice: after }) = refund("50.00").await else {
        panic!("booked")
    };
    assert_eq!((credit, entry.amount, after.status), (d("30.00"), d("20.00"), InvoiceStatus::PaidPartial));
    assert_eq!(entry.reference, Some(reference("ch_1")));
    assert!(credit_of(&f).await.is_empty());
    // The same total again, or an earlier one arriving late: nothing more.
    assert_eq!(refund("50.00").await.unwrap(), Booked::Already);
    assert_eq!(refund("10.00").await.unwrap(), Booked::Already);
    // A second refund: what the total grew by.
    let Ok(Booked::Now { entry: Some(entry), .. }) = refund("60.00").await else { panic!("booked") };
    assert_eq!(entry.amount, d("10.00"));
    assert!(matches!(refund("131.00").await, Err(LedgerError::Rule(LedgerRule::ExceedsPaid { .. }))));
    let unknown = report_refund(&f, refunded("pi_unknown", "1.00")).await;
    assert!(matches!(unknown, Err(LedgerError::NotFound)));
}

pub async fn a_payment_in_another_currency_is_credit_in_that_currency_and_so_is_its_refund(store: Ports) {
    let f = fixture(store).await;
    let invoice = invoice_of(&f, "100.00").await;
    let chf = billing::money::Currency::parse("CHF").unwrap();
    let francs = CardPayment { currency: chf, ..paid(&invoice, "pi_chf", "30.00") };
    let Booked::Now { entry: None, credit, invoice: after } = book(&f, francs).await else {
        panic!("all of it is credit")
    };
    assert_eq!((credit, after.status), (d("30.00"), InvoiceStatus::Pending));
    let held = |f: &Fixture| {
        let billing = f.billing.clone();
        let (team, client) = (f.team, f.client);
        async move {
            let balances = billing.credit_balances(team, Some(client)).await.unwrap();
            balances.into_iter().map(|credit| (credit.currency, credit.amount)).collect::<Vec<_>>()
        }
    };
    assert_eq!(held(&f).await, vec![(chf, d("30.00"))]);
    let refund = |total: &str| report_refund(&f, CardRefund { currency: chf, ..refunded("pi_chf", total) });
    let Ok(Booked::Now { entry: None, credit, .. }) = refund("10.00").await else {
        panic!("from the credit")
    };
    assert_eq!((credit, held(&f).await), (d("10.00"), vec![(chf, d("20.00"))]));
    // Beyond the payment's credit it would go on a euro invoice it never paid: refused, nothing written.
    assert!(matches!(refund("35.00").await, Err(LedgerError::Rule(LedgerRule::ExceedsPaid { .. }))));
    assert_eq!(held(&f).await, vec![(chf, d("20.00"))]);
    let euros = f.billing.get_invoice(f.team, invoice.id).await.unwrap().unwrap();
    assert_eq!((euros.balance.paid, euros.status), (Decimal::ZERO, InvoiceStatus::Pending));
}

pub async fn concurrent_reports_of_one_payment_book_it_once(store: Ports) {
    let f = fixture(store).await;
    let invoice = invoice_of(&f, "100.00").await;
    let reports = (0..12).map(|_| {
        let billing = f.billing.clone();
        let (team, payment) = (f.team, paid(&invoice, "pi_race", "100.00"));
        tokio::spawn(async move {
            billing
                .book_card_payment(
                    team,
                    Processor::Stripe,
                    payment,
                    LedgerEntryId::generate(),
                    at("2026-11-20T10:00:00Z"),
                )
                .await
        })
    });
    let mut booked = 0;
    for report in reports.collect::<Vec<_>>() {
        match report.await.unwrap().unwrap() {
            Booked::Now { .. } => booked += 1,
            Booked::Already => {}
        }
    }
    assert_eq!(booked, 1);
    let after = f.billing.get_invoice(f.team, invoice.id).await.unwrap().unwrap();
    assert_eq!((after.balance.paid, after.status), (d("100.00"), InvoiceStatus::Paid));
    assert!(credit_of(&f).await.is_empty());
}

pub async fn card_accounts_are_found_by_their_tokens_hash(store: Ports) {
    let f = fixture(store).await;
    let token = WebhookToken::generate();
    let account = CardAccount {
        team_id: f.team,
        processor: Processor::Stripe,
        secret_key: stripe_secret_key("sk_test_one").unwrap(),
        webhook_secret: stripe_webhook_secret("whsec_one").unwrap(),
        token_hash: token.hash(),
        created_at: at("2026-11-20T10:00:00Z"),
        updated_at: at("2026-11-20T10:00:00Z"),
    };
    f.billing.connect_card_account(&account).await.unwrap();
    assert_eq!(f.billing.card_account_by_token(token.hash()).await.unwrap(), Some(account.clone()));
    // Connected again: new secrets and token, the first connection's time kept.
    let again = WebhookToken::generate();
    let replaced = CardAccount {
        secret_key: stripe_secret_key("sk_test_two").unwrap(),
        token_hash: again.hash(),
        created_at: at("2026-11-21T10:00:00Z"),
        updated_at: at("2026-11-21T10:00:00Z"),
        ..account.clone()
    };
    f.billing.connect_card_account(&replaced).await.unwrap();
    assert_eq!(f.billing.card_account_by_token(token.hash()).await.unwrap(), None);
    let kept = CardAccount { created_at: account.created_at, ..replaced };
    assert_eq!(f.billing.card_account(f.team, Processor::Stripe).await.unwrap(), Some(kept));
    let other = fixture(f.store.clone()).await;
    assert_eq!(other.billing.card_account(other.team, Processor::Stripe).await.unwrap(), None);
    assert!(f.billing.disconnect_card_account(f.team, Processor::Stripe).await.unwrap());
    assert!(!f.billing.disconnect_card_account(f.team, Processor::Stripe).await.unwrap());
    assert_eq!(f.billing.card_account_by_token(again.hash()).await.unwrap(), None);
}
