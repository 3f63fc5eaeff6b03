//! Invoices and their line items: the totals rules, status, serials.

use accounts::TeamId;
use chrono::{DateTime, Utc};
use kernel::{InvalidValue, SearchText, Text, Words, define_id};
use rust_decimal::Decimal;

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
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
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
            Ok(LineItem {
                id: LineItemId::generate(),
                description: input.description,
                unit_price: input.unit_price,
                quantity: input.quantity,
                amount: expected,
                position,
                unit_code: input.unit_code.unwrap_or_else(crate::party::UnitCode::one),
                vat: input.vat,
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
    /// Σ amount.
    pub subtotal: Decimal,
    pub tax: Decimal,
    /// subtotal + tax.
    pub total: Decimal,
}

impl Totals {
    /// The totals of `items` on an invoice of `vat` under `rule`: the tax is the sum of the
    /// VAT breakdown's groups ([`breakdown`]). `given_tax` is the tax a caller
    /// sent beside a percentage: it must agree with the computed one.
    pub fn compute(
        items: &[LineItem],
        vat: &Vat,
        rule: TaxRule,
        given_tax: Option<Decimal>,
        currency: Currency,
    ) -> Result<Self, InvoiceRule> {
        let groups = breakdown(items, vat, rule, currency)?;
        let subtotal = round_to_minor(items.iter().map(|item| item.amount).sum(), currency);
        let tax = round_to_minor(groups.iter().map(|group| group.tax_amount).sum(), currency);
        if let (TaxRule::Percentage(_), Some(given)) = (rule, given_tax)
            && round_to_minor(given, currency) != tax
        {
            return Err(if own_rates(items, vat, rule).next().is_some() {
                InvoiceRule::TaxMismatchPerRate { expected: tax }
            } else {
                InvoiceRule::TaxMismatch { expected: tax }
            });
        }
        Ok(Self { subtotal, tax, total: round_to_minor(subtotal + tax, currency) })
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

/// The VAT breakdown of `items` on an invoice of `vat` and `rule`, in `currency`.
///
/// Where every line is taxed at the invoice's own rate, there is one group, taxed as
/// invoices always were: the subtotal at the invoice's percentage, or its flat tax. Once a
/// line states a rate of its own, each (category, percentage, reason) group is taxed at
/// its percentage, in the order of the lines, and a flat tax is refused.
pub fn breakdown(
    items: &[LineItem],
    vat: &Vat,
    rule: TaxRule,
    currency: Currency,
) -> Result<Vec<VatGroup>, InvoiceRule> {
    let invoices = VatRate::of_invoice(vat, rule.percentage());
    let mut stated = own_rates(items, vat, rule).peekable();
    if stated.peek().is_none() {
        let taxable_amount = round_to_minor(items.iter().map(|item| item.amount).sum(), currency);
        let tax_amount = match rule {
            TaxRule::Percentage(percentage) => {
                percentage_of(taxable_amount, percentage, currency).ok_or(InvoiceRule::TaxTooLarge)?
            }
            TaxRule::Flat(flat) => round_to_minor(flat, currency),
        };
        if !vat.category().charges_vat() && !tax_amount.is_zero() {
            return Err(InvoiceRule::TaxOutsideStandard(vat.category()));
        }
        return Ok(vec![VatGroup { rate: invoices, taxable_amount, tax_amount }]);
    }
    if let TaxRule::Flat(flat) = rule
        && !flat.is_zero()
    {
        return Err(InvoiceRule::FlatTaxWithLineRates);
    }
    let mut first_out_of_scope = None;
    for (line, rate) in stated {
        rate.check().map_err(|rule| InvoiceRule::LineVat { line, rule })?;
        if rate.category == VatCategory::OutOfScope {
            first_out_of_scope.get_or_insert(line);
        }
    }
    let mut groups: Vec<VatGroup> = Vec::new();
    for item in items {
        let rate = item.vat.resolve(vat, rule.percentage());
        match groups.iter_mut().find(|group| group.rate == rate) {
            Some(group) => group.taxable_amount += item.amount,
            None => groups.push(VatGroup { rate, taxable_amount: item.amount, tax_amount: Decimal::ZERO }),
        }
    }
    let out_of_scope = groups.iter().any(|group| group.rate.category == VatCategory::OutOfScope);
    if out_of_scope && groups.len() > 1 {
        let line = first_out_of_scope.or_else(|| own_rates(items, vat, rule).next().map(|(line, _)| line));
        return Err(InvoiceRule::LineVat { line: line.unwrap_or_default(), rule: VatRule::OutOfScopeMixed });
    }
    for group in &mut groups {
        group.taxable_amount = round_to_minor(group.taxable_amount, currency);
        group.tax_amount = percentage_of(group.taxable_amount, group.rate.percentage, currency)
            .ok_or(InvoiceRule::TaxTooLarge)?;
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
    pub description: Option<Description>,
    pub issue_date: DateTime<Utc>,
    pub due_date: Option<DateTime<Utc>>,
    /// As the ledger leaves it (`PENDING`, `PAID`, `PAID_PARTIAL` or `EXPIRED`); see
    /// [`Invoice::status_at`] for the status reported.
    pub status: InvoiceStatus,
    /// The team's currency when the invoice was made.
    pub currency: Currency,
    pub tax_rule: TaxRule,
    pub totals: Totals,
    /// What its ledger leaves: paid, credited, written off, due. Its `total` is
    /// `totals.total`.
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
    /// Its VAT breakdown: one group per category, percentage and reason of its lines.
    pub fn vat_breakdown(&self) -> Vec<VatGroup> {
        // Its totals were computed from the same breakdown when it was written.
        breakdown(&self.line_items, &self.vat, self.tax_rule, self.currency).unwrap_or_default()
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
            id: kernel::Id::generate(),
            team_id: kernel::Id::generate(),
            serial: Serial::FIRST,
            number: crate::Series::Invoices.default_pattern().number(1, now),
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
    }
}
