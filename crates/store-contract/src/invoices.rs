//! The invoice and sender-address ports' contract: serials, inline clients, the
//! references every adapter must check, and all-or-nothing writes.

use std::sync::Arc;

use crate::Ports;
use crate::create_team;
use accounts::{AccountStore, Currency, TeamId};
use billing::client::{KeptPostalCode, OptionalText, RequiredText};
use billing::invoice::{Description, price_lines};
use billing::ledger::{EntryAmount, EntryKind, NewEntry, PaymentMethod};
use billing::money::Decimal;
use billing::money::parse_decimal;
use billing::store::{
    BillTo, CreateInvoiceError, DeleteInvoiceError, NewInvoice, SaveInvoiceError, SenderChoice, StatusWrite,
};
use billing::{
    Balance, BillingStore, Client, ClientDetails, ClientId, DeleteClientError, Invoice, InvoiceFilter,
    InvoiceId, InvoicePosition, InvoiceStatus, LedgerEntryId, LineInput, Recurrence, RecurringInvoiceId,
    SenderAddress, SenderAddressId, SenderDetails, TaxRule, Totals,
};
use chrono::{DateTime, NaiveDate, TimeDelta, Utc};
use kernel::{Email, Id, SearchText, parse_instant};

pub fn at(text: &str) -> DateTime<Utc> {
    parse_instant(text).unwrap()
}

/// A new ledger entry of `kind` for `amount`, made on `on` at noon UTC: entries of one day
/// share their instant, as they may on a coarse clock, and keep the order they were written.
pub fn entry(kind: EntryKind, amount: EntryAmount, on: &str) -> NewEntry {
    NewEntry {
        id: LedgerEntryId::generate(),
        kind,
        amount,
        on: NaiveDate::parse_from_str(on, "%Y-%m-%d").unwrap(),
        method: PaymentMethod::BankTransfer,
        reference: None,
        notes: None,
        created_at: at(&format!("{on}T12:00:00Z")),
    }
}

pub fn eur() -> Currency {
    Currency::parse("EUR").unwrap()
}

pub fn client_details(name: &str, email: &str) -> ClientDetails {
    ClientDetails {
        language: None,
        peppol_id: None,
        name: RequiredText::parse(name).unwrap(),
        email: Email::parse(email).unwrap(),
        phone: OptionalText::empty(),
        vat_number: OptionalText::parse("EL123456789").unwrap(),
        line1: OptionalText::parse("Οδός Ερμού 1").unwrap(),
        line2: OptionalText::empty(),
        line3: OptionalText::empty(),
        postal_code: KeptPostalCode::parse("105 63").unwrap(),
        city: OptionalText::empty(),
        country_code: None,
        buyer_reference: OptionalText::empty(),
        reminders_enabled: true,
        currency: None,
        payment_terms: None,
    }
}

pub struct Fixture {
    pub store: Ports,
    pub billing: Arc<dyn BillingStore>,
    pub team: TeamId,
    sender: SenderAddressId,
    pub client: ClientId,
}

impl std::fmt::Debug for Fixture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("invoices::Fixture").field("team", &self.team).finish_non_exhaustive()
    }
}

pub async fn fixture(store: Ports) -> Fixture {
    let team = create_team(&store, "Acme").await;
    fixture_for(store, team).await
}

pub async fn fixture_for(store: Ports, team: TeamId) -> Fixture {
    let billing = store.billing();
    let sender = default_sender(&billing, team).await.id;
    let client =
        Client::new(team, client_details("Zoë Łukasiewicz — Ёлка ΑΒΓ", "zoe@example.com"), at("2026-01-01"));
    billing.create(&client).await.unwrap();
    Fixture { store, billing, team, sender, client: client.id }
}

async fn default_sender(billing: &Arc<dyn BillingStore>, team: TeamId) -> SenderAddress {
    let sender = SenderAddress {
        id: SenderAddressId::generate(),
        team_id: team,
        details: SenderDetails::named(RequiredText::parse("Acme GmbH").unwrap()),
        created_at: at("2026-01-01"),
        updated_at: at("2026-01-01"),
    };
    billing.ensure_default_sender(&sender).await.unwrap()
}

pub fn lines(items: &[(&str, &str, &str)]) -> Vec<LineInput> {
    items
        .iter()
        .map(|(description, price, quantity)| {
            let (unit_price, quantity) = (parse_decimal(price).unwrap(), parse_decimal(quantity).unwrap());
            LineInput {
                discount: None,
                description: Description::parse(*description).unwrap(),
                unit_price,
                quantity,
                amount: None,
                unit_code: None,
                vat: billing::LineVat::default(),
            }
        })
        .collect()
}

impl Fixture {
    pub fn draft(&self, bill_to: BillTo, issued: &str, items: &[(&str, &str, &str)]) -> NewInvoice {
        let now = at("2026-11-20T10:00:00Z");
        let line_items = price_lines(lines(items), eur(), now).unwrap();
        let tax_rule = TaxRule::Percentage(parse_decimal("19").unwrap());
        NewInvoice {
            qr_reference: false,
            from_quote: None,
            discount: None,
            id: InvoiceId::generate(),
            team_id: self.team,
            bill_to,
            sender: SenderChoice::Given(self.sender),
            description: Some(Description::parse("November").unwrap()),
            issue_date: at(issued),
            due_date: Some(at(issued) + TimeDelta::days(30)),
            currency: eur(),
            tax_rule,
            totals: Totals::compute(&line_items, &billing::Vat::default(), tax_rule, None, eur()).unwrap(),
            line_items,
            created_at: now,
            opening: None,
            time_entries: Vec::new(),
            recurrence: None,
            vat: billing::Vat::default(),
            exchange: billing::Exchange::none(eur()),
            // Every invoice of the contract states its supply, so that each round trip
            // shows it kept.
            supply: billing::Supply {
                service: Some(billing::ServiceTime::Period(
                    billing::ServicePeriod::new(day("2026-10-01"), day("2026-10-31")).unwrap(),
                )),
                purchase_order: Some(billing::PurchaseOrder::parse("PO-4711 — Ёлка").unwrap()),
            },
        }
    }

    pub async fn invoice(&self, issued: &str) -> Invoice {
        let draft = self.draft(
            BillTo::Existing(self.client),
            issued,
            &[("Design", "100", "2"), ("Ёлка", "0.1", "3")],
        );
        self.billing.create_invoice(draft).await.unwrap()
    }

    pub async fn serials(&self) -> Vec<u32> {
        let mut serials: Vec<u32> = self
            .billing
            .list_invoices(self.team, &InvoiceFilter::default())
            .await
            .unwrap()
            .iter()
            .map(|i| i.serial.number())
            .collect();
        serials.sort_unstable();
        serials
    }
}

pub async fn invoices_round_trip_with_items_in_order(store: Ports) {
    let f = fixture(store).await;
    let invoice = f.invoice("2026-11-20").await;
    assert_eq!(invoice.number.to_string(), "INV-0001");
    assert_eq!(invoice.line_items.iter().map(|i| i.position).collect::<Vec<_>>(), [0, 1]);
    assert_eq!(invoice.totals.subtotal.to_string(), "200.30");
    assert_eq!(invoice.totals.tax.to_string(), "38.06");
    let stored = f.billing.get_invoice(f.team, invoice.id).await.unwrap().unwrap();
    // Numbers compare by value: storage may keep other trailing zeros.
    assert_eq!(stored, invoice);
    assert_eq!(stored.line_items[1].unit_price.to_string(), "0.1");
    assert_eq!(f.billing.find_invoice(invoice.id).await.unwrap(), Some(invoice.clone()));
    assert_eq!(f.billing.list_invoices(f.team, &InvoiceFilter::default()).await.unwrap(), [invoice]);
}

/// Lines keep what they state of their VAT, part by part, and so do a credit note's.
pub async fn lines_keep_their_own_vat(store: Ports) {
    let f = fixture(store).await;
    let mut draft = f.draft(
        BillTo::Existing(f.client),
        "2026-11-20",
        &[("Buch", "19.99", "2"), ("Kurs", "100", "1"), ("Heft", "5", "1")],
    );
    draft.line_items[0].vat = billing::LineVat {
        category: None,
        percentage: Some(parse_decimal("7").unwrap()),
        exemption_reason: None,
    };
    draft.line_items[2].vat = billing::LineVat {
        category: Some(billing::VatCategory::Exempt),
        percentage: None,
        exemption_reason: Some(billing::invoice::ExemptionReason::parse("Art. 132 — Ёлка").unwrap()),
    };
    draft.totals = Totals::compute(&draft.line_items, &draft.vat, draft.tax_rule, None, eur()).unwrap();
    assert_eq!(draft.totals.tax.to_string(), "21.80", "2.80 at 7 %, 19.00 at 19 %, none exempt");
    let invoice = f.billing.create_invoice(draft).await.unwrap();
    let stored = f.billing.get_invoice(f.team, invoice.id).await.unwrap().unwrap();
    assert_eq!(stored, invoice);
    assert_eq!(stored.vat_breakdown().len(), 3);
    let note = billing::credit::NewCreditNote {
        id: kernel::Id::generate(),
        lines: billing::credit::CreditLines::Full,
        reason: None,
        created_at: at("2026-11-21T10:00:00Z"),
    };
    let (note, _) = f.billing.issue_credit_note(f.team, invoice.id, note).await.unwrap();
    let listed =
        f.billing.list_credit_notes(f.team, &billing::credit::CreditNoteFilter::default()).await.unwrap();
    assert_eq!(listed, std::slice::from_ref(&note));
    assert_eq!(
        note.line_items.iter().map(|line| &line.vat).collect::<Vec<_>>(),
        stored.line_items.iter().map(|line| &line.vat).collect::<Vec<_>>()
    );
    assert_eq!(note.vat_breakdown(), stored.vat_breakdown());
}

pub async fn discounts_round_trip_and_credit_notes_take_them(store: Ports) {
    let f = fixture(store).await;
    let d = |text: &str| parse_decimal(text).unwrap();
    let mut draft =
        f.draft(BillTo::Existing(f.client), "2026-11-20", &[("Buch", "20", "1"), ("Kurs", "100", "1")]);
    let mut inputs = lines(&[("Buch", "20", "1"), ("Kurs", "100", "1")]);
    inputs[0].vat.percentage = Some(d("7"));
    inputs[0].discount = Some(billing::Discount::Percentage(d("12.5")));
    inputs[1].discount = Some(billing::Discount::Amount(d("5")));
    draft.line_items = price_lines(inputs, eur(), draft.created_at).unwrap();
    draft.discount = Some(billing::Discount::Amount(d("10")));
    draft.totals = billing::Pricing {
        items: &draft.line_items,
        vat: &draft.vat,
        rule: draft.tax_rule,
        discount: draft.discount,
        currency: eur(),
    }
    .totals(None)
    .unwrap();
    // 17.50 and 95.00 net; 10.00 off them as 1.56 and 8.44.
    assert_eq!(
        (draft.totals.discount_total, draft.totals.tax, draft.totals.total),
        (d("17.50"), d("17.57"), d("120.07"))
    );
    // The same invoice again, its lines their own.
    let mut second = NewInvoice { id: InvoiceId::generate(), ..draft.clone() };
    for line in &mut second.line_items {
        line.id = kernel::Id::generate();
    }
    let invoice = f.billing.create_invoice(draft).await.unwrap();
    let stored = f.billing.get_invoice(f.team, invoice.id).await.unwrap().unwrap();
    assert_eq!(stored, invoice);
    assert_eq!(
        stored.line_items[0].discount,
        Some(billing::Allowance { percentage: Some(d("12.5")), amount: d("2.50") })
    );
    assert_eq!(stored.totals.discount_total, d("17.50"));

    // A discount of the whole changed to a percentage, then removed: each kept as written.
    let mut changed = stored.clone();
    changed.discount = Some(billing::Discount::Percentage(d("10")));
    changed.totals = changed.pricing().totals(None).unwrap();
    let replaced =
        f.billing.replace_invoice(&changed, false, billing::store::StatusWrite::Keep).await.unwrap();
    assert_eq!((replaced.discount, replaced.totals), (changed.discount, changed.totals));
    assert_eq!(
        f.billing.get_invoice(f.team, invoice.id).await.unwrap().unwrap().totals.discount_total,
        d("18.75")
    );

    // A full note credits the invoice's discounts; a note of lines takes its own.
    let note = |lines| billing::credit::NewCreditNote {
        id: kernel::Id::generate(),
        lines,
        reason: None,
        created_at: at("2026-11-21T10:00:00Z"),
    };
    let part = billing::credit::CreditLines::Discounted(
        lines(&[("Kurs", "50", "1")]),
        billing::Discount::Percentage(d("20")),
    );
    let (partial, _) = f.billing.issue_credit_note(f.team, invoice.id, note(part)).await.unwrap();
    assert_eq!((partial.totals.discount_total, partial.totals.total), (d("10.00"), d("47.60")));
    let second = f.billing.create_invoice(second).await.unwrap();
    let (full, _) = f
        .billing
        .issue_credit_note(f.team, second.id, note(billing::credit::CreditLines::Full))
        .await
        .unwrap();
    let listed =
        f.billing.list_credit_notes(f.team, &billing::credit::CreditNoteFilter::default()).await.unwrap();
    assert_eq!(listed, [full.clone(), partial]);
    assert_eq!((full.discount, full.totals), (second.discount, second.totals));
    assert_eq!(
        full.line_items.iter().map(|l| l.discount).collect::<Vec<_>>(),
        second.line_items.iter().map(|l| l.discount).collect::<Vec<_>>()
    );
}

pub async fn serials_are_gapless_under_concurrency(store: Ports) {
    let f = Arc::new(fixture(store).await);
    let tasks: Vec<_> = (0..16)
        .map(|task| {
            let f = f.clone();
            tokio::spawn(async move {
                // 200 invoices over 16 tasks: 13 or 12 each.
                for _ in 0..(200 / 16 + usize::from(task < 200 % 16)) {
                    let draft = f.draft(BillTo::Existing(f.client), "2026-11-20", &[("Work", "10", "1")]);
                    f.billing.create_invoice(draft).await.unwrap();
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    assert_eq!(f.serials().await, (1..=200).collect::<Vec<u32>>());
}

pub async fn a_refused_create_writes_nothing_and_gives_its_serial_back(store: Ports) {
    let f = fixture(store).await;
    f.invoice("2026-11-20").await;
    let unknown_client = f.draft(BillTo::Existing(ClientId::generate()), "2026-11-20", &[("A", "1", "1")]);
    let refused = f.billing.create_invoice(unknown_client).await;
    assert!(matches!(refused, Err(CreateInvoiceError::UnknownClient)), "{refused:?}");
    let mut unknown_sender = f.draft(BillTo::Existing(f.client), "2026-11-20", &[("A", "1", "1")]);
    unknown_sender.sender = SenderChoice::Given(SenderAddressId::generate());
    let refused = f.billing.create_invoice(unknown_sender).await;
    assert!(matches!(refused, Err(CreateInvoiceError::UnknownSender)), "{refused:?}");
    // An inline client made in a refused create is rolled back with it.
    let mut inline = f.draft(inline_bill_to(f.team, "new@example.com"), "2026-11-20", &[("A", "1", "1")]);
    inline.sender = SenderChoice::Given(SenderAddressId::generate());
    assert!(f.billing.create_invoice(inline).await.is_err());
    assert_eq!(f.billing.list(f.team).await.unwrap().len(), 1);
    assert_eq!(f.invoice("2026-11-21").await.number.to_string(), "INV-0002");
    assert_eq!(f.serials().await, [1, 2]);
}

/// A recurring invoice's invoices are one per sequence however many passes make them at
/// once: the others are refused and give their serial back.
pub async fn a_recurring_invoice_has_one_invoice_per_sequence(store: Ports) {
    let f = Arc::new(fixture(store).await);
    let recurring = RecurringInvoiceId::generate();
    let of = |sequence: u32| {
        let mut draft = f.draft(BillTo::Existing(f.client), "2026-11-20", &[("Retainer", "1500", "1")]);
        draft.recurrence = Some(Recurrence { recurring_invoice_id: recurring, sequence });
        draft
    };
    let first = f.billing.create_invoice(of(1)).await.unwrap();
    assert_eq!(first.recurrence, Some(Recurrence { recurring_invoice_id: recurring, sequence: 1 }));
    let read = f.billing.get_invoice(f.team, first.id).await.unwrap().unwrap();
    assert_eq!(read.recurrence, first.recurrence);
    let again = f.billing.create_invoice(of(1)).await;
    assert!(matches!(again, Err(CreateInvoiceError::RecurrenceTaken)), "{again:?}");
    // Passes racing for the second period: one invoice.
    let racing: Vec<_> = (0..4)
        .map(|_| {
            let (f, draft) = (f.clone(), of(2));
            tokio::spawn(async move { f.billing.create_invoice(draft).await })
        })
        .collect();
    let mut made = 0;
    for task in racing {
        match task.await.unwrap() {
            Ok(invoice) => {
                made += 1;
                assert_eq!(invoice.recurrence.map(|r| r.sequence), Some(2));
            }
            Err(CreateInvoiceError::RecurrenceTaken) => {}
            Err(other) => panic!("{other:?}"),
        }
    }
    assert_eq!(made, 1);
    // Another recurring invoice's first, and a plain invoice, take the next serials.
    let mut other = of(1);
    other.recurrence = Some(Recurrence { recurring_invoice_id: RecurringInvoiceId::generate(), sequence: 1 });
    f.billing.create_invoice(other).await.unwrap();
    assert_eq!(f.invoice("2026-11-21").await.recurrence, None);
    assert_eq!(f.serials().await, [1, 2, 3, 4]);
}

fn inline_bill_to(team: TeamId, email: &str) -> BillTo {
    let client = Client::new(team, client_details("Inline", email), at("2026-11-20"));
    BillTo::Inline { email: Email::parse(email).unwrap(), new_client: Box::new(client) }
}

pub async fn inline_clients_match_by_email_oldest_first_or_are_made(store: Ports) {
    let f = fixture(store).await;
    // A newer client with the same email (another case): the older one is matched.
    let newer = Client::new(f.team, client_details("Newer", "ZOE@example.com"), at("2026-06-01"));
    f.billing.create(&newer).await.unwrap();
    let matched = f.draft(inline_bill_to(f.team, "Zoe@Example.COM"), "2026-11-20", &[("A", "1", "1")]);
    assert_eq!(f.billing.create_invoice(matched).await.unwrap().client_id, f.client);

    let made = f.draft(inline_bill_to(f.team, "fresh@example.com"), "2026-11-20", &[("A", "1", "1")]);
    let invoice = f.billing.create_invoice(made).await.unwrap();
    let client = f.billing.get(f.team, invoice.client_id).await.unwrap().unwrap();
    assert_eq!(client.details.email.as_str(), "fresh@example.com");

    assert_eq!(f.billing.list(f.team).await.unwrap().len(), 3);
}

/// An invoice is in its client's currency: storage refuses one in another, for a client
/// named or matched by email, and keeps the exchange of one in a foreign currency.
pub async fn an_invoice_is_in_its_clients_currency_with_its_exchange_kept(store: Ports) {
    let f = fixture(store).await;
    let chf = billing::money::Currency::parse("CHF").unwrap();
    let mut details = client_details("Käserei", "kaese@example.ch");
    details.currency = Some(chf);
    let swiss = Client::new(f.team, details, at("2026-06-01"));
    f.billing.create(&swiss).await.unwrap();
    assert_eq!(f.billing.get(f.team, swiss.id).await.unwrap().unwrap().details.currency, Some(chf));

    let refused = |bill_to| f.draft(bill_to, "2026-11-20", &[("A", "1", "1")]);
    let differs = CreateInvoiceError::ClientCurrencyDiffers { client: chf, invoice: eur() };
    for bill_to in [BillTo::Existing(swiss.id), inline_bill_to(f.team, "KAESE@example.ch")] {
        let error = f.billing.create_invoice(refused(bill_to)).await.unwrap_err();
        assert_eq!(error.to_string(), differs.to_string());
    }
    let mut in_francs = f.draft(BillTo::Existing(swiss.id), "2026-11-20", &[("A", "100", "1")]);
    let rate = parse_decimal("1.0523").unwrap();
    in_francs.currency = chf;
    in_francs.exchange = billing::Exchange::new(chf, eur(), Some(rate)).unwrap();
    let made = f.billing.create_invoice(in_francs).await.unwrap();
    let kept = f.billing.get_invoice(f.team, made.id).await.unwrap().unwrap();
    assert_eq!(
        (kept.currency, kept.exchange),
        (chf, billing::Exchange { team_currency: eur(), rate: Some(rate) })
    );
    assert_eq!(kept, made);
    // A change of rate is kept too.
    let changed = Invoice {
        exchange: billing::Exchange { rate: Some(parse_decimal("1.05").unwrap()), ..kept.exchange },
        updated_at: at("2026-11-21"),
        ..kept
    };
    let stored = f.billing.replace_invoice(&changed, false, StatusWrite::Keep).await.unwrap();
    assert_eq!(f.billing.get_invoice(f.team, made.id).await.unwrap(), Some(stored.clone()));
    assert_eq!(stored.exchange.rate, Some(parse_decimal("1.05").unwrap()));
    // Once money moved, storage keeps the rate, whatever the caller read before.
    let payment = entry(
        billing::EntryKind::Payment,
        billing::EntryAmount::Exactly(parse_decimal("10").unwrap()),
        "2026-11-22",
    );
    f.billing.record_entry(f.team, made.id, payment).await.unwrap();
    let late = Invoice {
        exchange: billing::Exchange { rate: Some(parse_decimal("1.2").unwrap()), ..stored.exchange },
        updated_at: at("2026-11-23"),
        ..stored.clone()
    };
    let refused = f.billing.replace_invoice(&late, false, StatusWrite::Keep).await;
    assert!(matches!(refused, Err(SaveInvoiceError::RateLocked)), "{refused:?}");
    let kept = f.billing.get_invoice(f.team, made.id).await.unwrap().unwrap();
    assert_eq!(kept.exchange.rate, Some(parse_decimal("1.05").unwrap()));
}

/// A team changes its name at will and its currency only while it has no books: an
/// invoice priced in the currency the team left is refused, and makes nothing.
pub async fn a_team_changes_its_currency_only_before_its_books_start(store: Ports) {
    let f = fixture(store).await;
    let accounts = f.store.accounts();
    let usd = billing::money::Currency::parse("USD").unwrap();
    let priced_in_eur = f.draft(BillTo::Existing(f.client), "2026-11-20", &[("A", "100", "1")]);
    let change = |name: Option<&str>, currency| accounts::TeamChange {
        name: name.map(|n| accounts::TeamName::parse(n).unwrap()),
        currency,
    };
    let renamed = accounts.update_team(f.team, &change(Some("Acme GmbH"), Some(usd))).await.unwrap();
    assert_eq!((renamed.name.as_str(), renamed.currency), ("Acme GmbH", usd));
    assert_eq!(accounts.get_team(f.team).await.unwrap(), Some(renamed));
    let refused = f.billing.create_invoice(priced_in_eur).await.unwrap_err();
    assert!(matches!(refused, CreateInvoiceError::TeamCurrencyChanged), "{refused:?}");
    assert!(
        f.billing.list_invoices(f.team, &billing::InvoiceFilter::default()).await.unwrap().is_empty(),
        "nothing made"
    );
    accounts.update_team(f.team, &change(None, Some(eur()))).await.unwrap();
    f.invoice("2026-11-20").await;
    let in_use = accounts.update_team(f.team, &change(Some("Acme AG"), Some(usd))).await.unwrap_err();
    assert!(
        matches!(in_use, accounts::UpdateTeamError::CurrencyInUse { invoices: 1, recurring: 0 }),
        "{in_use:?}"
    );
    let kept = accounts.get_team(f.team).await.unwrap().unwrap();
    assert_eq!((kept.name.as_str(), kept.currency), ("Acme GmbH", eur()), "nothing of a refused change");
    let same = accounts.update_team(f.team, &change(Some("Acme AG"), Some(eur()))).await.unwrap();
    assert_eq!(same.name.as_str(), "Acme AG", "its own currency is no change");
    let unknown = accounts.update_team(TeamId::generate(), &change(Some("X"), None)).await.unwrap_err();
    assert!(matches!(unknown, accounts::UpdateTeamError::NotFound));
}

pub async fn replacing_changes_fields_and_items(store: Ports) {
    let f = fixture(store).await;
    let invoice = f.invoice("2026-11-20").await;
    let other = Client::new(f.team, client_details("Other", "other@example.com"), at("2026-02-01"));
    f.billing.create(&other).await.unwrap();
    let line_items = price_lines(lines(&[("Only", "5", "1")]), eur(), at("2026-11-22")).unwrap();
    let changed = Invoice {
        client_id: other.id,
        description: None,
        due_date: None,
        tax_rule: TaxRule::Flat(parse_decimal("1").unwrap()),
        totals: Totals::compute(
            &line_items,
            &billing::Vat::default(),
            TaxRule::Flat(parse_decimal("1").unwrap()),
            None,
            eur(),
        )
        .unwrap(),
        line_items,
        updated_at: at("2026-11-22"),
        ..invoice.clone()
    };
    let stored = f.billing.replace_invoice(&changed, true, StatusWrite::Keep).await.unwrap();
    // The books follow the new total.
    let changed = Invoice { balance: Balance::unpaid(changed.totals.total), ..changed };
    assert_eq!(stored, changed);
    assert_eq!(f.billing.get_invoice(f.team, invoice.id).await.unwrap(), Some(changed.clone()));

    // Without `lines_changed` the stored items stay; PAID pays what is due.
    let paying = StatusWrite::Settle(entry(EntryKind::Payment, EntryAmount::AllDue, "2026-11-23"));
    let status_only = f.billing.replace_invoice(&changed, false, paying).await.unwrap();
    assert_eq!((status_only.status, status_only.balance.due()), (InvoiceStatus::Paid, Decimal::ZERO));
    assert_eq!(status_only.balance.paid, changed.totals.total);
    assert_eq!(f.billing.get_invoice(f.team, invoice.id).await.unwrap(), Some(status_only.clone()));

    let unknown_client = Invoice { client_id: ClientId::generate(), ..status_only.clone() };
    let refused = f.billing.replace_invoice(&unknown_client, false, StatusWrite::Keep).await;
    assert!(matches!(refused, Err(SaveInvoiceError::UnknownClient)), "{refused:?}");
    let unknown_sender = Invoice { sender_id: SenderAddressId::generate(), ..status_only.clone() };
    let refused = f.billing.replace_invoice(&unknown_sender, true, StatusWrite::Keep).await;
    assert!(matches!(refused, Err(SaveInvoiceError::UnknownSender)), "{refused:?}");
    let missing = Invoice { id: InvoiceId::generate(), ..status_only.clone() };
    assert!(matches!(
        f.billing.replace_invoice(&missing, true, StatusWrite::Keep).await,
        Err(SaveInvoiceError::NotFound)
    ));
    assert_eq!(f.billing.get_invoice(f.team, invoice.id).await.unwrap(), Some(status_only));
}

fn day(text: &str) -> chrono::NaiveDate {
    text.parse().unwrap()
}

pub async fn an_invoice_keeps_its_supply_as_a_day_a_period_or_none(store: Ports) {
    let f = fixture(store).await;
    let invoice = f.invoice("2026-11-20T00:00:00Z").await;
    let read = async |id| f.billing.get_invoice(f.team, id).await.unwrap().unwrap();
    assert_eq!(read(invoice.id).await.supply, invoice.supply);
    let on_a_day = billing::Supply {
        service: Some(billing::ServiceTime::Date(day("2026-11-19"))),
        purchase_order: None,
    };
    let one_day_period = billing::Supply {
        service: Some(billing::ServiceTime::Period(
            billing::ServicePeriod::new(day("2026-11-19"), day("2026-11-19")).unwrap(),
        )),
        purchase_order: None,
    };
    for supply in [on_a_day, one_day_period, billing::Supply::default(), invoice.supply.clone()] {
        let changed = Invoice { supply: supply.clone(), ..read(invoice.id).await };
        f.billing.replace_invoice(&changed, false, billing::store::StatusWrite::Keep).await.unwrap();
        assert_eq!(read(invoice.id).await.supply, supply, "a day is not a period of one day");
    }
}

pub async fn invoices_list_newest_issue_date_first_then_serial(store: Ports) {
    let f = fixture(store).await;
    for issued in ["2026-10-01", "2026-11-01", "2026-10-01", "2026-09-15"] {
        f.invoice(issued).await;
    }
    let listed: Vec<String> = f
        .billing
        .list_invoices(f.team, &InvoiceFilter::default())
        .await
        .unwrap()
        .iter()
        .map(|i| i.number.to_string())
        .collect();
    assert_eq!(listed, ["INV-0002", "INV-0003", "INV-0001", "INV-0004"]);
}

pub async fn invoices_are_invisible_to_other_teams(store: Ports) {
    let f = fixture(store.clone()).await;
    let invoice = f.invoice("2026-11-20").await;
    let other = fixture_for(store, create_team(&f.store, "Other").await).await;
    assert_eq!(f.billing.get_invoice(other.team, invoice.id).await.unwrap(), None);
    assert!(f.billing.list_invoices(other.team, &InvoiceFilter::default()).await.unwrap().is_empty());
    assert!(matches!(
        f.billing.delete_invoice(other.team, invoice.id, chrono::Utc::now()).await,
        Err(DeleteInvoiceError::NotFound)
    ));
    let moved =
        Invoice { team_id: other.team, client_id: other.client, sender_id: other.sender, ..invoice.clone() };
    assert!(matches!(
        f.billing.replace_invoice(&moved, true, StatusWrite::Keep).await,
        Err(SaveInvoiceError::NotFound)
    ));
    // Another team's client or sender cannot be referred to.
    let foreign = f.draft(BillTo::Existing(other.client), "2026-11-20", &[("A", "1", "1")]);
    assert!(matches!(f.billing.create_invoice(foreign).await, Err(CreateInvoiceError::UnknownClient)));
    // Each team counts its own serials.
    assert_eq!(other.invoice("2026-11-20").await.number.to_string(), "INV-0001");
    assert_eq!(f.billing.get_invoice(f.team, invoice.id).await.unwrap(), Some(invoice));
}

pub async fn clients_with_invoices_cannot_be_deleted(store: Ports) {
    let f = fixture(store).await;
    let invoice = f.invoice("2026-11-20").await;
    let refused = f.billing.delete(f.team, f.client, chrono::Utc::now()).await;
    assert!(matches!(refused, Err(DeleteClientError::HasInvoices)), "{refused:?}");
    assert!(f.billing.get(f.team, f.client).await.unwrap().is_some());
    f.billing.delete_invoice(f.team, invoice.id, chrono::Utc::now()).await.unwrap();
    f.billing.delete(f.team, f.client, chrono::Utc::now()).await.unwrap();
}

pub async fn deleting_an_invoice_takes_its_items(store: Ports) {
    let f = fixture(store).await;
    let (gone, kept) = (f.invoice("2026-11-20").await, f.invoice("2026-11-21").await);
    f.billing.delete_invoice(f.team, gone.id, chrono::Utc::now()).await.unwrap();
    assert_eq!(f.billing.get_invoice(f.team, gone.id).await.unwrap(), None);
    assert_eq!(f.billing.find_invoice(gone.id).await.unwrap(), None);
    assert!(matches!(
        f.billing.delete_invoice(f.team, gone.id, chrono::Utc::now()).await,
        Err(DeleteInvoiceError::NotFound)
    ));
    assert_eq!(f.billing.list_invoices(f.team, &InvoiceFilter::default()).await.unwrap(), [kept]);
    // A deleted invoice's serial is not given again.
    assert_eq!(f.invoice("2026-11-22").await.number.to_string(), "INV-0003");
}

pub async fn a_team_has_one_default_sender(store: Ports) {
    let accounts: Arc<dyn AccountStore> = store.accounts();
    let team = create_team(&store, "Ακμή").await;
    let billing = store.billing();
    assert_eq!(billing.default_sender(team).await.unwrap(), None);
    // Made from the team's name on first use, once, even when asked concurrently.
    let now = at("2026-11-20");
    let (a, b) = tokio::join!(
        billing::service::default_sender(billing.as_ref(), accounts.as_ref(), team, now),
        billing::service::default_sender(billing.as_ref(), accounts.as_ref(), team, now),
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(a, b);
    assert_eq!(a.details.name.as_str(), "Ακμή");
    let mut details = a.details.clone();
    details.line1 = OptionalText::parse("Friedrichstraße 1").unwrap();
    details.email = Some(Email::parse("billing@acme.example").unwrap());
    details.payment_details =
        billing::sender::PaymentDetails::parse("IBAN DE89 3704 0044 0532 0130 00\nBIC COBADEFFXXX — 14 Tage")
            .unwrap();
    details.logo = Some(billing::sender::Logo::parse(LOGO.to_vec()).unwrap());
    details.language = locale::Language::Italian;
    details.payment_qr = billing::payment_qr::QrChoice::Swiss;
    let updated = billing.update_sender(team, a.id, &details, now).await.unwrap().unwrap();
    assert_eq!(updated.details, details);
    assert_eq!(billing.default_sender(team).await.unwrap(), Some(updated.clone()));
    assert_eq!(billing.get_sender(team, a.id).await.unwrap(), Some(updated));
    let other = create_team(&store, "Other").await;
    assert_eq!(billing.get_sender(other, a.id).await.unwrap(), None);
    assert_eq!(billing.update_sender(other, a.id, &details, now).await.unwrap(), None);
}

pub async fn a_first_invoice_makes_the_default_sender_in_its_own_transaction(store: Ports) {
    let team = create_team(&store, "Ακμή").await;
    let billing = store.billing();
    let client = Client::new(team, client_details("Zoë", "zoe@example.com"), at("2026-01-01"));
    billing.create(&client).await.unwrap();
    let fallback = |name: &str| SenderAddress {
        id: SenderAddressId::generate(),
        team_id: team,
        details: SenderDetails::named(RequiredText::parse(name).unwrap()),
        created_at: at("2026-11-20"),
        updated_at: at("2026-11-20"),
    };
    let f = Fixture {
        store: store.clone(),
        billing: billing.clone(),
        team,
        sender: SenderAddressId::generate(),
        client: client.id,
    };
    let draft = |bill_to: BillTo, sender: &SenderAddress| NewInvoice {
        sender: SenderChoice::TeamDefault { fallback: Box::new(sender.clone()) },
        ..f.draft(bill_to, "2026-11-20", &[("A", "1", "1")])
    };
    // A preview, or a create refused for another reason, keeps no sender.
    let first = fallback("Ακμή");
    let preview = billing.preview_invoice(draft(BillTo::Existing(client.id), &first)).await.unwrap();
    assert_eq!(preview.sender_id, first.id);
    let refused = billing.create_invoice(draft(BillTo::Existing(ClientId::generate()), &first)).await;
    assert!(matches!(refused, Err(CreateInvoiceError::UnknownClient)), "{refused:?}");
    assert_eq!(billing.default_sender(team).await.unwrap(), None);
    // The first invoice made makes it; later ones find it.
    let made = billing.create_invoice(draft(BillTo::Existing(client.id), &first)).await.unwrap();
    assert_eq!(made.sender_id, first.id);
    assert_eq!(billing.default_sender(team).await.unwrap().map(|s| s.id), Some(first.id));
    let next = billing.create_invoice(draft(BillTo::Existing(client.id), &fallback("Other"))).await.unwrap();
    assert_eq!(next.sender_id, first.id, "the team's default stands");
}

/// A logo's bytes, NUL and bytes that are not UTF-8 among them: a store that kept them as text would lose them.
const LOGO: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\xff\xfe\x80\x00";

pub async fn the_document_prints_the_senders_payment_details_and_logo(store: Ports) {
    let f = fixture(store).await;
    let now = at("2026-11-20");
    let billing = f.billing.clone();
    let document = |id| {
        let billing = billing.clone();
        async move {
            let reference = billing::issue::DocumentRef::Invoice(id);
            let issued =
                billing::issue::load(billing.as_ref(), reference, billing::issue::Reader::ByLink).await;
            issued.map(|issued| issued.map(|issued| issued.printed(now)))
        }
    };
    let plain = f.invoice("2026-11-20").await;
    let unset = document(plain.id).await.unwrap().unwrap();
    assert_eq!((unset.payment_details, unset.logo), (None, None), "none set");

    let mut sender = default_sender(&f.billing, f.team).await;
    sender.details.payment_details =
        billing::sender::PaymentDetails::parse("IBAN DE89 3704 0044 0532 0130 00\nNet 14").unwrap();
    f.billing.update_sender(f.team, sender.id, &sender.details, now).await.unwrap().unwrap();
    let printed = document(plain.id).await.unwrap().unwrap().payment_details;
    assert_eq!(
        printed.as_deref(),
        Some("IBAN DE89 3704 0044 0532 0130 00\nNet 14"),
        "the sender's, as it is now"
    );

    let logo = billing::sender::Logo::parse(LOGO.to_vec()).unwrap();
    sender.details.logo = Some(logo.clone());
    f.billing.update_sender(f.team, sender.id, &sender.details, now).await.unwrap().unwrap();
    let carried = document(plain.id).await.unwrap().unwrap().logo.unwrap();
    assert_eq!(carried, billing::document::DocumentLogo::of(&logo));
    assert_eq!(carried.decoded().as_deref(), Some(LOGO), "byte for byte");

    sender.details.logo = None;
    f.billing.update_sender(f.team, sender.id, &sender.details, now).await.unwrap().unwrap();
    assert_eq!(document(plain.id).await.unwrap().unwrap().logo, None, "removed");

    // What e-invoices need of the seller comes back as it was kept.
    let details = &mut sender.details;
    details.city = OptionalText::parse("Zürich").unwrap();
    details.country_code = Some(billing::CountryCode::parse("CH").unwrap());
    details.iban = Some(billing::Iban::parse("CH93 0076 2011 6238 5295 7").unwrap());
    details.bic = Some(billing::Bic::parse("UBSWCHZH80A").unwrap());
    details.contact_name = OptionalText::parse("Zoë Łukasiewicz").unwrap();
    details.contact_phone = OptionalText::parse("+41 44 000 00 00").unwrap();
    details.contact_email = Some(Email::parse("books@acme.example").unwrap());
    f.billing.update_sender(f.team, sender.id, &sender.details, now).await.unwrap().unwrap();
    let kept = f.billing.get_sender(f.team, sender.id).await.unwrap().unwrap();
    assert_eq!(kept.details, sender.details);
    assert_eq!(kept.details.iban.as_ref().map(billing::Iban::as_str), Some("CH9300762011623852957"));
}

pub async fn invoices_filter_by_status_client_issue_date_and_text_and_page_in_order(store: Ports) {
    let f = fixture(store).await;
    let other =
        Client::new(f.team, client_details("Bright Ideas Ltd", "ops@bright.example"), at("2026-01-01"));
    f.billing.create(&other).await.unwrap();
    // Serials 1 to 6, issued on 1 to 6 November, due 30 days later.
    let mut made = Vec::new();
    for day in 1..=6 {
        let bill_to = BillTo::Existing(if day % 2 == 0 { other.id } else { f.client });
        let mut draft = f.draft(bill_to, &format!("2026-11-0{day}"), &[("Work", "10", "1")]);
        draft.description = Some(Description::parse(format!("Sprint {day} of 100% effort")).unwrap());
        made.push(f.billing.create_invoice(draft).await.unwrap());
    }
    let paying = entry(EntryKind::Payment, EntryAmount::AllDue, "2026-11-07");
    f.billing.record_entry(f.team, made[4].id, paying).await.unwrap();
    let serials = |invoices: Vec<Invoice>| invoices.iter().map(|i| i.serial.number()).collect::<Vec<_>>();
    let list = async |filter: InvoiceFilter| serials(f.billing.list_invoices(f.team, &filter).await.unwrap());
    // Due dates are 1 to 6 December: on 3 December 12:00, serials 1 to 3 read OVERDUE.
    let now = at("2026-12-03T12:00:00Z");
    let statuses =
        |statuses: &[InvoiceStatus]| InvoiceFilter { statuses: statuses.to_vec(), now, ..Default::default() };
    assert_eq!(list(statuses(&[InvoiceStatus::Overdue])).await, [3, 2, 1]);
    assert_eq!(list(statuses(&[InvoiceStatus::Pending])).await, [6, 4]);
    assert_eq!(list(statuses(&[InvoiceStatus::Paid, InvoiceStatus::Pending])).await, [6, 5, 4]);
    assert_eq!(list(statuses(&[InvoiceStatus::Pending, InvoiceStatus::Overdue])).await, [6, 4, 3, 2, 1]);
    assert_eq!(list(statuses(&[InvoiceStatus::Expired])).await, Vec::<u32>::new());
    let by_client = InvoiceFilter { client: Some(other.id), ..Default::default() };
    assert_eq!(list(by_client).await, [6, 4, 2]);
    let issued = InvoiceFilter {
        issued_from: Some(at("2026-11-02")),
        issued_before: Some(at("2026-11-05")),
        ..Default::default()
    };
    assert_eq!(list(issued).await, [4, 3, 2]);
    let text = |q: &str| InvoiceFilter { text: Some(SearchText::parse(q).unwrap()), ..Default::default() };
    assert_eq!(list(text("INV-0003")).await, [3], "the serial");
    assert_eq!(list(text("sprint 4")).await, [4], "the description, in any case");
    assert_eq!(list(text("BRIGHT")).await, [6, 4, 2], "the client's name");
    assert_eq!(list(text("100%")).await, [6, 5, 4, 3, 2, 1], "% is a character, not a wildcard");
    assert_eq!(list(text("0%_")).await, Vec::<u32>::new(), "_ is a character, not a wildcard");
    // Pages in listing order, continuing after the last one's position.
    let mut pages = Vec::new();
    let mut after = None;
    loop {
        let filter = InvoiceFilter { after, limit: Some(4), ..Default::default() };
        let page = f.billing.list_invoices(f.team, &filter).await.unwrap();
        after = page.last().map(InvoicePosition::of);
        pages.push(serials(page));
        if after.is_none() {
            break;
        }
    }
    assert_eq!(pages, [vec![6, 5, 4, 3], vec![2, 1], vec![]]);
    let stranger = fixture(f.store.clone()).await;
    assert!(stranger.billing.list_invoices(stranger.team, &text("Sprint")).await.unwrap().is_empty());
}
