//! The quote storage port, and the quote use cases over it: a draft priced as an invoice
//! is, numbered once it goes before its client, decided once, and converted into invoices
//! through the same rules and lock as a create ([`crate::service::new_invoice`]).

use accounts::{AccountStore, TeamId};
use chrono::{DateTime, Utc};
use kernel::{Id, StoreError};
use locale::{Language, Term};
use rust_decimal::Decimal;

use crate::invoice::{Description, InvoiceRule, price_lines};
use crate::numbering::NumberTaken;
use crate::quote::{
    ConversionKind, ConversionMode, Decision, DecisionSource, FromQuote, Quote, QuoteId, QuoteNotes,
    QuoteRule, Verdict, plan_conversion,
};
pub use crate::quote::{QuoteFilter, QuotePosition, sort_for_listing};
use crate::service::{BillingError, InvoiceDraft, new_invoice};
use crate::store::{BillTo, BillingStore};
pub use crate::store::{Conversion, QuoteRepository, QuoteStoreError, check_conversion, converted};
use crate::vat::VatRate;
use crate::{ClientId, Discount, Exchange, Invoice, LineInput, Pricing, TaxRule, Vat};

/// Why a quote use case refused.
#[derive(Debug, thiserror::Error)]
pub enum QuoteError {
    #[error("quote not found")]
    NotFound,
    #[error(transparent)]
    Rule(#[from] QuoteRule),
    /// What converting a quote into an invoice ran into, as creating one does.
    #[error(transparent)]
    Billing(#[from] BillingError),
    #[error(transparent)]
    NumberTaken(#[from] NumberTaken),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<InvoiceRule> for QuoteError {
    fn from(rule: InvoiceRule) -> Self {
        Self::Rule(QuoteRule::Invoice(rule))
    }
}

impl From<QuoteStoreError> for QuoteError {
    fn from(error: QuoteStoreError) -> Self {
        match error {
            QuoteStoreError::NotFound => Self::NotFound,
            QuoteStoreError::UnknownClient => InvoiceRule::UnknownClient.into(),
            QuoteStoreError::Rule(rule) => Self::Rule(rule),
            QuoteStoreError::Invoice(error) => Self::Billing(crate::service::refused(error)),
            QuoteStoreError::NumberTaken(taken) => Self::NumberTaken(taken),
            // The use case plans again; past its tries the caller may.
            QuoteStoreError::ChangedMeanwhile => {
                Self::Store(StoreError::Unexpected(anyhow::anyhow!("the quote kept changing")))
            }
            QuoteStoreError::Store(error) => Self::Store(error),
        }
    }
}

/// A new quote as the caller gave it, each field valid on its own.
#[derive(Debug, Clone)]
pub struct QuoteDraft {
    pub client_id: ClientId,
    pub line_items: Vec<LineInput>,
    pub description: Option<Description>,
    pub notes: Option<QuoteNotes>,
    pub valid_until: Option<DateTime<Utc>>,
    pub tax_percentage: Option<Decimal>,
    pub tax: Option<Decimal>,
    /// Standard when `None`.
    pub vat: Option<Vat>,
    /// As on invoices: required where the client is billed in another currency than the
    /// team's, refused otherwise.
    pub exchange_rate: Option<Decimal>,
    pub discount: Option<Discount>,
    /// The team's quote this one is a new version of.
    pub supersedes: Option<QuoteId>,
}

/// A partial update of a draft: `None` leaves a field; `Some(None)` clears a nullable one.
#[derive(Debug, Clone, Default)]
pub struct QuoteChanges {
    pub client_id: Option<ClientId>,
    /// Replaces all lines.
    pub line_items: Option<Vec<LineInput>>,
    pub description: Option<Option<Description>>,
    pub notes: Option<Option<QuoteNotes>>,
    pub valid_until: Option<Option<DateTime<Utc>>>,
    pub tax_percentage: Option<Decimal>,
    pub tax: Option<Decimal>,
    pub vat: Option<Vat>,
    pub exchange_rate: Option<Decimal>,
    pub discount: Option<Option<Discount>>,
}

/// The figures of a quote, priced as an invoice's are.
struct Priced {
    currency: crate::money::Currency,
    exchange: Exchange,
    line_items: Vec<crate::LineItem>,
    tax_rule: TaxRule,
    vat: Vat,
    discount: Option<Discount>,
    totals: crate::Totals,
}

/// Prices `lines` for the team's client `client`, in its currency, as a create of an
/// invoice would.
#[expect(clippy::too_many_arguments, reason = "the fields of a quote that its figures come from")]
async fn price(
    store: &dyn BillingStore,
    accounts: &dyn AccountStore,
    team: TeamId,
    client: ClientId,
    lines: Vec<LineInput>,
    rule: TaxRule,
    tax: Option<Decimal>,
    vat: Vat,
    discount: Option<Discount>,
    exchange_rate: Option<Decimal>,
    now: DateTime<Utc>,
) -> Result<Priced, QuoteError> {
    let the_team = crate::service::the_team(accounts, team).await?;
    let client = store.get(team, client).await?.ok_or(InvoiceRule::UnknownClient)?;
    let currency = client.details.currency.unwrap_or(the_team.currency);
    let exchange = Exchange::new(currency, the_team.currency, exchange_rate)?;
    let line_items = price_lines(lines, currency, now)?;
    let totals = Pricing { items: &line_items, vat: &vat, rule, discount, currency }.totals(tax)?;
    exchange.in_team_currency(totals.total).ok_or(InvoiceRule::TeamTotalTooLarge)?;
    if crate::invoice::names_parties(&line_items, &vat, rule) {
        // Read, never made here: a refused quote leaves no default sender behind.
        let sender = match store.default_sender(team).await? {
            Some(sender) => sender,
            None => crate::service::named_sender(&the_team, now),
        };
        crate::invoice::check_parties(&line_items, &vat, rule, &client.details, &sender.details)?;
    }
    Ok(Priced { currency, exchange, line_items, tax_rule: rule, vat, discount, totals })
}

/// Creates a draft quote, priced as an invoice for its client would be.
pub async fn create_quote(
    store: &dyn BillingStore,
    accounts: &dyn AccountStore,
    team: TeamId,
    draft: QuoteDraft,
    now: DateTime<Utc>,
) -> Result<Quote, QuoteError> {
    if let Some(old) = draft.supersedes
        && store.get_quote(team, old).await?.is_none()
    {
        return Err(QuoteRule::UnknownSuperseded.into());
    }
    let rule = TaxRule::changed(None, draft.tax_percentage, draft.tax);
    let priced = price(
        store,
        accounts,
        team,
        draft.client_id,
        draft.line_items,
        rule,
        draft.tax,
        draft.vat.unwrap_or_default(),
        draft.discount,
        draft.exchange_rate,
        now,
    )
    .await?;
    let quote = Quote {
        id: QuoteId::generate(),
        team_id: team,
        client_id: draft.client_id,
        number: None,
        description: draft.description,
        notes: draft.notes,
        valid_until: draft.valid_until,
        currency: priced.currency,
        exchange: priced.exchange,
        vat: priced.vat,
        tax_rule: priced.tax_rule,
        discount: priced.discount,
        line_items: priced.line_items,
        totals: priced.totals,
        sent_at: None,
        decision: None,
        supersedes: draft.supersedes,
        invoices: Vec::new(),
        created_at: now,
        updated_at: now,
    };
    Ok(store.create_quote(&quote).await?)
}

/// The team's quote, or [`QuoteError::NotFound`].
pub async fn the_quote(store: &dyn BillingStore, team: TeamId, id: QuoteId) -> Result<Quote, QuoteError> {
    store.get_quote(team, id).await?.ok_or(QuoteError::NotFound)
}

/// Applies `changes` to a draft; its figures are priced again from the result.
pub async fn update_quote(
    store: &dyn BillingStore,
    accounts: &dyn AccountStore,
    team: TeamId,
    id: QuoteId,
    changes: QuoteChanges,
    now: DateTime<Utc>,
) -> Result<Quote, QuoteError> {
    let current = the_quote(store, team, id).await?;
    current.check_draft(now)?;
    let client_id = changes.client_id.unwrap_or(current.client_id);
    let lines = match changes.line_items {
        Some(lines) => lines,
        None => current.line_items.iter().map(crate::quote::line_input).collect(),
    };
    let rule = TaxRule::changed(Some(current.tax_rule), changes.tax_percentage, changes.tax);
    let exchange_rate = changes.exchange_rate.or(current.exchange.rate);
    let priced = price(
        store,
        accounts,
        team,
        client_id,
        lines,
        rule,
        changes.tax,
        changes.vat.unwrap_or_else(|| current.vat.clone()),
        changes.discount.unwrap_or(current.discount),
        exchange_rate,
        now,
    )
    .await?;
    let updated = Quote {
        client_id,
        description: changes.description.unwrap_or_else(|| current.description.clone()),
        notes: changes.notes.unwrap_or_else(|| current.notes.clone()),
        valid_until: changes.valid_until.unwrap_or(current.valid_until),
        currency: priced.currency,
        exchange: priced.exchange,
        vat: priced.vat,
        tax_rule: priced.tax_rule,
        discount: priced.discount,
        line_items: priced.line_items,
        totals: priced.totals,
        updated_at: now,
        ..current
    };
    Ok(store.replace_quote(&updated).await?)
}

pub async fn delete_quote(
    store: &dyn BillingStore,
    team: TeamId,
    id: QuoteId,
    now: DateTime<Utc>,
) -> Result<(), QuoteError> {
    Ok(store.delete_quote(team, id, now).await?)
}

/// Numbers a draft and puts it before its client; a numbered quote stays as it is. Answers
/// whether this call numbered it.
pub async fn finalize_quote(
    store: &dyn BillingStore,
    team: TeamId,
    id: QuoteId,
    now: DateTime<Utc>,
) -> Result<(Quote, bool), QuoteError> {
    Ok(store.finalize_quote(team, id, now).await?)
}

/// Records the client's decision on a sent quote, final.
pub async fn decide_quote(
    store: &dyn BillingStore,
    team: TeamId,
    id: QuoteId,
    verdict: Verdict,
    source: DecisionSource,
    now: DateTime<Utc>,
) -> Result<Quote, QuoteError> {
    the_quote(store, team, id).await?.check_decidable(now)?;
    let decision = Decision { verdict, source, at: now };
    Ok(store.decide_quote(team, id, &decision).await?)
}

/// How many times a conversion is planned again after another invoice of the quote was made
/// between its read and its write.
const CONVERSION_TRIES: usize = 5;

/// A deposit invoice's line for `rate` of `quote`, in `language`.
pub fn deposit_line(language: Language, quote: &Quote, rate: &VatRate) -> Description {
    let number = quote.number.as_ref().map_or("", |number| number.as_str());
    let percentage = language.decimal(&rate.percentage.normalize().to_string());
    let words = language.phrase(Term::DepositLine, &[("quote", number), ("rate", &percentage)]);
    // The catalogue's words and a number are far below a line's 1,000 characters.
    Description::parse(words).unwrap_or_else(|_| Description::empty())
}

/// Makes the invoice of converting the quote as `mode`: planned by
/// [`plan_conversion`], made as [`crate::service::create_invoice`] makes one, in the quote's
/// currency at its rate, with the deposit lines in its client's language ([`deposit_line`]).
pub async fn convert_quote(
    store: &dyn BillingStore,
    accounts: &dyn AccountStore,
    team: TeamId,
    id: QuoteId,
    mode: ConversionMode,
    now: DateTime<Utc>,
) -> Result<(Quote, Invoice), QuoteError> {
    for _ in 0..CONVERSION_TRIES {
        let quote = the_quote(store, team, id).await?;
        let language = match store.get(team, quote.client_id).await?.and_then(|c| c.details.language) {
            Some(language) => language,
            None => store.default_sender(team).await?.map(|s| s.details.language).unwrap_or_default(),
        };
        let plan = plan_conversion(&quote, mode, now, |rate| deposit_line(language, &quote, rate))?;
        let (tax_percentage, tax) = match quote.tax_rule {
            TaxRule::Percentage(percentage) => (Some(percentage), None),
            TaxRule::Flat(flat) if plan.kind == ConversionKind::Deposit || flat.is_zero() => (None, None),
            TaxRule::Flat(flat) => (None, Some(flat)),
        };
        let draft = InvoiceDraft {
            bill_to: BillTo::Existing(quote.client_id),
            issue_date: None,
            due_date: None,
            description: quote.description.clone(),
            status: None,
            sender_id: None,
            tax_percentage,
            tax,
            line_items: plan.lines,
            time_entries: Vec::new(),
            vat: Some(quote.vat.clone()),
            exchange_rate: quote.exchange.rate,
            supply: crate::Supply::default(),
            discount: plan.discount,
        };
        let mut invoice = new_invoice(store, accounts, team, draft, now).await?;
        let deposit_invoices = if plan.kind == ConversionKind::Final {
            quote.deposits().map(|deposit| deposit.invoice_id).collect()
        } else {
            Vec::new()
        };
        invoice.from_quote = Some(FromQuote {
            quote_id: quote.id,
            kind: plan.kind,
            deposit_invoices,
            deducted: plan.deducted,
        });
        if invoice.totals.total < plan.deducted {
            return Err(InvoiceRule::BelowDeposits { deducted: plan.deducted }.into());
        }
        let conversion = Conversion { kind: plan.kind, invoice, invoices_before: quote.invoices.len() };
        match store.convert_quote(team, id, &conversion, now).await {
            Err(QuoteStoreError::ChangedMeanwhile) => {}
            done => return Ok(done?),
        }
    }
    Err(QuoteStoreError::ChangedMeanwhile.into())
}
