//! The quote port's contract, driven through the quote use cases: drafts that change until
//! they are numbered, numbers gapless under concurrency, decisions made once, and
//! conversions that make their invoice once however many race.

use std::sync::Arc;

use accounts::AccountStore;
use billing::invoice::Description;
use billing::money::parse_decimal;
use billing::quote::{
    ConversionKind, ConversionMode, DecisionSource, DepositSize, Quote, QuoteRule, QuoteStatus, SignerName,
    Verdict,
};
use billing::quoting::{self, QuoteChanges, QuoteDraft, QuoteError, QuoteFilter};
use billing::service::BillingError;
use billing::store::DeleteInvoiceError;
use billing::{BillingStore, Discount, Invoice, InvoiceFilter, LineVat};
use chrono::{DateTime, TimeDelta, Utc};
use kernel::Id;

use crate::invoices::{Fixture, at, fixture, lines};
use crate::{Ports, create_team};

fn d(text: &str) -> billing::money::Decimal {
    parse_decimal(text).unwrap()
}

const NOW: &str = "2026-11-20T10:00:00Z";

/// 1,000.00 at 19 % and 500.00 at 7 %, valid to the end of the year.
fn draft(f: &Fixture) -> QuoteDraft {
    let mut items = lines(&[("Workshop", "500", "2"), ("Book", "50", "10")]);
    items[1].vat = LineVat { percentage: Some(d("7")), ..LineVat::default() };
    QuoteDraft {
        client_id: f.client,
        line_items: items,
        description: Some(Description::parse("Workshop and books").unwrap()),
        notes: Some(billing::quote::QuoteNotes::parse("Valid for 30 days.").unwrap()),
        valid_until: Some(at("2026-12-31T23:59:59Z")),
        tax_percentage: Some(d("19")),
        tax: None,
        vat: None,
        exchange_rate: None,
        discount: None,
        supersedes: None,
    }
}

fn accounts(f: &Fixture) -> Arc<dyn AccountStore> {
    f.store.accounts()
}

async fn create(f: &Fixture) -> Quote {
    quoting::create_quote(&*f.billing, &*accounts(f), f.team, draft(f), at(NOW)).await.unwrap()
}

async fn accepted(f: &Fixture) -> Quote {
    let quote = create(f).await;
    quoting::finalize_quote(&*f.billing, f.team, quote.id, at(NOW)).await.unwrap();
    let signer = SignerName::parse("Zoë Łukasiewicz").unwrap();
    quoting::decide_quote(
        &*f.billing,
        f.team,
        quote.id,
        Verdict::Accepted { signer },
        DecisionSource::Team,
        at("2026-11-21T09:00:00Z"),
    )
    .await
    .unwrap()
}

async fn convert(f: &Fixture, quote: &Quote, mode: ConversionMode) -> Result<(Quote, Invoice), QuoteError> {
    let billing: &dyn BillingStore = &*f.billing;
    quoting::convert_quote(billing, &*accounts(f), f.team, quote.id, mode, at("2026-11-22T09:00:00Z")).await
}

/// What each of `tasks` answered, in order.
async fn all<T>(tasks: impl IntoIterator<Item = tokio::task::JoinHandle<T>>) -> Vec<T> {
    let tasks: Vec<_> = tasks.into_iter().collect();
    let mut answers = Vec::with_capacity(tasks.len());
    for task in tasks {
        answers.push(task.await.unwrap());
    }
    answers
}

fn rule(error: QuoteError) -> QuoteRule {
    match error {
        QuoteError::Rule(rule) => rule,
        other => panic!("expected a rule of quotes, got {other:?}"),
    }
}

pub async fn quotes_round_trip_change_while_drafts_and_stay_in_their_team(store: Ports) {
    let f = fixture(store).await;
    let quote = create(&f).await;
    assert_eq!((quote.number.as_ref(), quote.status_at(at(NOW))), (None, QuoteStatus::Draft));
    assert_eq!(
        (quote.totals.subtotal, quote.totals.tax, quote.totals.total),
        (d("1500.00"), d("225.00"), d("1725.00"))
    );
    let stored = f.billing.get_quote(f.team, quote.id).await.unwrap().unwrap();
    assert_eq!(stored, quote);
    assert_eq!(f.billing.find_quote(quote.id).await.unwrap(), Some(quote.clone()));
    let other = create_team(&f.store, "Other").await;
    assert_eq!(f.billing.get_quote(other, quote.id).await.unwrap(), None);
    assert!(f.billing.list_quotes(other, &QuoteFilter::default()).await.unwrap().is_empty());

    let shorter = QuoteChanges {
        line_items: Some(lines(&[("Workshop, one day", "800", "1")])),
        discount: Some(Some(Discount::percentage(d("10")).unwrap())),
        valid_until: Some(None),
        ..QuoteChanges::default()
    };
    let later = at("2026-11-20T11:00:00Z");
    let changed =
        quoting::update_quote(&*f.billing, &*accounts(&f), f.team, quote.id, shorter, later).await.unwrap();
    assert_eq!((changed.totals.discount_total, changed.totals.total), (d("80.00"), d("856.80")));
    assert_eq!(
        (changed.valid_until, changed.line_items.len(), changed.created_at),
        (None, 1, quote.created_at)
    );
    assert_eq!(f.billing.get_quote(f.team, quote.id).await.unwrap().unwrap(), changed);

    let unknown = QuoteDraft { client_id: billing::ClientId::generate(), ..draft(&f) };
    let refused =
        quoting::create_quote(&*f.billing, &*accounts(&f), f.team, unknown, at(NOW)).await.unwrap_err();
    assert!(matches!(rule(refused), QuoteRule::Invoice(billing::InvoiceRule::UnknownClient)));

    quoting::delete_quote(&*f.billing, f.team, quote.id, later).await.unwrap();
    assert_eq!(f.billing.get_quote(f.team, quote.id).await.unwrap(), None);
}

pub async fn a_quote_is_numbered_once_and_then_never_changes(store: Ports) {
    let f = fixture(store).await;
    let quote = create(&f).await;
    let (sent, numbered) = quoting::finalize_quote(&*f.billing, f.team, quote.id, at(NOW)).await.unwrap();
    assert!(numbered);
    assert_eq!((sent.number.as_ref().unwrap().as_str(), sent.sent_at), ("Q-0001", Some(at(NOW))));
    assert_eq!(sent.status_at(at(NOW)), QuoteStatus::Sent);
    let again =
        quoting::finalize_quote(&*f.billing, f.team, quote.id, at("2026-11-21T00:00:00Z")).await.unwrap();
    assert_eq!(again, (sent.clone(), false));
    assert_eq!(f.billing.get_quote(f.team, quote.id).await.unwrap().unwrap(), sent);

    let changes = QuoteChanges { notes: Some(None), ..QuoteChanges::default() };
    let refused = quoting::update_quote(&*f.billing, &*accounts(&f), f.team, quote.id, changes, at(NOW))
        .await
        .unwrap_err();
    assert_eq!(rule(refused), QuoteRule::NotADraft { status: QuoteStatus::Sent });
    let refused = quoting::delete_quote(&*f.billing, f.team, quote.id, at(NOW)).await.unwrap_err();
    assert_eq!(rule(refused), QuoteRule::NotADraft { status: QuoteStatus::Sent });

    // A new version supersedes it; the old one stays as it was.
    let version = QuoteDraft { supersedes: Some(quote.id), ..draft(&f) };
    let newer = quoting::create_quote(&*f.billing, &*accounts(&f), f.team, version, at(NOW)).await.unwrap();
    assert_eq!(newer.supersedes, Some(quote.id));
    let (newer, _) = quoting::finalize_quote(&*f.billing, f.team, newer.id, at(NOW)).await.unwrap();
    assert_eq!(newer.number.unwrap().as_str(), "Q-0002");
    assert_eq!(f.billing.get_quote(f.team, quote.id).await.unwrap().unwrap(), sent);
}

pub async fn concurrent_finalisations_number_quotes_without_gaps(store: Ports) {
    let f = Arc::new(fixture(store).await);
    let mut quotes = Vec::new();
    for _ in 0..50 {
        quotes.push(create(&f).await.id);
    }
    let finalising = quotes.into_iter().map(|id| {
        let f = f.clone();
        tokio::spawn(async move { quoting::finalize_quote(&*f.billing, f.team, id, at(NOW)).await.unwrap() })
    });
    let mut numbers: Vec<String> = Vec::new();
    for (quote, numbered) in all(finalising).await {
        assert!(numbered);
        numbers.push(quote.number.unwrap().as_str().to_owned());
    }
    numbers.sort();
    let expected: Vec<String> = (1..=50).map(|n| format!("Q-{n:04}")).collect();
    assert_eq!(numbers, expected);
}

pub async fn a_decision_is_made_once_on_a_sent_quote_still_valid(store: Ports) {
    let f = Arc::new(fixture(store).await);
    let quote = create(&f).await;
    let decide = |id, verdict, at: DateTime<Utc>| {
        let f = f.clone();
        async move {
            let page = DecisionSource::Page { ip: "203.0.113.7".into(), user_agent: "Mozilla/5.0".into() };
            quoting::decide_quote(&*f.billing, f.team, id, verdict, page, at).await
        }
    };
    let accept = || Verdict::Accepted { signer: SignerName::parse("Zoë").unwrap() };
    let refused = decide(quote.id, accept(), at(NOW)).await.unwrap_err();
    assert_eq!(rule(refused), QuoteRule::NotSent);
    quoting::finalize_quote(&*f.billing, f.team, quote.id, at(NOW)).await.unwrap();

    let racing = (0..10).map(|n| {
        let verdict = if n % 2 == 0 { accept() } else { Verdict::Declined { reason: None } };
        tokio::spawn(decide(quote.id, verdict, at("2026-11-21T09:00:00Z")))
    });
    let outcomes: Vec<_> = all(racing).await;
    let decided: Vec<&Quote> = outcomes.iter().filter_map(|o| o.as_ref().ok()).collect();
    assert_eq!(decided.len(), 1, "one decision of ten racing is recorded");
    let stored = f.billing.get_quote(f.team, quote.id).await.unwrap().unwrap();
    assert_eq!(&stored, decided[0]);
    let decision = stored.decision.clone().unwrap();
    assert_eq!(decision.at, at("2026-11-21T09:00:00Z"));
    assert_eq!(
        decision.source,
        DecisionSource::Page { ip: "203.0.113.7".into(), user_agent: "Mozilla/5.0".into() }
    );
    let refused = decide(quote.id, accept(), at("2026-11-21T10:00:00Z")).await.unwrap_err();
    assert_eq!(rule(refused), QuoteRule::AlreadyDecided);

    // Past its date, undecided, it reads EXPIRED and takes no decision.
    let late = create(&f).await;
    quoting::finalize_quote(&*f.billing, f.team, late.id, at(NOW)).await.unwrap();
    let expired = f.billing.get_quote(f.team, late.id).await.unwrap().unwrap();
    assert_eq!(expired.status_at(at("2027-01-01T00:00:00Z")), QuoteStatus::Expired);
    let refused = decide(late.id, accept(), at("2027-01-01T00:00:00Z")).await.unwrap_err();
    assert!(matches!(rule(refused), QuoteRule::Expired { .. }));
}

pub async fn an_accepted_quote_takes_deposits_then_its_final_invoice_deducts_them(store: Ports) {
    let f = fixture(store).await;
    let quote = create(&f).await;
    quoting::finalize_quote(&*f.billing, f.team, quote.id, at(NOW)).await.unwrap();
    let refused = convert(&f, &quote, ConversionMode::Full).await.unwrap_err();
    assert_eq!(rule(refused), QuoteRule::NotAccepted { status: QuoteStatus::Sent });
    let quote = accepted(&f).await;

    let (after_deposit, deposit) =
        convert(&f, &quote, ConversionMode::Deposit(DepositSize::Percent(d("30")))).await.unwrap();
    // 30 % of each VAT group before VAT: 300.00 at 19 % and 150.00 at 7 %.
    assert_eq!(deposit.line_items.iter().map(|l| l.amount).collect::<Vec<_>>(), [d("300.00"), d("150.00")]);
    assert_eq!((deposit.totals.tax, deposit.totals.total), (d("67.50"), d("517.50")));
    assert_eq!(deposit.line_items[0].description.as_str(), "Deposit on quote Q-0002, 19 % VAT");
    let link = deposit.from_quote.clone().unwrap();
    assert_eq!((link.quote_id, link.kind, link.deducted), (quote.id, ConversionKind::Deposit, d("0")));
    assert_eq!(after_deposit.status_at(at(NOW)), QuoteStatus::Accepted);
    assert_eq!(f.billing.get_invoice(f.team, deposit.id).await.unwrap().unwrap(), deposit);

    let too_much = ConversionMode::Deposit(DepositSize::Amount(d("1050.00")));
    let refused = convert(&f, &quote, too_much).await.unwrap_err();
    assert!(matches!(rule(refused), QuoteRule::DepositTooLarge { .. }));

    let (converted, last) = convert(&f, &quote, ConversionMode::Full).await.unwrap();
    assert_eq!(converted.status_at(at(NOW)), QuoteStatus::Converted);
    let link = last.from_quote.clone().unwrap();
    assert_eq!(
        (link.kind, link.deposit_invoices, link.deducted),
        (ConversionKind::Final, vec![deposit.id], d("517.50"))
    );
    assert_eq!(last.totals.total, d("1725.00"));
    // What remains due is the quote's total less the deposit, however the deposit is paid.
    assert_eq!((last.payable(), last.balance.due()), (d("1207.50"), d("1207.50")));
    assert_eq!(f.billing.get_invoice(f.team, last.id).await.unwrap().unwrap(), last);
    assert_eq!(
        converted.invoices.iter().map(|i| (i.invoice_id, i.kind)).collect::<Vec<_>>(),
        [(deposit.id, ConversionKind::Deposit), (last.id, ConversionKind::Final)]
    );
    let refused = convert(&f, &quote, ConversionMode::Full).await.unwrap_err();
    assert_eq!(rule(refused), QuoteRule::AlreadyConverted { invoice: last.number.as_str().to_owned() });
    // The deposit stays while the final invoice deducts it.
    let kept = f.billing.delete_invoice(f.team, deposit.id, at("2026-11-23T00:00:00Z")).await;
    assert!(matches!(kept, Err(DeleteInvoiceError::Deducted { ref by }) if *by == last.number), "{kept:?}");
    assert!(f.billing.get_invoice(f.team, deposit.id).await.unwrap().is_some());

    // The final invoice deleted (nothing was paid on it), the quote is accepted again, and
    // lists so; converting it again makes a new final invoice.
    f.billing.delete_invoice(f.team, last.id, at("2026-11-23T00:00:00Z")).await.unwrap();
    let again = f.billing.get_quote(f.team, quote.id).await.unwrap().unwrap();
    assert_eq!((again.status_at(at(NOW)), again.invoices.len()), (QuoteStatus::Accepted, 1));
    let accepted =
        QuoteFilter { statuses: vec![QuoteStatus::Accepted], now: at(NOW), ..QuoteFilter::default() };
    let listed = f.billing.list_quotes(f.team, &accepted).await.unwrap();
    assert_eq!(listed.iter().map(|q| q.id).collect::<Vec<_>>(), [quote.id]);
    let (_, remade) = convert(&f, &quote, ConversionMode::Full).await.unwrap();
    assert_eq!(remade.from_quote.unwrap().deducted, d("517.50"));
}

pub async fn concurrent_conversions_make_one_invoice(store: Ports) {
    let f = Arc::new(fixture(store).await);
    let quote = accepted(&f).await;
    let racing = (0..20).map(|_| {
        let (f, quote) = (f.clone(), quote.clone());
        tokio::spawn(async move { convert(&f, &quote, ConversionMode::Full).await })
    });
    let outcomes: Vec<_> = all(racing).await;
    let made: Vec<Invoice> =
        outcomes.iter().filter_map(|o| o.as_ref().ok().map(|(_, invoice)| invoice.clone())).collect();
    assert_eq!(made.len(), 1, "one of twenty racing conversions makes the invoice");
    let number = made[0].number.as_str().to_owned();
    for outcome in outcomes.into_iter().filter_map(Result::err) {
        assert_eq!(rule(outcome), QuoteRule::AlreadyConverted { invoice: number.clone() });
    }
    assert_eq!(f.billing.list_invoices(f.team, &InvoiceFilter::default()).await.unwrap().len(), 1);
    let stored = f.billing.get_quote(f.team, quote.id).await.unwrap().unwrap();
    assert_eq!(stored.final_invoice().map(|i| i.invoice_id), Some(made[0].id));
}

pub async fn quotes_list_newest_first_filtered_by_status_and_client_and_page(store: Ports) {
    let f = fixture(store).await;
    let mut made = Vec::new();
    for minute in 0..4 {
        let now = at(NOW) + TimeDelta::minutes(minute);
        made.push(quoting::create_quote(&*f.billing, &*accounts(&f), f.team, draft(&f), now).await.unwrap());
    }
    quoting::finalize_quote(&*f.billing, f.team, made[1].id, at(NOW)).await.unwrap();
    let short =
        QuoteChanges { valid_until: Some(Some(at("2026-11-25T00:00:00Z"))), ..QuoteChanges::default() };
    quoting::update_quote(&*f.billing, &*accounts(&f), f.team, made[2].id, short, at(NOW)).await.unwrap();
    quoting::finalize_quote(&*f.billing, f.team, made[2].id, at(NOW)).await.unwrap();
    let ids = |quotes: Vec<Quote>| quotes.into_iter().map(|q| q.id).collect::<Vec<_>>();
    let list = |filter: QuoteFilter| {
        let billing = f.billing.clone();
        async move { ids(billing.list_quotes(f.team, &filter).await.unwrap()) }
    };
    let now = at("2026-12-01T00:00:00Z");
    assert_eq!(
        list(QuoteFilter { now, ..QuoteFilter::default() }).await,
        [made[3].id, made[2].id, made[1].id, made[0].id]
    );
    let of = |statuses: Vec<QuoteStatus>| QuoteFilter { statuses, now, ..QuoteFilter::default() };
    assert_eq!(list(of(vec![QuoteStatus::Sent])).await, [made[1].id]);
    assert_eq!(list(of(vec![QuoteStatus::Expired])).await, [made[2].id]);
    assert_eq!(
        list(of(vec![QuoteStatus::Draft, QuoteStatus::Expired])).await,
        [made[3].id, made[2].id, made[0].id]
    );
    let page = QuoteFilter {
        after: Some(quoting::QuotePosition::of(&made[2])),
        limit: Some(1),
        now,
        ..QuoteFilter::default()
    };
    assert_eq!(list(page).await, [made[1].id]);
    let elsewhere =
        QuoteFilter { client: Some(billing::ClientId::generate()), now, ..QuoteFilter::default() };
    assert!(list(elsewhere).await.is_empty());
    assert_eq!(
        list(QuoteFilter { client: Some(f.client), limit: Some(2), now, ..QuoteFilter::default() })
            .await
            .len(),
        2
    );
}

/// An invoice of a conversion breaks no rule a create keeps: `BillingError`s reach the
/// caller as they are.
pub async fn a_conversion_is_refused_as_a_create_would_be(store: Ports) {
    let f = fixture(store).await;
    let quote = accepted(&f).await;
    // The client moves to another currency: an invoice in the quote's is refused.
    let mut details = f.billing.get(f.team, f.client).await.unwrap().unwrap().details;
    details.currency = Some(accounts::Currency::parse("CHF").unwrap());
    f.billing.replace(f.team, f.client, &details, at(NOW)).await.unwrap();
    let refused = convert(&f, &quote, ConversionMode::Full).await.unwrap_err();
    assert!(
        matches!(refused, QuoteError::Billing(BillingError::Rule(_)) | QuoteError::Rule(_)),
        "{refused:?}"
    );
    assert!(f.billing.list_invoices(f.team, &InvoiceFilter::default()).await.unwrap().is_empty());
    let stored = f.billing.get_quote(f.team, quote.id).await.unwrap().unwrap();
    assert!(stored.invoices.is_empty());
}

/// Each write of a quote records its event in its own transaction, and a pass announces a
/// quote's expiry once, however many passes race.
pub async fn quote_writes_record_their_events_and_expiry_is_announced_once(store: Ports) {
    use notify::EventType;
    let f = fixture(store).await;
    let notify = f.store.notify();
    let kinds = || {
        let notify = notify.clone();
        async move {
            let mut events = notify.list_events(f.team, 1000).await.unwrap();
            events.sort_by_key(|e| (e.occurred_at, e.kind));
            events
                .into_iter()
                .filter(|e| e.kind.as_str().starts_with("quote."))
                .map(|e| e.kind)
                .collect::<Vec<_>>()
        }
    };
    let quote = accepted(&f).await;
    convert(&f, &quote, ConversionMode::Full).await.unwrap();
    let declined = create(&f).await;
    quoting::finalize_quote(&*f.billing, f.team, declined.id, at(NOW)).await.unwrap();
    quoting::decide_quote(
        &*f.billing,
        f.team,
        declined.id,
        Verdict::Declined { reason: None },
        DecisionSource::Team,
        at("2026-11-23T00:00:00Z"),
    )
    .await
    .unwrap();
    let late = create(&f).await;
    quoting::finalize_quote(&*f.billing, f.team, late.id, at("2026-11-24T00:00:00Z")).await.unwrap();
    assert_eq!(
        kinds().await,
        [
            EventType::QuoteSent,
            EventType::QuoteSent,
            EventType::QuoteAccepted,
            EventType::QuoteConverted,
            EventType::QuoteDeclined,
            EventType::QuoteSent
        ]
    );
    let before = at("2026-12-31T00:00:00Z");
    assert_eq!(notify.mark_overdue(before, 100).await.unwrap(), 0, "valid until the year's end");
    let after = at("2027-01-02T00:00:00Z");
    let (a, b) = tokio::join!(notify.mark_overdue(after, 100), notify.mark_overdue(after, 100));
    assert_eq!(a.unwrap() + b.unwrap(), 1, "the undecided quote expires; the decided ones do not");
    assert_eq!(notify.mark_overdue(after, 100).await.unwrap(), 0, "once");
    assert_eq!(kinds().await.last(), Some(&EventType::QuoteExpired));
}

pub async fn a_quote_is_mailed_in_a_thread_of_its_own(store: Ports) {
    use notify::mail::{Concerning, QueueMessageError, Recipients};
    use notify::{EventType, Finish, JobKind, MailBody, MailSubject, Message, MessageFilter, MessageKind};
    use notify::{MessageStatus, NewMessage, jobs::Claim};

    let f = fixture(store).await;
    let notify = f.store.notify();
    let (quote, _) =
        quoting::finalize_quote(&*f.billing, f.team, create(&f).await.id, at(NOW)).await.unwrap();
    let message = |team| {
        let email = |text| kernel::Email::parse(text).unwrap();
        let message = Message::queued(
            team,
            Concerning::Quote(quote.id),
            MessageKind::Quote,
            Recipients::new(vec![email("zoe@example.com")], Vec::new()).unwrap(),
            MailSubject::parse("Angebot Q-0001").unwrap(),
            MailBody::parse("Anbei unser Angebot.").unwrap(),
            &[],
            &email("billing@acme.example"),
            at(NOW),
        );
        NewMessage { message, attachments: Vec::new() }
    };
    let other = create_team(&f.store, "Other").await;
    assert!(matches!(notify.queue_message(&message(other)).await, Err(QueueMessageError::NotFound)));
    let queued = notify.queue_message(&message(f.team)).await.unwrap();
    assert_eq!(queued.about.quote(), Some(quote.id));

    let filter =
        MessageFilter { invoice: None, quote: Some(quote.id), status: None, before: None, limit: 10 };
    let listed: Vec<_> =
        notify.list_messages(f.team, &filter).await.unwrap().into_iter().map(|m| m.id).collect();
    assert_eq!(listed, [queued.id]);
    let of_an_invoice =
        MessageFilter { invoice: Some(f.invoice("2026-11-20").await.id), quote: None, ..filter };
    assert_eq!(notify.list_messages(f.team, &of_an_invoice).await.unwrap(), []);

    // Its failure is told in the quote's thread; no invoice is touched.
    let claim = Claim {
        kinds: vec![JobKind::Mail],
        due: at(NOW),
        now: at(NOW),
        lease_until: at(NOW) + TimeDelta::seconds(30),
        limit: 10,
    };
    let job = notify.claim_jobs(&claim).await.unwrap().pop().unwrap();
    let outgoing = notify.start_sending(&job).await.unwrap().unwrap();
    assert_eq!((outgoing.message.id, outgoing.moot), (queued.id, None));
    let failed = Finish::Failed { error: "550 5.1.1 no such mailbox".into() };
    assert!(notify.finish_sending(&job, &failed, at(NOW)).await.unwrap());
    let stored = notify.get_message(f.team, queued.id).await.unwrap().unwrap();
    assert_eq!((stored.status, stored.about), (MessageStatus::Failed, Concerning::Quote(quote.id)));
    let events = notify.list_events(f.team, 100).await.unwrap();
    let told = events.iter().find(|e| e.kind == EventType::MessageFailed).unwrap();
    assert_eq!(
        (told.subject, told.thread.as_str()),
        (queued.id.as_uuid(), format!("quote:{}", quote.id).as_str())
    );
}
