//! Invoices and their line items: the totals rules, status, serials.

use accounts::TeamId;
use chrono::{DateTime, Utc};
use kernel::{InvalidValue, SearchText, Text, Words, define_id};
use rust_decimal::Decimal;

pub use crate::discount::{Allowance, Discount};
use crate::money::{Currency, MAX_LINE_ITEMS, line_amount, percentage_of, round_to_minor};
pub use crate::vat::{ExemptionReason, LineVat, Vat, VatCategory, VatGroup, VatRate, VatRule};
use crate::{ClientDetails, ClientId, SenderAddressId, SenderDetails};

define_id!(
    /// Identifies an invoice. Unguessable: it is all the public PDF link carries.
    InvoiceId
);
define_id!(
    /// Identifies a line item of an invoice.
    LineItemId
);
define_id!(
    /// Identifies a recurring invoice (the `recurring` crate has its rules): an invoice it
    /// made names it.
    RecurringInvoiceId
);

/// The recurring invoice an invoice was made for, and its place among that one's invoices:
/// 1 for the first, with no gap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Recurrence {
    pub recurring_invoice_id: RecurringInvoiceId,
    pub sequence: u32,
}

/// An invoice's or a line item's description: at most 1000 characters.
pub type Description = Text<0, 1000>;

/// Declares a team's running count of a kind of document, from 1: gapless per team, which
/// storage keeps, and the order its listings follow. What the document shows is its
/// [`crate::numbering::DocumentNumber`].
macro_rules! serial {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(u32);

        impl $name {
            pub const FIRST: Self = Self(1);

            pub fn new(number: u32) -> Option<Self> {
                (number > 0).then_some(Self(number))
            }

            pub fn number(self) -> u32 {
                self.0
            }

            /// The serial after this one.
            #[must_use]
            pub fn next(self) -> Self {
                Self(self.0.saturating_add(1))
            }
        }

    };
}
pub(crate) use serial;

serial!(
    /// The team's running count of its invoices, from 1.
    Serial
);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InvoiceStatus {
    Pending,
    Paid,
    PaidPartial,
    Expired,
    Overdue,
}

kernel::words!(InvoiceStatus {
    Pending => "PENDING",
    Paid => "PAID",
    PaidPartial => "PAID_PARTIAL",
    Expired => "EXPIRED",
    Overdue => "OVERDUE",
});

impl InvoiceStatus {
    pub fn parse(text: &str) -> Result<Self, InvalidValue> {
        Self::parse_word(text)
    }
}

/// A line item as a caller gives it, each number within its bounds
/// ([`crate::money::UNIT_PRICE`], [`crate::money::QUANTITY`], [`crate::money::AMOUNT`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineInput {
    pub description: Description,
    pub unit_price: Decimal,
    pub quantity: Decimal,
    /// The amount the caller sent, to be checked; `None` when left out.
    pub amount: Option<Decimal>,
    /// What the quantity counts; one (`C62`) when `None`.
    pub unit_code: Option<crate::party::UnitCode>,
    /// What it states of its VAT; the invoice's where it states nothing.
    pub vat: LineVat,
    /// Its discount, if any (EN 16931 BG-27).
    pub discount: Option<Discount>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineItem {
    pub id: LineItemId,
    pub description: Description,
    /// As given: a unit price may be finer than the minor unit.
    pub unit_price: Decimal,
    pub quantity: Decimal,
    /// `unit_price × quantity`, rounded to the minor unit.
    pub amount: Decimal,
    /// 0-based position in the invoice.
    pub position: u32,
    /// What the quantity counts (`HUR` for time, `C62` unless given).
    pub unit_code: crate::party::UnitCode,
    /// What it states of its VAT ([`LineVat::resolve`] gives its rate).
    pub vat: LineVat,
    /// What its discount takes off its amount.
    pub discount: Option<Allowance>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl LineItem {
    /// Its amount after its discount (EN 16931 BT-131): what its VAT group sums.
    pub fn net_amount(&self) -> Decimal {
        self.amount - self.discount.map_or(Decimal::ZERO, |discount| discount.amount)
    }
}

/// A rule of an invoice that a request broke, in the domain's words. Each front end words
/// it for its callers (the REST API names its JSON fields: `lineItems[0].amount`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvoiceRule {
    #[error("an invoice has at least one line item")]
    NoLineItems,
    #[error("an invoice has at most {MAX_LINE_ITEMS} line items")]
    TooManyLineItems,
    /// The unit price times the quantity of line `line` (0-based) is past what money holds.
    #[error("line {line}: its unit price times its quantity is too large")]
    LineTooLarge { line: u32 },
    /// Line `line` (0-based) gave an amount other than its unit price times its quantity.
    #[error("line {line}: its amount must be its unit price times its quantity, {expected}")]
    LineAmountMismatch { line: u32, expected: Decimal },
    /// Line `line` (0-based) takes a discount of more than its amount.
    #[error("line {line}: its discount is more than its amount, {amount}")]
    LineDiscountTooLarge { line: u32, amount: Decimal },
    /// The document's discount is more than what its lines come to after their own.
    #[error("the discount is more than the lines' net amount, {net}")]
    DiscountTooLarge { net: Decimal },
    #[error("the subtotal times the tax percentage is too large")]
    TaxTooLarge,
    /// A tax given beside a percentage that is not the tax the percentage makes.
    #[error("the tax must be the subtotal times the tax percentage, {expected}, or be left out")]
    TaxMismatch { expected: Decimal },
    /// A tax given beside lines at rates of their own that is not the sum of each rate's.
    #[error("the tax must be what the lines' tax percentages make, {expected}, or be left out")]
    TaxMismatchPerRate { expected: Decimal },
    #[error("the due date is before the issue date")]
    DueBeforeIssue,
    #[error("no such client in the team")]
    UnknownClient,
    #[error("no such sender address in the team")]
    UnknownSender,
    /// An exempt, reverse-charge, intra-community, export or out-of-scope invoice says why
    /// it carries no VAT.
    #[error("VAT category {} needs the reason for the exemption", .0.as_str())]
    ExemptionReasonNeeded(VatCategory),
    /// A standard-rated or zero-rated invoice has no exemption to explain.
    #[error("VAT category {} takes no exemption reason", .0.as_str())]
    ExemptionReasonNotTaken(VatCategory),
    /// Only the standard category charges VAT.
    #[error("VAT category {} charges no VAT: the tax must be 0", .0.as_str())]
    TaxOutsideStandard(VatCategory),
    /// Line `line` (0-based) states a VAT that breaks a rule of its category.
    #[error("line {line}: {rule}")]
    LineVat { line: u32, rule: VatRule },
    /// A flat tax beside lines that state rates of their own: the tax is then the sum of
    /// each rate's.
    #[error("a line states its own VAT rate, so the tax is computed per rate and takes no flat amount")]
    FlatTaxWithLineRates,
    /// An invoice in another currency than the team's states the rate between them.
    #[error("an invoice in {invoice} needs the exchange rate to the team's {team}")]
    ExchangeRateNeeded { invoice: Currency, team: Currency },
    /// An invoice in the team's currency has no rate to state.
    #[error("an invoice in the team's currency {0} takes no exchange rate")]
    ExchangeRateNotTaken(Currency),
    /// The total at the exchange rate is past what money holds.
    #[error("the total at the exchange rate is too large")]
    TeamTotalTooLarge,
    /// An invoice is in its client's currency: a client billed in another cannot take it.
    #[error("the client is billed in {client}, the invoice is in {invoice}")]
    ClientCurrencyDiffers { client: Currency, invoice: Currency },
    /// A final invoice's total may not fall below the deposits it deducts.
    #[error("the total may not fall below the deposits the invoice deducts, {deducted}")]
    BelowDeposits { deducted: Decimal },
}

impl InvoiceRule {
    /// An invoice's own category and reason that [`Vat::new`] refused, in the invoice's
    /// terms.
    pub fn of_invoice_vat(rule: VatRule) -> Self {
        match rule {
            VatRule::ReasonNeeded(category) => Self::ExemptionReasonNeeded(category),
            VatRule::ReasonNotTaken(category) => Self::ExemptionReasonNotTaken(category),
            // Vat::new refuses only by the reason; a rate is the lines' to break.
            rule => Self::LineVat { line: 0, rule },
        }
    }
}

/// The team's currency, and the rate to it of an invoice in another: what makes the
/// invoice's figures in the team's currency (`totalInTeamCurrency`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exchange {
    pub team_currency: Currency,
    /// Units of the team's currency per unit of the invoice's; `None` for an invoice in
    /// the team's currency.
    pub rate: Option<Decimal>,
}

impl Exchange {
    /// The exchange of an invoice in `currency` for a team in `team_currency`: a rate
    /// exactly where the two differ.
    pub fn new(
        currency: Currency,
        team_currency: Currency,
        rate: Option<Decimal>,
    ) -> Result<Self, InvoiceRule> {
        match (currency == team_currency, rate) {
            (true, Some(_)) => Err(InvoiceRule::ExchangeRateNotTaken(currency)),
            (false, None) => Err(InvoiceRule::ExchangeRateNeeded { invoice: currency, team: team_currency }),
            _ => Ok(Self { team_currency, rate }),
        }
    }

    /// The exchange of an invoice in the team's currency.
    pub fn none(team_currency: Currency) -> Self {
        Self { team_currency, rate: None }
    }

    /// `amount` of the invoice in the team's currency, rounded to its minor unit; `None`
    /// past what a decimal holds.
    pub fn in_team_currency(&self, amount: Decimal) -> Option<Decimal> {
        let amount = match self.rate {
            Some(rate) => amount.checked_mul(rate)?,
            None => amount,
        };
        Some(round_to_minor(amount, self.team_currency))
    }
}

/// Checks every item's amount and numbers the items in order. The stored amount is
/// `unitPrice × quantity` rounded to the minor unit; a given amount must round to it.
pub fn price_lines(
    inputs: Vec<LineInput>,
    currency: Currency,
    now: DateTime<Utc>,
) -> Result<Vec<LineItem>, InvoiceRule> {
    use kernel::Id;
    if inputs.is_empty() {
        return Err(InvoiceRule::NoLineItems);
    }
    if inputs.len() > MAX_LINE_ITEMS {
        return Err(InvoiceRule::TooManyLineItems);
    }
    inputs
        .into_iter()
        .zip(0_u32..)
        .map(|(input, position)| {
            let expected = line_amount(input.unit_price, input.quantity, currency)
                .ok_or(InvoiceRule::LineTooLarge { line: position })?;
            if let Some(given) = input.amount
                && round_to_minor(given, currency) != expected
            {
                return Err(InvoiceRule::LineAmountMismatch { line: position, expected });
            }
            let discount = input
                .discount
                .map(|discount| {
                    discount
                        .off(expected, currency)
                        .ok_or(InvoiceRule::LineDiscountTooLarge { line: position, amount: expected })
                })
                .transpose()?;
            Ok(LineItem {
                id: LineItemId::generate(),
                description: input.description,
                unit_price: input.unit_price,
                quantity: input.quantity,
                amount: expected,
                position,
                unit_code: input.unit_code.unwrap_or_else(crate::party::UnitCode::one),
                vat: input.vat,
                discount,
                created_at: now,
                updated_at: now,
            })
        })
        .collect()
}

/// How an invoice's tax comes about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaxRule {
    /// `subtotal × percentage / 100`, rounded; the percentage is greater than 0.
    Percentage(Decimal),
    /// A flat amount, rounded (the rule when `taxPercentage` is 0).
    Flat(Decimal),
}

impl TaxRule {
    /// The rule stored as a percentage and a tax amount.
    pub fn from_stored(percentage: Decimal, tax: Decimal) -> Self {
        if percentage > Decimal::ZERO { Self::Percentage(percentage) } else { Self::Flat(tax) }
    }

    /// The rule after a change of `taxPercentage` and/or `tax`; either may be absent
    /// (`None`), which keeps the current rule (`None` on create: a flat 0).
    pub fn changed(current: Option<Self>, percentage: Option<Decimal>, tax: Option<Decimal>) -> Self {
        match (percentage, current) {
            (Some(p), _) if p > Decimal::ZERO => Self::Percentage(p),
            (None, Some(Self::Percentage(p))) => Self::Percentage(p),
            (None, Some(Self::Flat(flat))) => Self::Flat(tax.unwrap_or(flat)),
            _ => Self::Flat(tax.unwrap_or(Decimal::ZERO)),
        }
    }

    pub fn percentage(self) -> Decimal {
        match self {
            Self::Percentage(p) => p,
            Self::Flat(_) => Decimal::ZERO,
        }
    }
}

/// An invoice's computed sums, each rounded to the minor unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Totals {
    /// Σ amount: before any discount.
    pub subtotal: Decimal,
    /// What the lines' discounts and the document's take off the subtotal.
    pub discount_total: Decimal,
    pub tax: Decimal,
    /// `subtotal − discount_total + tax`.
    pub total: Decimal,
}

/// What a document's figures come from: its lines, its VAT, its tax rule and its discount.
#[derive(Debug, Clone, Copy)]
pub struct Pricing<'a> {
    pub items: &'a [LineItem],
    pub vat: &'a Vat,
    pub rule: TaxRule,
    /// The document's own discount (EN 16931 BG-20), beside its lines'.
    pub discount: Option<Discount>,
    pub currency: Currency,
}

impl Pricing<'_> {
    /// The VAT breakdown ([`breakdown`]).
    pub fn breakdown(&self) -> Result<Vec<VatGroup>, InvoiceRule> {
        breakdown(self.items, self.vat, self.rule, self.discount, self.currency)
    }

    /// The totals: the tax is the sum of the VAT breakdown's groups. `given_tax` is the
    /// tax a caller sent beside a percentage: it must agree with the computed one.
    pub fn totals(&self, given_tax: Option<Decimal>) -> Result<Totals, InvoiceRule> {
        let Self { items, vat, rule, currency, .. } = *self;
        let groups = self.breakdown()?;
        let subtotal = round_to_minor(items.iter().map(|item| item.amount).sum(), currency);
        let line_discounts: Decimal = items.iter().filter_map(|item| item.discount).map(|d| d.amount).sum();
        let document_discount: Decimal = groups.iter().map(|group| group.discount).sum();
        let discount_total = round_to_minor(line_discounts + document_discount, currency);
        let tax = round_to_minor(groups.iter().map(|group| group.tax_amount).sum(), currency);
        if let (TaxRule::Percentage(_), Some(given)) = (rule, given_tax)
            && round_to_minor(given, currency) != tax
        {
            let per_rate = own_rates(items, vat, rule).next().is_some() || !discount_total.is_zero();
            return Err(if per_rate {
                InvoiceRule::TaxMismatchPerRate { expected: tax }
            } else {
                InvoiceRule::TaxMismatch { expected: tax }
            });
        }
        let total = round_to_minor(subtotal - discount_total + tax, currency);
        Ok(Totals { subtotal, discount_total, tax, total })
    }
}

impl Totals {
    /// The totals of `items` on an invoice of `vat` under `rule`, without a document
    /// discount ([`Pricing::totals`]).
    pub fn compute(
        items: &[LineItem],
        vat: &Vat,
        rule: TaxRule,
        given_tax: Option<Decimal>,
        currency: Currency,
    ) -> Result<Self, InvoiceRule> {
        Pricing { items, vat, rule, discount: None, currency }.totals(given_tax)
    }

    /// What the tax is computed on: the subtotal less every discount (EN 16931 BT-109).
    pub fn taxable_amount(&self) -> Decimal {
        self.subtotal - self.discount_total
    }
}

/// The lines of `items` whose rate is not the invoice's own: the lines that state their
/// own VAT, by 0-based position, with their rate.
fn own_rates<'a>(
    items: &'a [LineItem],
    vat: &'a Vat,
    rule: TaxRule,
) -> impl Iterator<Item = (u32, VatRate)> + 'a {
    let invoices = VatRate::of_invoice(vat, rule.percentage());
    items.iter().filter_map(move |item| {
        let rate = item.vat.resolve(vat, rule.percentage());
        (rate != invoices).then_some((item.position, rate))
    })
}

/// The VAT breakdown of `items` on an invoice of `vat` and `rule` with the document's
/// `discount`, in `currency`.
///
/// Where every line is taxed at the invoice's own rate, there is one group, taxed as
/// invoices always were: its taxable amount at the invoice's percentage, or its flat tax.
/// Once a line states a rate of its own, each (category, percentage, reason) group is taxed
/// at its percentage, in the order of the lines, and a flat tax is refused. A group sums
/// its lines' net amounts; the document's discount is allocated to the groups
/// ([`crate::discount::allocate`]) before each is taxed.
pub fn breakdown(
    items: &[LineItem],
    vat: &Vat,
    rule: TaxRule,
    discount: Option<Discount>,
    currency: Currency,
) -> Result<Vec<VatGroup>, InvoiceRule> {
    let invoices = VatRate::of_invoice(vat, rule.percentage());
    let mut stated = own_rates(items, vat, rule).peekable();
    let single = stated.peek().is_none();
    let mut first_out_of_scope = None;
    if !single {
        if let TaxRule::Flat(flat) = rule
            && !flat.is_zero()
        {
            return Err(InvoiceRule::FlatTaxWithLineRates);
        }
        for (line, rate) in stated {
            rate.check().map_err(|rule| InvoiceRule::LineVat { line, rule })?;
            if rate.category == VatCategory::OutOfScope {
                first_out_of_scope.get_or_insert(line);
            }
        }
    }
    let group = |rate| VatGroup {
        rate,
        lines_amount: Decimal::ZERO,
        discount: Decimal::ZERO,
        taxable_amount: Decimal::ZERO,
        tax_amount: Decimal::ZERO,
    };
    let mut groups: Vec<VatGroup> = if single { vec![group(invoices)] } else { Vec::new() };
    for item in items {
        let rate = if single { groups[0].rate.clone() } else { item.vat.resolve(vat, rule.percentage()) };
        match groups.iter_mut().find(|group| group.rate == rate) {
            Some(group) => group.lines_amount += item.net_amount(),
            None => groups.push(VatGroup { lines_amount: item.net_amount(), ..group(rate) }),
        }
    }
    let out_of_scope = groups.iter().any(|group| group.rate.category == VatCategory::OutOfScope);
    if out_of_scope && groups.len() > 1 {
        let line = first_out_of_scope.or_else(|| own_rates(items, vat, rule).next().map(|(line, _)| line));
        return Err(InvoiceRule::LineVat { line: line.unwrap_or_default(), rule: VatRule::OutOfScopeMixed });
    }
    for group in &mut groups {
        group.lines_amount = round_to_minor(group.lines_amount, currency);
    }
    if let Some(discount) = discount {
        let bases: Vec<Decimal> = groups.iter().map(|group| group.lines_amount).collect();
        let net = round_to_minor(bases.iter().sum(), currency);
        let shares = crate::discount::allocate(discount, &bases, currency)
            .ok_or(InvoiceRule::DiscountTooLarge { net })?;
        for (group, share) in groups.iter_mut().zip(shares) {
            group.discount = share;
        }
    }
    for group in &mut groups {
        group.taxable_amount = round_to_minor(group.lines_amount - group.discount, currency);
        group.tax_amount = match rule {
            TaxRule::Flat(flat) if single => round_to_minor(flat, currency),
            _ => percentage_of(group.taxable_amount, group.rate.percentage, currency)
                .ok_or(InvoiceRule::TaxTooLarge)?,
        };
        // The lines that follow an invoice of a category without VAT at a percentage.
        if !group.rate.category.charges_vat() && !group.tax_amount.is_zero() {
            return Err(InvoiceRule::TaxOutsideStandard(group.rate.category));
        }
    }
    Ok(groups)
}

/// The rules of the lines' own categories that name the parties: reverse charge (AE) the
/// buyer's VAT number, intra-community supply (K) both parties' and the country delivered
/// to. Lines taxed at the invoice's own rate are held to them by the e-invoice exports.
pub fn check_parties(
    items: &[LineItem],
    vat: &Vat,
    rule: TaxRule,
    client: &ClientDetails,
    sender: &SenderDetails,
) -> Result<(), InvoiceRule> {
    let named = |text: &crate::client::OptionalText| !text.as_str().trim().is_empty();
    for (line, rate) in own_rates(items, vat, rule) {
        let broken = match rate.category {
            VatCategory::ReverseCharge | VatCategory::IntraCommunity if !named(&client.vat_number) => {
                Some(VatRule::BuyerVatNumberNeeded(rate.category))
            }
            VatCategory::IntraCommunity if !named(&sender.vat_number) => Some(VatRule::SellerVatNumberNeeded),
            VatCategory::IntraCommunity if client.country_code.is_none() => {
                Some(VatRule::DeliveryCountryNeeded)
            }
            _ => None,
        };
        if let Some(rule) = broken {
            return Err(InvoiceRule::LineVat { line, rule });
        }
    }
    Ok(())
}

/// Whether any line of `items` states a category that names the parties
/// ([`check_parties`]): only then are they read.
pub fn names_parties(items: &[LineItem], vat: &Vat, rule: TaxRule) -> bool {
    own_rates(items, vat, rule)
        .any(|(_, rate)| matches!(rate.category, VatCategory::ReverseCharge | VatCategory::IntraCommunity))
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invoice {
    pub id: InvoiceId,
    pub team_id: TeamId,
    /// Its place in the team's invoices: what listings order by.
    pub serial: Serial,
    /// Its number as issued, by the team's pattern then.
    pub number: crate::numbering::DocumentNumber,
    /// What its client quotes with a transfer (EN 16931 BT-83): made from its number when
    /// it was made, and never changed.
    pub payment_reference: crate::PaymentReference,
    pub description: Option<Description>,
    pub issue_date: DateTime<Utc>,
    pub due_date: Option<DateTime<Utc>>,
    /// As the ledger leaves it (`PENDING`, `PAID`, `PAID_PARTIAL` or `EXPIRED`); see
    /// [`Invoice::status_at`] for the status reported.
    pub status: InvoiceStatus,
    /// The team's currency when the invoice was made.
    pub currency: Currency,
    pub tax_rule: TaxRule,
    /// Its own discount (EN 16931 BG-20), beside its lines'.
    pub discount: Option<Discount>,
    pub totals: Totals,
    /// What its ledger leaves: paid, credited, written off, due. Its `total` is
    /// [`Invoice::payable`].
    pub balance: crate::ledger::Balance,
    pub client_id: ClientId,
    pub sender_id: SenderAddressId,
    /// In position order.
    pub line_items: Vec<LineItem>,
    /// Where sending and chasing it stand.
    pub chasing: Chasing,
    /// The recurring invoice it was made for, if any.
    pub recurrence: Option<Recurrence>,
    /// Its VAT category (standard unless given).
    pub vat: Vat,
    /// The team's currency and the rate to it (where the invoice is in another).
    pub exchange: Exchange,
    /// When the service was rendered, and the buyer's order.
    pub supply: crate::Supply,
    /// The quote it was made from, if any.
    pub from_quote: Option<FromQuote>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// Where sending an invoice and chasing its payment stand: kept on the invoice by the store
/// that sends its messages and reminders (the `notify` crate has the rules).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Chasing {
    /// When it was first e-mailed.
    pub sent_at: Option<DateTime<Utc>>,
    /// Reminders of it sent.
    pub reminders_sent: u32,
    /// The last step of the team's reminder policy handled: days after the due date.
    pub reminder_step: Option<i32>,
    /// When the next reminder is due; `None` when none will be.
    pub next_reminder_at: Option<DateTime<Utc>>,
}

impl Invoice {
    /// What its client is asked to pay, before payments: its total, less the deposits a
    /// final invoice deducts (EN 16931 BT-115 before BT-113's prepaid amount is taken).
    pub fn payable(&self) -> Decimal {
        self.totals.total - self.deposits_deducted()
    }

    /// What it deducts for the deposit invoices of its quote: 0 but on a final invoice.
    pub fn deposits_deducted(&self) -> Decimal {
        self.from_quote.as_ref().map_or(Decimal::ZERO, |link| link.deducted)
    }

    /// Its VAT breakdown: one group per category, percentage and reason of its lines.
    pub fn vat_breakdown(&self) -> Vec<VatGroup> {
        // Its totals were computed from the same breakdown when it was written.
        self.pricing().breakdown().unwrap_or_default()
    }

    /// What its figures come from.
    pub fn pricing(&self) -> Pricing<'_> {
        Pricing {
            items: &self.line_items,
            vat: &self.vat,
            rule: self.tax_rule,
            discount: self.discount,
            currency: self.currency,
        }
    }

    /// The status reported at `now`: a PENDING invoice whose due date has passed is
    /// OVERDUE.
    pub fn status_at(&self, now: DateTime<Utc>) -> InvoiceStatus {
        match (self.status, self.due_date) {
            (InvoiceStatus::Pending, Some(due)) if due < now => InvoiceStatus::Overdue,
            (status, _) => status,
        }
    }
}

/// A due date may not come before the issue date.
pub fn check_dates(issue: DateTime<Utc>, due: Option<DateTime<Utc>>) -> Result<(), InvoiceRule> {
    match due {
        Some(due) if due < issue => Err(InvoiceRule::DueBeforeIssue),
        _ => Ok(()),
    }
}

/// Puts invoices in listing order: newest `issueDate` first, then `serial` descending.
pub fn sort_for_listing(invoices: &mut [Invoice]) {
    invoices.sort_by_key(|invoice| std::cmp::Reverse(InvoicePosition::of(invoice)));
}

/// Where an invoice stands in listing order (which is this order, reversed): what a page
/// of a listing continues after.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InvoicePosition {
    pub issue_date: DateTime<Utc>,
    pub serial: Serial,
}

impl InvoicePosition {
    pub fn of(invoice: &Invoice) -> Self {
        Self { issue_date: invoice.issue_date, serial: invoice.serial }
    }
}

/// Which of a team's invoices a listing shows, and how many. The default shows them all.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InvoiceFilter {
    /// Invoices whose status at `now` is one of these; any status when empty.
    pub statuses: Vec<InvoiceStatus>,
    /// The instant that decides which PENDING invoices read OVERDUE.
    pub now: DateTime<Utc>,
    pub client: Option<ClientId>,
    /// Issued at or after this instant.
    pub issued_from: Option<DateTime<Utc>>,
    /// Issued before this instant.
    pub issued_before: Option<DateTime<Utc>>,
    /// Invoices whose number the text names ([`crate::numbering::NumberQuery`]), or whose
    /// description or client's name holds it.
    pub text: Option<SearchText>,
    /// Only invoices that come after this position in listing order.
    pub after: Option<InvoicePosition>,
    /// At most this many invoices; all of them when `None`.
    pub limit: Option<u32>,
}

impl InvoiceFilter {
    /// Whether `invoice`, billed to a client named `client_name`, is one the listing shows
    /// (before `limit` is applied).
    pub fn matches(&self, invoice: &Invoice, client_name: &str) -> bool {
        (self.statuses.is_empty() || self.statuses.contains(&invoice.status_at(self.now)))
            && self.client.is_none_or(|client| invoice.client_id == client)
            && self.issued_from.is_none_or(|from| invoice.issue_date >= from)
            && self.issued_before.is_none_or(|before| invoice.issue_date < before)
            && self.text.as_ref().is_none_or(|text| {
                crate::numbering::NumberQuery::of(text.as_str()).names(&invoice.number)
                    || invoice.description.as_ref().is_some_and(|d| text.found_in(d.as_str()))
                    || text.found_in(client_name)
            })
            && self.after.is_none_or(|after| InvoicePosition::of(invoice) < after)
    }
}

define_id!(
    /// Identifies a quote. Unguessable, as an invoice's id is.
    QuoteId
);

/// How an invoice made from a quote bills it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConversionKind {
    /// The whole quote, with no deposit before it.
    Full,
    /// A share of the quote, paid ahead of the work.
    Deposit,
    /// The whole quote less the deposits invoiced before it.
    Final,
}

kernel::words!(ConversionKind {
    Full => "full",
    Deposit => "deposit",
    Final => "final",
});

/// The quote an invoice was made from, as the invoice keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FromQuote {
    pub quote_id: QuoteId,
    pub kind: ConversionKind,
    /// On a final invoice, the deposit invoices it deducts, in order; none on the others.
    pub deposit_invoices: Vec<InvoiceId>,
    /// What it deducts: those deposit invoices' totals (EN 16931 BT-113); 0 on the others.
    pub deducted: Decimal,
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::money::{QUANTITY, UNIT_PRICE, parse_decimal};

    fn dec(text: &str) -> Decimal {
        parse_decimal(text).unwrap()
    }

    fn currency(code: &str) -> Currency {
        Currency::parse(code).unwrap()
    }

    fn line(unit_price: &str, quantity: &str, amount: &str) -> LineInput {
        LineInput {
            discount: None,
            description: Description::parse("Work").unwrap(),
            unit_price: dec(unit_price),
            quantity: dec(quantity),
            amount: Some(dec(amount)),
            unit_code: None,
            vat: LineVat::default(),
        }
    }

    fn totals(lines: Vec<LineInput>, rule: TaxRule, code: &str) -> Result<Totals, InvoiceRule> {
        let items = price_lines(lines, currency(code), Utc::now())?;
        Totals::compute(&items, &crate::Vat::default(), rule, None, currency(code))
    }

    #[test]
    fn serials_count_from_one() {
        assert_eq!(Serial::FIRST.number(), 1);
        assert_eq!(Serial::new(42).unwrap().next().number(), 43);
        assert_eq!(Serial::new(0), None);
    }

    #[test]
    fn representative_totals() {
        let at = |p: &str| TaxRule::Percentage(dec(p));
        let cases = [
            (
                vec![line("100", "2", "200"), line("49.99", "1", "49.99")],
                TaxRule::Flat(Decimal::ZERO),
                "EUR",
                ("249.99", "0.00", "249.99"),
            ),
            (vec![line("19.99", "3", "59.97")], at("7.5"), "USD", ("59.97", "4.50", "64.47")),
            (
                vec![line("100", "1", "100"), line("0.5", "3", "1.5")],
                at("19"),
                "EUR",
                ("101.50", "19.29", "120.79"),
            ),
            (vec![line("1234", "3", "3702")], at("10"), "JPY", ("3702", "370", "4072")),
            (vec![line("80", "1", "80")], TaxRule::Flat(dec("12.345")), "EUR", ("80.00", "12.35", "92.35")),
            (
                vec![line("0.1", "3", "0.30000000000000004")],
                TaxRule::Flat(Decimal::ZERO),
                "USD",
                ("0.30", "0.00", "0.30"),
            ),
            (vec![line("1.2345", "2", "2.469")], at("5"), "KWD", ("2.469", "0.123", "2.592")),
        ];
        for (lines, rule, code, (subtotal, tax, total)) in cases {
            let t = totals(lines, rule, code).unwrap();
            assert_eq!(
                (t.subtotal.to_string(), t.tax.to_string(), t.total.to_string()),
                (subtotal.to_owned(), tax.to_owned(), total.to_owned()),
                "{rule:?} {code}"
            );
        }
    }

    #[test]
    fn a_wrong_amount_names_the_item_and_the_expected_value() {
        let error =
            price_lines(vec![line("1", "1", "1"), line("0.1", "3", "0.31")], currency("USD"), Utc::now())
                .unwrap_err();
        assert_eq!(error, InvoiceRule::LineAmountMismatch { line: 1, expected: dec("0.30") });
        let none = price_lines(Vec::new(), currency("USD"), Utc::now()).unwrap_err();
        assert_eq!(none, InvoiceRule::NoLineItems);
    }

    #[test]
    fn a_given_tax_beside_a_percentage_must_agree() {
        let items = price_lines(vec![line("100", "1", "100")], currency("EUR"), Utc::now()).unwrap();
        let rule = TaxRule::Percentage(dec("19"));
        assert!(
            Totals::compute(&items, &crate::Vat::default(), rule, Some(dec("19")), currency("EUR")).is_ok()
        );
        assert!(
            Totals::compute(&items, &crate::Vat::default(), rule, Some(dec("19.004")), currency("EUR"))
                .is_ok()
        );
        let error = Totals::compute(&items, &crate::Vat::default(), rule, Some(dec("20")), currency("EUR"))
            .unwrap_err();
        assert_eq!(error, InvoiceRule::TaxMismatch { expected: dec("19.00") });
    }

    #[test]
    fn tax_rule_changes() {
        let p = |t: &str| Some(dec(t));
        let (pct, flat) = (TaxRule::Percentage(dec("19")), TaxRule::Flat(dec("5")));
        assert_eq!(TaxRule::changed(None, None, None), TaxRule::Flat(Decimal::ZERO));
        assert_eq!(TaxRule::changed(None, None, p("3")), TaxRule::Flat(dec("3")));
        assert_eq!(TaxRule::changed(None, p("7"), None), TaxRule::Percentage(dec("7")));
        assert_eq!(TaxRule::changed(Some(pct), None, p("19")), pct);
        assert_eq!(TaxRule::changed(Some(pct), p("0"), None), TaxRule::Flat(Decimal::ZERO));
        assert_eq!(TaxRule::changed(Some(flat), None, None), flat);
        assert_eq!(TaxRule::changed(Some(flat), None, p("8")), TaxRule::Flat(dec("8")));
        assert_eq!(TaxRule::changed(Some(flat), p("10"), None), TaxRule::Percentage(dec("10")));
        assert_eq!(TaxRule::from_stored(Decimal::ZERO, dec("5")), flat);
        assert_eq!(TaxRule::from_stored(dec("19"), dec("1")), pct);
    }

    #[test]
    fn pending_past_its_due_date_reads_overdue() {
        let now = Utc::now();
        let items = price_lines(vec![line("1", "1", "1")], currency("EUR"), now).unwrap();
        let mut invoice = Invoice {
            discount: None,
            id: kernel::Id::generate(),
            team_id: kernel::Id::generate(),
            serial: Serial::FIRST,
            number: crate::Series::Invoices.default_pattern().number(1, now),
            payment_reference: crate::PaymentReference::creditor("INV-0001"),
            description: None,
            issue_date: now,
            due_date: Some(now + chrono::TimeDelta::days(1)),
            status: InvoiceStatus::Pending,
            currency: currency("EUR"),
            tax_rule: TaxRule::Flat(Decimal::ZERO),
            totals: Totals::compute(
                &items,
                &crate::Vat::default(),
                TaxRule::Flat(Decimal::ZERO),
                None,
                currency("EUR"),
            )
            .unwrap(),
            balance: crate::ledger::Balance::unpaid(Decimal::ONE),
            client_id: kernel::Id::generate(),
            sender_id: kernel::Id::generate(),
            line_items: items,
            chasing: Chasing::default(),
            recurrence: None,
            vat: Vat::default(),
            exchange: Exchange::none(currency("EUR")),
            supply: crate::Supply::default(),
            from_quote: None,
            created_at: now,
            updated_at: now,
        };
        assert_eq!(invoice.status_at(now), InvoiceStatus::Pending);
        assert_eq!(invoice.status_at(now + chrono::TimeDelta::days(2)), InvoiceStatus::Overdue);
        invoice.status = InvoiceStatus::Paid;
        assert_eq!(invoice.status_at(now + chrono::TimeDelta::days(2)), InvoiceStatus::Paid);
        invoice.due_date = None;
        invoice.status = InvoiceStatus::Pending;
        assert_eq!(invoice.status_at(now + chrono::TimeDelta::days(400)), InvoiceStatus::Pending);
    }

    #[test]
    fn statuses_round_trip() {
        for &status in InvoiceStatus::ALL {
            assert_eq!(InvoiceStatus::parse(status.as_str()), Ok(status));
        }
        assert!(InvoiceStatus::parse("paid").is_err());
    }

    /// Any decimal in `0..=max` with up to `scale` decimals.
    fn decimal_up_to(max: Decimal, scale: u32) -> impl Strategy<Value = Decimal> {
        let units = u64::try_from(max.mantissa()).unwrap_or(u64::MAX);
        (0..=units, 0..=scale)
            .prop_map(move |(mantissa, s)| (Decimal::from(mantissa) / Decimal::from(10_u64.pow(s))).min(max))
    }

    fn arbitrary_line() -> impl Strategy<Value = (Decimal, Decimal)> {
        (
            decimal_up_to(UNIT_PRICE.max, UNIT_PRICE.decimals),
            decimal_up_to(QUANTITY.max, QUANTITY.decimals).prop_filter("q > 0", |q| *q > Decimal::ZERO),
        )
    }

    proptest! {
        #[test]
        fn totals_add_up_at_the_minor_unit(
            lines in prop::collection::vec(arbitrary_line(), 1..40),
            percentage in decimal_up_to(Decimal::ONE_HUNDRED, 4),
            code in prop::sample::select(vec!["EUR", "JPY", "KWD", "USD"]),
        ) {
            let currency = currency(code);
            let inputs = lines.iter().map(|(price, quantity)| LineInput {
                discount: None,
                description: Description::parse("x").unwrap(),
                unit_price: *price,
                quantity: *quantity,
                amount: None,
                unit_code: None,
            vat: LineVat::default(),
            }).collect();
            let items = price_lines(inputs, currency, Utc::now()).unwrap();
            let rule = TaxRule::changed(None, Some(percentage), None);
            let totals = Totals::compute(&items, &crate::Vat::default(), rule, None, currency).unwrap();
            let minor = currency.minor_unit();
            prop_assert_eq!(totals.total, totals.subtotal + totals.tax);
            prop_assert_eq!(totals.subtotal, items.iter().map(|i| i.amount).sum::<Decimal>());
            for value in [totals.subtotal, totals.tax, totals.total] {
                prop_assert_eq!(value.scale(), minor);
                prop_assert!(value >= Decimal::ZERO);
            }
            for item in &items {
                prop_assert_eq!(Some(item.amount), line_amount(item.unit_price, item.quantity, currency));
            }
        }

        #[test]
        fn discounted_groups_agree_with_a_model_in_minor_units(
            lines in prop::collection::vec(model_line(), 1..12),
            document in model_discount(),
            code in prop::sample::select(vec!["EUR", "JPY", "KWD"]),
        ) {
            let currency = currency(code);
            let minor = currency.minor_unit();
            let inputs: Vec<LineInput> = lines.iter().map(|line| line.input(minor)).collect();
            let items = price_lines(inputs, currency, Utc::now()).unwrap();
            let discount = document.map(|d| d.discount(minor));
            let pricing =
                Pricing { items: &items, vat: &Vat::default(), rule: TaxRule::Percentage(dec("19")), discount, currency };
            let model = Model::of(&lines, document);
            match (pricing.totals(None), model) {
                (Ok(totals), Some(model)) => {
                    let units = |value: Decimal| (value * Decimal::from(10_i64.pow(minor))).normalize();
                    let groups: Vec<(String, Decimal, Decimal, Decimal)> = pricing
                        .breakdown()
                        .unwrap()
                        .iter()
                        .map(|g| (g.rate.percentage.to_string(), units(g.discount), units(g.taxable_amount), units(g.tax_amount)))
                        .collect();
                    let expected: Vec<(String, Decimal, Decimal, Decimal)> = model
                        .groups
                        .iter()
                        .map(|g| (g.rate.to_string(), g.discount.into(), g.taxable.into(), g.tax.into()))
                        .collect();
                    prop_assert_eq!(groups, expected);
                    prop_assert_eq!(units(totals.subtotal), Decimal::from(model.subtotal));
                    prop_assert_eq!(units(totals.discount_total), Decimal::from(model.discount_total));
                    prop_assert_eq!(units(totals.tax), Decimal::from(model.tax));
                    prop_assert_eq!(units(totals.total), Decimal::from(model.subtotal - model.discount_total + model.tax));
                    prop_assert!(totals.taxable_amount() >= Decimal::ZERO && totals.total >= Decimal::ZERO);
                    for (item, line) in items.iter().zip(&lines) {
                        prop_assert_eq!(units(item.net_amount()), Decimal::from(line.net()));
                    }
                }
                (Err(InvoiceRule::DiscountTooLarge { .. }), None) => {}
                (got, model) => prop_assert!(false, "got {:?}, the model says {:?}", got, model.map(|m| m.tax)),
            }
        }
    }

    /// A line of the model: its price in minor units, a whole quantity, a rate (19 is the
    /// invoice's), and a discount within its amount.
    #[derive(Debug, Clone)]
    struct ModelLine {
        price: i64,
        quantity: i64,
        rate: i64,
        discount: Option<ModelDiscount>,
    }

    /// A discount: hundredths of a percent, or minor units.
    #[derive(Debug, Clone, Copy)]
    enum ModelDiscount {
        Percent(i64),
        Units(i64),
    }

    impl ModelDiscount {
        fn discount(self, minor: u32) -> Discount {
            match self {
                Self::Percent(hundredths) => Discount::Percentage(Decimal::new(hundredths, 2)),
                Self::Units(units) => Discount::Amount(Decimal::new(units, minor)),
            }
        }

        /// What it takes off `base` (minor units), rounded half away from zero.
        fn off(self, base: i64) -> i64 {
            match self {
                Self::Percent(hundredths) => (base * hundredths + 5_000) / 10_000,
                Self::Units(units) => units,
            }
        }
    }

    impl ModelLine {
        fn amount(&self) -> i64 {
            self.price * self.quantity
        }

        fn net(&self) -> i64 {
            self.amount() - self.discount.map_or(0, |d| d.off(self.amount()))
        }

        fn input(&self, minor: u32) -> LineInput {
            LineInput {
                description: Description::parse("x").unwrap(),
                unit_price: Decimal::new(self.price, minor),
                quantity: Decimal::from(self.quantity),
                amount: None,
                unit_code: None,
                vat: LineVat { percentage: Some(Decimal::from(self.rate)), ..LineVat::default() },
                discount: self.discount.map(|d| d.discount(minor)),
            }
        }
    }

    fn model_discount() -> impl Strategy<Value = Option<ModelDiscount>> {
        prop_oneof![
            Just(None),
            (1_i64..=10_000).prop_map(|p| Some(ModelDiscount::Percent(p))),
            (1_i64..=200_000).prop_map(|u| Some(ModelDiscount::Units(u))),
        ]
    }

    fn model_line() -> impl Strategy<Value = ModelLine> {
        (0_i64..100_000, 1_i64..20, prop::sample::select(vec![7_i64, 19, 10, 20]), model_discount()).prop_map(
            |(price, quantity, rate, discount)| {
                let amount = price * quantity;
                // Within the line's amount, as a caller's valid request keeps it.
                let discount = discount.map(|d| match d {
                    ModelDiscount::Units(units) if units > amount => ModelDiscount::Units(amount),
                    d => d,
                });
                let discount = discount.filter(|d| !matches!(d, ModelDiscount::Units(0)));
                ModelLine { price, quantity, rate, discount }
            },
        )
    }

    #[derive(Debug)]
    struct ModelGroup {
        rate: i64,
        discount: i64,
        taxable: i64,
        tax: i64,
    }

    struct Model {
        groups: Vec<ModelGroup>,
        subtotal: i64,
        discount_total: i64,
        tax: i64,
    }

    impl Model {
        /// The groups and totals by integer arithmetic; `None` when the document's discount
        /// is more than the lines' net amounts.
        fn of(lines: &[ModelLine], document: Option<ModelDiscount>) -> Option<Self> {
            let mut groups: Vec<(i64, i64)> = Vec::new();
            for line in lines {
                match groups.iter_mut().find(|(rate, _)| *rate == line.rate) {
                    Some(group) => group.1 += line.net(),
                    None => groups.push((line.rate, line.net())),
                }
            }
            let net: i64 = groups.iter().map(|(_, base)| base).sum();
            let shares: Vec<i64> = match document {
                None => vec![0; groups.len()],
                Some(ModelDiscount::Percent(p)) => {
                    groups.iter().map(|(_, base)| ModelDiscount::Percent(p).off(*base)).collect()
                }
                Some(ModelDiscount::Units(units)) if units > net => return None,
                Some(ModelDiscount::Units(units)) => largest_remainders(units, &groups),
            };
            let groups: Vec<ModelGroup> = groups
                .iter()
                .zip(shares)
                .map(|((rate, base), discount)| {
                    let taxable = base - discount;
                    ModelGroup { rate: *rate, discount, taxable, tax: (taxable * rate + 50) / 100 }
                })
                .collect();
            let subtotal = lines.iter().map(ModelLine::amount).sum();
            let line_discounts: i64 = lines.iter().map(|l| l.amount() - l.net()).sum();
            let document_discount: i64 = groups.iter().map(|g| g.discount).sum();
            let tax = groups.iter().map(|g| g.tax).sum();
            Some(Self { groups, subtotal, discount_total: line_discounts + document_discount, tax })
        }
    }

    /// `units` split over the groups' bases in proportion, the rest to the largest
    /// remainders, the first on a tie.
    fn largest_remainders(units: i64, groups: &[(i64, i64)]) -> Vec<i64> {
        let net: i64 = groups.iter().map(|(_, base)| base).sum();
        if net == 0 {
            return vec![0; groups.len()];
        }
        let mut shares: Vec<(i64, i64)> =
            groups.iter().map(|(_, base)| (units * base / net, units * base % net)).collect();
        let mut left = units - shares.iter().map(|(share, _)| share).sum::<i64>();
        let mut order: Vec<usize> = (0..shares.len()).collect();
        order.sort_by_key(|index| std::cmp::Reverse(shares[*index].1));
        for index in order.into_iter().take(usize::try_from(left).unwrap()) {
            shares[index].0 += 1;
            left -= 1;
        }
        assert_eq!(left, 0);
        shares.into_iter().map(|(share, _)| share).collect()
    }

    #[test]
    fn a_worked_example_of_two_rates_and_three_discounts() {
        let eur = currency("EUR");
        let line = |price: &str, rate: &str, discount: Option<Discount>| LineInput {
            description: Description::parse("x").unwrap(),
            unit_price: dec(price),
            quantity: Decimal::ONE,
            amount: None,
            unit_code: None,
            vat: LineVat { percentage: Some(dec(rate)), ..LineVat::default() },
            discount,
        };
        // A book at 7 % with 10 % off, a workshop at 19 % with 5.00 off, and 10.00 off it all.
        let items = price_lines(
            vec![
                line("20.00", "7", Some(Discount::Percentage(dec("10")))),
                line("100.00", "19", Some(Discount::Amount(dec("5")))),
            ],
            eur,
            Utc::now(),
        )
        .unwrap();
        assert_eq!(items.iter().map(|i| i.net_amount().to_string()).collect::<Vec<_>>(), ["18.00", "95.00"]);
        let pricing = Pricing {
            items: &items,
            vat: &Vat::default(),
            rule: TaxRule::Percentage(dec("19")),
            discount: Some(Discount::Amount(dec("10"))),
            currency: eur,
        };
        let groups: Vec<_> = pricing
            .breakdown()
            .unwrap()
            .iter()
            .map(|g| (g.discount.to_string(), g.taxable_amount.to_string(), g.tax_amount.to_string()))
            .collect();
        // 10.00 over 18.00 and 95.00: 1.59 and 8.41 (1.5929… and 8.4070…).
        assert_eq!(
            groups,
            [("1.59".into(), "16.41".into(), "1.15".into()), ("8.41".into(), "86.59".into(), "16.45".into())]
        );
        let totals = pricing.totals(None).unwrap();
        assert_eq!(
            (totals.subtotal, totals.discount_total, totals.taxable_amount(), totals.tax, totals.total),
            (dec("120.00"), dec("17.00"), dec("103.00"), dec("17.60"), dec("120.60"))
        );
        let too_much = Pricing { discount: Some(Discount::Amount(dec("113.01"))), ..pricing };
        assert_eq!(too_much.totals(None), Err(InvoiceRule::DiscountTooLarge { net: dec("113.00") }));
        let over_a_line =
            price_lines(vec![line("20.00", "7", Some(Discount::Amount(dec("20.01"))))], eur, Utc::now());
        assert_eq!(over_a_line, Err(InvoiceRule::LineDiscountTooLarge { line: 0, amount: dec("20.00") }));
    }
}
