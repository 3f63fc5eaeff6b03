//! Quotes: what the work will cost, before the invoice. A draft has no number and may
//! change; finalising (or sending) it gives it the next number of the team's quote series,
//! after which it never changes: a new version is a new quote that supersedes it. Its
//! client accepts or declines it once, and an accepted quote becomes invoices: one full
//! conversion, or deposits and then the final invoice, which deducts them.
//!
//! The status is kept as far as writes decide it (draft, sent, accepted, declined,
//! converted); `EXPIRED` follows from `valid_until` and the clock, as an invoice's
//! `OVERDUE` follows from its due date ([`Quote::status_at`]).

use accounts::TeamId;
use chrono::{DateTime, Utc};
use kernel::Text;
use rust_decimal::Decimal;

use crate::ClientId;
use crate::discount::{Discount, allocate};
pub use crate::invoice::{ConversionKind, FromQuote, QuoteId};
use crate::invoice::{
    Description, Exchange, InvoiceId, InvoiceRule, LineInput, LineItem, LineVat, Pricing, TaxRule, Totals,
};
use crate::money::{Currency, percentage_of, round_to_minor};
use crate::numbering::DocumentNumber;
use crate::vat::{Vat, VatRate};

/// The terms a quote states below its lines: up to 5,000 characters.
pub type QuoteNotes = Text<0, 5000>;
/// The name a client types to accept a quote.
pub type SignerName = Text<1, 200>;
/// Why a client declined a quote, as it wrote it.
pub type DeclineReason = Text<0, 1000>;

/// Where a quote stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum QuoteStatus {
    /// Still being written: no number, and it may change or go.
    Draft,
    /// Numbered and before its client, who has not decided.
    Sent,
    Accepted,
    Declined,
    /// Sent, undecided, and past the date it was valid until.
    Expired,
    /// Its final (or full) invoice is made.
    Converted,
}

kernel::words!(QuoteStatus {
    Draft => "DRAFT",
    Sent => "SENT",
    Accepted => "ACCEPTED",
    Declined => "DECLINED",
    Expired => "EXPIRED",
    Converted => "CONVERTED",
});

/// What the client decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Accepted, signed with the name it typed.
    Accepted {
        signer: SignerName,
    },
    Declined {
        reason: Option<DeclineReason>,
    },
}

/// Where a decision was made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecisionSource {
    /// On the quote's page, from this address and browser (as they were sent: evidence,
    /// not identity).
    Page { ip: String, user_agent: String },
    /// Recorded by the team, which got it another way.
    Team,
}

/// A client's decision on a quote: final once recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub verdict: Verdict,
    pub source: DecisionSource,
    pub at: DateTime<Utc>,
}

/// An invoice made from a quote, as the quote keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuoteInvoice {
    pub invoice_id: InvoiceId,
    pub number: DocumentNumber,
    pub kind: ConversionKind,
    /// Its amount before VAT: what a deposit takes of the quote's.
    pub net: Decimal,
    /// What it asks the client for: what a final invoice deducts of a deposit.
    pub total: Decimal,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quote {
    pub id: QuoteId,
    pub team_id: TeamId,
    pub client_id: ClientId,
    /// Given when it is finalised; none on a draft.
    pub number: Option<DocumentNumber>,
    pub description: Option<Description>,
    pub notes: Option<QuoteNotes>,
    /// The last moment it can be accepted.
    pub valid_until: Option<DateTime<Utc>>,
    pub currency: Currency,
    pub exchange: Exchange,
    pub vat: Vat,
    pub tax_rule: TaxRule,
    pub discount: Option<Discount>,
    /// In position order.
    pub line_items: Vec<LineItem>,
    pub totals: Totals,
    /// When it was numbered and put before its client.
    pub sent_at: Option<DateTime<Utc>>,
    pub decision: Option<Decision>,
    /// The quote this one is a new version of.
    pub supersedes: Option<QuoteId>,
    /// The invoices made from it, in order.
    pub invoices: Vec<QuoteInvoice>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// A rule of quotes a request broke, in the domain's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QuoteRule {
    #[error("the quote is {}: only a draft changes; make a new version that supersedes it", .status.as_str())]
    NotADraft { status: QuoteStatus },
    #[error("the quote is a draft: finalise or send it before its client decides")]
    NotSent,
    #[error("the client has already decided on the quote")]
    AlreadyDecided,
    #[error("the quote expired at {valid_until}")]
    Expired { valid_until: DateTime<Utc> },
    #[error("the quote is {}: only an accepted quote becomes invoices", .status.as_str())]
    NotAccepted { status: QuoteStatus },
    #[error("the quote was invoiced in full as {invoice}")]
    AlreadyConverted { invoice: String },
    #[error("a deposit takes more than nothing of the quote")]
    EmptyDeposit,
    #[error(
        "the deposits would reach the quote's {net} before VAT; {remaining} remains: invoice the rest as the final invoice"
    )]
    DepositTooLarge { net: Decimal, remaining: Decimal },
    #[error("a deposit cannot split a flat tax: give the quote a tax percentage, or invoice it in full")]
    FlatTaxDeposit,
    #[error("the quote it supersedes is not one of the team's")]
    UnknownSuperseded,
    #[error("{0}")]
    Invoice(#[from] InvoiceRule),
}

impl Quote {
    /// How its figures are made: as an invoice's, from its lines, VAT, tax rule and discount.
    pub fn pricing(&self) -> Pricing<'_> {
        Pricing {
            items: &self.line_items,
            vat: &self.vat,
            rule: self.tax_rule,
            discount: self.discount,
            currency: self.currency,
        }
    }

    /// Its final or full invoice, once made.
    pub fn final_invoice(&self) -> Option<&QuoteInvoice> {
        self.invoices.iter().find(|invoice| invoice.kind != ConversionKind::Deposit)
    }

    /// Its status as of `now`.
    pub fn status_at(&self, now: DateTime<Utc>) -> QuoteStatus {
        if self.final_invoice().is_some() {
            return QuoteStatus::Converted;
        }
        match (&self.decision, self.number.is_some()) {
            (Some(Decision { verdict: Verdict::Accepted { .. }, .. }), _) => QuoteStatus::Accepted,
            (Some(Decision { verdict: Verdict::Declined { .. }, .. }), _) => QuoteStatus::Declined,
            (None, false) => QuoteStatus::Draft,
            (None, true) => match self.valid_until {
                Some(until) if until < now => QuoteStatus::Expired,
                _ => QuoteStatus::Sent,
            },
        }
    }

    /// Only a draft is changed or deleted.
    pub fn check_draft(&self, now: DateTime<Utc>) -> Result<(), QuoteRule> {
        match self.status_at(now) {
            QuoteStatus::Draft => Ok(()),
            status => Err(QuoteRule::NotADraft { status }),
        }
    }

    /// Its client decides once, on a sent quote still valid at `now`.
    pub fn check_decidable(&self, now: DateTime<Utc>) -> Result<(), QuoteRule> {
        if self.decision.is_some() || self.final_invoice().is_some() {
            return Err(QuoteRule::AlreadyDecided);
        }
        match (self.status_at(now), self.valid_until) {
            (QuoteStatus::Draft, _) => Err(QuoteRule::NotSent),
            (QuoteStatus::Expired, Some(valid_until)) => Err(QuoteRule::Expired { valid_until }),
            _ => Ok(()),
        }
    }

    /// Invoices are made of an accepted quote, until its final one.
    pub fn check_convertible(&self, now: DateTime<Utc>) -> Result<(), QuoteRule> {
        if let Some(invoice) = self.final_invoice() {
            return Err(QuoteRule::AlreadyConverted { invoice: invoice.number.as_str().to_owned() });
        }
        match self.status_at(now) {
            QuoteStatus::Accepted => Ok(()),
            status => Err(QuoteRule::NotAccepted { status }),
        }
    }

    /// What its deposit invoices took of it before VAT.
    pub fn deposits_net(&self) -> Decimal {
        self.deposits().map(|deposit| deposit.net).sum()
    }

    /// What its deposit invoices asked for: what its final invoice deducts.
    pub fn deposits_total(&self) -> Decimal {
        self.deposits().map(|deposit| deposit.total).sum()
    }

    /// Its deposit invoices, in order.
    pub fn deposits(&self) -> impl Iterator<Item = &QuoteInvoice> {
        self.invoices.iter().filter(|invoice| invoice.kind == ConversionKind::Deposit)
    }
}

/// How much of a quote a deposit takes, before VAT.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DepositSize {
    /// This percentage of each VAT group of the quote.
    Percent(Decimal),
    /// This amount, split over the quote's VAT groups in proportion to them.
    Amount(Decimal),
}

/// A line of a deposit invoice: its share of one VAT group of the quote, taxed at that
/// group's rate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DepositLine {
    pub rate: VatRate,
    /// Before VAT, at the minor unit.
    pub net: Decimal,
}

/// The lines of a deposit of `size` on `quote`: one per VAT group that it takes something
/// of, each its share of the group's amount before VAT. A deposit takes something, and the
/// deposits together stay below the quote's amount before VAT (its rest is the final
/// invoice's).
pub fn deposit_lines(quote: &Quote, size: DepositSize) -> Result<Vec<DepositLine>, QuoteRule> {
    if matches!(quote.tax_rule, TaxRule::Flat(tax) if tax > Decimal::ZERO) {
        return Err(QuoteRule::FlatTaxDeposit);
    }
    let currency = quote.currency;
    let groups = quote.pricing().breakdown()?;
    let bases: Vec<Decimal> = groups.iter().map(|group| group.taxable_amount).collect();
    let net: Decimal = bases.iter().sum();
    let remaining = net - quote.deposits_net();
    let too_large = || QuoteRule::DepositTooLarge { net, remaining };
    let shares = match size {
        DepositSize::Percent(percent) => {
            bases.iter().map(|base| percentage_of(*base, percent, currency)).collect::<Option<Vec<_>>>()
        }
        DepositSize::Amount(amount) => {
            allocate(Discount::Amount(round_to_minor(amount, currency)), &bases, currency)
        }
    }
    .ok_or_else(too_large)?;
    let taken: Decimal = shares.iter().sum();
    if taken <= Decimal::ZERO {
        return Err(QuoteRule::EmptyDeposit);
    }
    if taken >= remaining {
        return Err(too_large());
    }
    Ok(groups
        .into_iter()
        .zip(shares)
        .filter(|(_, share)| *share > Decimal::ZERO)
        .map(|(group, net)| DepositLine { rate: group.rate, net })
        .collect())
}

/// What converting a quote asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConversionMode {
    /// The whole quote: its full invoice, or its final one after deposits.
    Full,
    Deposit(DepositSize),
}

/// The invoice a conversion makes, before the rules of every invoice (its serial, number,
/// dates, the client's and sender's checks) apply: it is made in the quote's currency, at
/// its rate, under its VAT and tax rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvoicePlan {
    pub kind: ConversionKind,
    pub lines: Vec<LineInput>,
    /// The quote's own discount on a full or final invoice; none on a deposit, whose lines
    /// are shares of what remains after it.
    pub discount: Option<Discount>,
    /// What a final invoice deducts: its deposit invoices' totals (EN 16931 BT-113, the
    /// prepaid amount); 0 on the others.
    pub deducted: Decimal,
}

/// The invoice that converting `quote` as `mode` at `now` makes: the quote's lines on a
/// full or final invoice (a final one deducting the deposits), or a deposit's line per VAT
/// group ([`deposit_lines`]), each worded by `deposit_line` from its rate.
pub fn plan_conversion(
    quote: &Quote,
    mode: ConversionMode,
    now: DateTime<Utc>,
    deposit_line: impl Fn(&VatRate) -> Description,
) -> Result<InvoicePlan, QuoteRule> {
    quote.check_convertible(now)?;
    let plan = match mode {
        ConversionMode::Full => {
            let deducted = quote.deposits_total();
            InvoicePlan {
                kind: if quote.deposits().next().is_some() {
                    ConversionKind::Final
                } else {
                    ConversionKind::Full
                },
                lines: quote.line_items.iter().map(line_input).collect(),
                discount: quote.discount,
                deducted,
            }
        }
        ConversionMode::Deposit(size) => InvoicePlan {
            kind: ConversionKind::Deposit,
            lines: deposit_lines(quote, size)?
                .into_iter()
                .map(|line| LineInput {
                    description: deposit_line(&line.rate),
                    unit_price: line.net,
                    quantity: Decimal::ONE,
                    amount: Some(line.net),
                    unit_code: None,
                    vat: LineVat {
                        category: Some(line.rate.category),
                        percentage: Some(line.rate.percentage),
                        exemption_reason: line.rate.exemption_reason,
                    },
                    discount: None,
                })
                .collect(),
            discount: None,
            deducted: Decimal::ZERO,
        },
    };
    Ok(plan)
}

/// A quote's line as an invoice is given it.
pub fn line_input(item: &LineItem) -> LineInput {
    LineInput {
        description: item.description.clone(),
        unit_price: item.unit_price,
        quantity: item.quantity,
        amount: Some(item.amount),
        unit_code: Some(item.unit_code.clone()),
        vat: item.vat.clone(),
        discount: item.discount.map(crate::discount::Allowance::discount),
    }
}

/// Which of a team's quotes a listing shows, and how many. The default shows them all.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QuoteFilter {
    /// Quotes whose status at `now` is one of these; any status when empty.
    pub statuses: Vec<QuoteStatus>,
    /// The instant that decides which sent quotes read EXPIRED.
    pub now: DateTime<Utc>,
    pub client: Option<ClientId>,
    /// Only quotes that come after this position in listing order.
    pub after: Option<QuotePosition>,
    /// At most this many; all of them when `None`.
    pub limit: Option<u32>,
}

impl QuoteFilter {
    /// Whether the listing shows `quote` (before `limit` is applied).
    pub fn matches(&self, quote: &Quote) -> bool {
        (self.statuses.is_empty() || self.statuses.contains(&quote.status_at(self.now)))
            && self.client.is_none_or(|client| quote.client_id == client)
            && self.after.is_none_or(|after| QuotePosition::of(quote) < after)
    }
}

/// Where a quote stands in listing order (newest first, so this order reversed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct QuotePosition {
    pub created_at: DateTime<Utc>,
    pub id: QuoteId,
}

impl QuotePosition {
    pub fn of(quote: &Quote) -> Self {
        Self { created_at: quote.created_at, id: quote.id }
    }
}

/// Puts quotes in listing order: newest first, then by id, descending.
pub fn sort_for_listing(quotes: &mut [Quote]) {
    quotes.sort_by_key(|quote| std::cmp::Reverse(QuotePosition::of(quote)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernel::Id as _;

    use crate::invoice::price_lines;
    use crate::vat::VatCategory;

    fn dec(text: &str) -> Decimal {
        text.parse().unwrap()
    }

    fn at(text: &str) -> DateTime<Utc> {
        text.parse().unwrap()
    }

    fn line(unit_price: &str, quantity: &str, percentage: Option<&str>) -> LineInput {
        LineInput {
            description: Description::parse("Work").unwrap(),
            unit_price: dec(unit_price),
            quantity: dec(quantity),
            amount: None,
            unit_code: None,
            vat: LineVat { percentage: percentage.map(dec), ..LineVat::default() },
            discount: None,
        }
    }

    /// A quote in EUR at 19 %: 1,000.00 at 19 % and, with a line at 7 %, 500.00 more.
    fn quote(reduced_line: bool) -> Quote {
        let eur = Currency::parse("EUR").unwrap();
        let mut lines = vec![line("100", "10", None)];
        if reduced_line {
            lines.push(line("50", "10", Some("7")));
        }
        let line_items = price_lines(lines, eur, at("2026-11-01T00:00:00Z")).unwrap();
        let (vat, tax_rule) = (Vat::default(), TaxRule::Percentage(dec("19")));
        let totals = Pricing { items: &line_items, vat: &vat, rule: tax_rule, discount: None, currency: eur }
            .totals(None)
            .unwrap();
        Quote {
            id: QuoteId::generate(),
            team_id: TeamId::generate(),
            client_id: ClientId::generate(),
            number: None,
            description: None,
            notes: None,
            valid_until: Some(at("2026-12-31T23:59:59Z")),
            currency: eur,
            exchange: Exchange::none(eur),
            vat,
            tax_rule,
            discount: None,
            line_items,
            totals,
            sent_at: None,
            decision: None,
            supersedes: None,
            invoices: Vec::new(),
            created_at: at("2026-11-01T00:00:00Z"),
            updated_at: at("2026-11-01T00:00:00Z"),
        }
    }

    fn sent(mut quote: Quote) -> Quote {
        quote.number = Some(DocumentNumber::stored("Q-0001".to_owned(), 1));
        quote.sent_at = Some(at("2026-11-02T00:00:00Z"));
        quote
    }

    fn decided(mut quote: Quote, verdict: Verdict) -> Quote {
        quote.decision =
            Some(Decision { verdict, source: DecisionSource::Team, at: at("2026-11-03T00:00:00Z") });
        quote
    }

    fn accepted(quote: Quote) -> Quote {
        decided(sent(quote), Verdict::Accepted { signer: SignerName::parse("Zoë").unwrap() })
    }

    fn invoiced(kind: ConversionKind, net: &str, total: &str) -> QuoteInvoice {
        QuoteInvoice {
            invoice_id: InvoiceId::generate(),
            number: DocumentNumber::stored("INV-0007".to_owned(), 7),
            kind,
            net: dec(net),
            total: dec(total),
        }
    }

    #[test]
    fn a_quote_moves_from_draft_to_sent_to_a_decision_and_expires_undecided() {
        let now = at("2026-11-10T00:00:00Z");
        let draft = quote(false);
        assert_eq!(draft.status_at(now), QuoteStatus::Draft);
        assert_eq!(draft.check_draft(now), Ok(()));
        assert_eq!(draft.check_decidable(now), Err(QuoteRule::NotSent));

        let sent = sent(draft);
        assert_eq!(sent.status_at(now), QuoteStatus::Sent);
        assert_eq!(sent.check_draft(now), Err(QuoteRule::NotADraft { status: QuoteStatus::Sent }));
        assert_eq!(sent.check_decidable(now), Ok(()));
        let later = at("2027-01-01T00:00:00Z");
        assert_eq!(sent.status_at(later), QuoteStatus::Expired);
        assert_eq!(
            sent.check_decidable(later),
            Err(QuoteRule::Expired { valid_until: sent.valid_until.unwrap() })
        );

        let declined = decided(sent.clone(), Verdict::Declined { reason: None });
        assert_eq!(declined.status_at(later), QuoteStatus::Declined, "a decision does not expire");
        assert_eq!(declined.check_decidable(now), Err(QuoteRule::AlreadyDecided));
        assert_eq!(
            declined.check_convertible(now),
            Err(QuoteRule::NotAccepted { status: QuoteStatus::Declined })
        );
        assert_eq!(sent.check_convertible(now), Err(QuoteRule::NotAccepted { status: QuoteStatus::Sent }));
    }

    #[test]
    fn an_accepted_quote_takes_deposits_until_its_final_invoice_converts_it() {
        let now = at("2026-11-10T00:00:00Z");
        let mut quote = accepted(quote(false));
        assert_eq!(quote.status_at(now), QuoteStatus::Accepted);
        assert_eq!(quote.check_convertible(now), Ok(()));
        quote.invoices.push(invoiced(ConversionKind::Deposit, "300.00", "357.00"));
        assert_eq!(quote.status_at(now), QuoteStatus::Accepted, "a deposit leaves it accepted");
        assert_eq!(quote.check_convertible(now), Ok(()));
        assert_eq!((quote.deposits_net(), quote.deposits_total()), (dec("300.00"), dec("357.00")));
        quote.invoices.push(invoiced(ConversionKind::Final, "1000.00", "1190.00"));
        assert_eq!(quote.status_at(now), QuoteStatus::Converted);
        assert_eq!(
            quote.check_convertible(now),
            Err(QuoteRule::AlreadyConverted { invoice: "INV-0007".to_owned() })
        );
        assert_eq!(quote.check_decidable(now), Err(QuoteRule::AlreadyDecided));
    }

    #[test]
    fn a_deposit_takes_its_share_of_each_vat_group() {
        let quote = accepted(quote(true));
        let lines = deposit_lines(&quote, DepositSize::Percent(dec("30"))).unwrap();
        let nets: Vec<(Decimal, Decimal)> =
            lines.iter().map(|line| (line.rate.percentage, line.net)).collect();
        assert_eq!(nets, [(dec("19"), dec("300.00")), (dec("7"), dec("150.00"))]);
        assert!(lines.iter().all(|line| line.rate.category == VatCategory::Standard));

        // An amount is split in proportion: 100.00 over 1,000 and 500 is 66.67 and 33.33.
        let lines = deposit_lines(&quote, DepositSize::Amount(dec("100"))).unwrap();
        assert_eq!(lines.iter().map(|line| line.net).collect::<Vec<_>>(), [dec("66.67"), dec("33.33")]);
    }

    #[test]
    fn a_conversion_repeats_the_quote_or_bills_a_deposit_per_vat_group_and_the_final_deducts_the_deposits() {
        let now = at("2026-11-10T00:00:00Z");
        let words = |rate: &VatRate| Description::parse(format!("Deposit at {} %", rate.percentage)).unwrap();
        let mut quote = accepted(quote(true));
        assert_eq!(
            plan_conversion(&sent(self::quote(true)), ConversionMode::Full, now, words),
            Err(QuoteRule::NotAccepted { status: QuoteStatus::Sent })
        );

        let deposit =
            plan_conversion(&quote, ConversionMode::Deposit(DepositSize::Percent(dec("30"))), now, words)
                .unwrap();
        assert_eq!(
            (deposit.kind, deposit.deducted, deposit.discount),
            (ConversionKind::Deposit, Decimal::ZERO, None)
        );
        // Priced as every invoice is, the deposit's lines give each group its share, taxed
        // at its rate: 300.00 at 19 % and 150.00 at 7 %.
        let items = price_lines(deposit.lines, quote.currency, now).unwrap();
        assert_eq!(items[1].description.as_str(), "Deposit at 7 %");
        let totals = Pricing {
            items: &items,
            vat: &quote.vat,
            rule: quote.tax_rule,
            discount: None,
            currency: quote.currency,
        }
        .totals(None)
        .unwrap();
        assert_eq!((totals.subtotal, totals.tax, totals.total), (dec("450.00"), dec("67.50"), dec("517.50")));
        quote.invoices.push(invoiced(ConversionKind::Deposit, "450.00", "517.50"));

        let last = plan_conversion(&quote, ConversionMode::Full, now, words).unwrap();
        assert_eq!((last.kind, last.deducted), (ConversionKind::Final, dec("517.50")));
        let items = price_lines(last.lines, quote.currency, now).unwrap();
        assert_eq!(
            items.iter().map(|item| (item.amount, item.vat.clone())).collect::<Vec<_>>(),
            quote.line_items.iter().map(|item| (item.amount, item.vat.clone())).collect::<Vec<_>>()
        );

        let whole = plan_conversion(&accepted(self::quote(false)), ConversionMode::Full, now, words).unwrap();
        assert_eq!((whole.kind, whole.deducted), (ConversionKind::Full, Decimal::ZERO));
    }

    #[test]
    fn a_flat_tax_is_not_split_over_deposits() {
        let mut quote = accepted(quote(false));
        quote.tax_rule = TaxRule::Flat(dec("50"));
        assert_eq!(deposit_lines(&quote, DepositSize::Percent(dec("30"))), Err(QuoteRule::FlatTaxDeposit));
        quote.tax_rule = TaxRule::Flat(Decimal::ZERO);
        assert_eq!(deposit_lines(&quote, DepositSize::Percent(dec("30"))).unwrap()[0].net, dec("300.00"));
    }

    #[test]
    fn deposits_stay_below_the_quote_and_take_something() {
        let mut quote = accepted(quote(false));
        assert_eq!(deposit_lines(&quote, DepositSize::Percent(Decimal::ZERO)), Err(QuoteRule::EmptyDeposit));
        assert_eq!(
            deposit_lines(&quote, DepositSize::Percent(dec("100"))),
            Err(QuoteRule::DepositTooLarge { net: dec("1000.00"), remaining: dec("1000.00") })
        );
        assert_eq!(
            deposit_lines(&quote, DepositSize::Amount(dec("1000.01"))),
            Err(QuoteRule::DepositTooLarge { net: dec("1000.00"), remaining: dec("1000.00") })
        );
        quote.invoices.push(invoiced(ConversionKind::Deposit, "600.00", "714.00"));
        assert_eq!(
            deposit_lines(&quote, DepositSize::Percent(dec("40"))),
            Err(QuoteRule::DepositTooLarge { net: dec("1000.00"), remaining: dec("400.00") })
        );
        assert_eq!(deposit_lines(&quote, DepositSize::Percent(dec("39.99"))).unwrap()[0].net, dec("399.90"));
    }
}
