//! The invoice use cases: the rules that need more than one entity (the team's currency
//! and default sender, the client, the totals) applied over the ports.

use accounts::{AccountStore, Team, TeamId};
use chrono::{DateTime, Utc};
use kernel::{Id, StoreError};
use rust_decimal::Decimal;

use crate::invoice::{Description, InvoiceRule, check_dates, price_lines};
use crate::ledger::{EntryAmount, EntryKind, LedgerRule, NewEntry, PaymentMethod};
use crate::store::{
    BillTo, BillingStore, CreateInvoiceError, DeleteInvoiceError, LedgerError, NewInvoice, SaveInvoiceError,
    SenderChoice, StatusWrite,
};
use crate::{
    ClientId, Invoice, InvoiceId, InvoiceStatus, LedgerEntryId, LineInput, SenderAddress, SenderAddressId,
    SenderDetails, TaxRule,
};

/// Why an invoice use case refused.
#[derive(Debug, thiserror::Error)]
pub enum BillingError {
    /// Input that breaks a rule of invoices.
    #[error(transparent)]
    Rule(#[from] InvoiceRule),
    #[error("invoice not found")]
    NotFound,
    /// Time entries to bill were billed, changed or deleted meanwhile; nothing was written.
    #[error("time entries to bill were billed, changed or deleted meanwhile; nothing was made")]
    TimeTaken,
    /// The recurring invoice's period was made meanwhile (another pass); nothing was made.
    #[error("the recurring invoice's invoice of this period was made meanwhile; nothing was made")]
    RecurrenceTaken,
    /// A status that follows from the books, asked for by hand: `PAID_PARTIAL` (from
    /// payments) or `OVERDUE` (from the due date).
    #[error("{0:?} follows from the books and cannot be set")]
    StatusNotSettable(InvoiceStatus),
    /// A write that would break a rule of the books.
    #[error(transparent)]
    Books(#[from] LedgerRule),
    /// The invoice has payments, write-offs or credit notes, and cannot be deleted.
    #[error("the invoice has payments, write-offs or credit notes")]
    HasMoney,
    /// A deposit invoice its quote's final invoice `by` deducts, and cannot be deleted.
    #[error("the final invoice {by} deducts this deposit invoice")]
    Deducted { by: crate::DocumentNumber },
    /// The exchange rate of an invoice that was paid, credited, written off or sent stays.
    #[error("the exchange rate is fixed once the invoice was paid, credited, written off or sent")]
    RateLocked,
    /// The team's currency changed while the invoice was made; nothing was made.
    #[error("the team's currency changed meanwhile; nothing was made")]
    TeamCurrencyChanged,
    /// The team's numbering pattern makes a number its series has already; nothing was made.
    #[error(transparent)]
    NumberTaken(#[from] crate::numbering::NumberTaken),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<SaveInvoiceError> for BillingError {
    fn from(error: SaveInvoiceError) -> Self {
        match error {
            SaveInvoiceError::NotFound => Self::NotFound,
            SaveInvoiceError::UnknownClient => InvoiceRule::UnknownClient.into(),
            SaveInvoiceError::UnknownSender => InvoiceRule::UnknownSender.into(),
            SaveInvoiceError::Ledger(rule) => Self::Books(rule),
            SaveInvoiceError::RateLocked => Self::RateLocked,
            SaveInvoiceError::Store(error) => Self::Store(error),
        }
    }
}

/// What a status given on create or update asks of the books: PAID pays what is due,
/// EXPIRED writes it off, PENDING asks that nothing was recorded; the statuses that follow
/// from the books are refused.
fn status_write(status: Option<InvoiceStatus>, now: DateTime<Utc>) -> Result<StatusWrite, BillingError> {
    let settle = |kind| {
        StatusWrite::Settle(NewEntry {
            id: LedgerEntryId::generate(),
            kind,
            amount: EntryAmount::AllDue,
            on: now.date_naive(),
            method: PaymentMethod::Other,
            reference: None,
            notes: None,
            created_at: now,
        })
    };
    Ok(match status {
        None => StatusWrite::Keep,
        Some(InvoiceStatus::Pending) => StatusWrite::Pending,
        Some(InvoiceStatus::Paid) => settle(EntryKind::Payment),
        Some(InvoiceStatus::Expired) => settle(EntryKind::WriteOff),
        Some(status @ (InvoiceStatus::PaidPartial | InvoiceStatus::Overdue)) => {
            return Err(BillingError::StatusNotSettable(status));
        }
    })
}

/// A new invoice as the caller gave it, each field valid on its own.
#[derive(Debug, Clone)]
pub struct InvoiceDraft {
    pub bill_to: BillTo,
    /// Now when `None`.
    pub issue_date: Option<DateTime<Utc>>,
    pub due_date: Option<DateTime<Utc>>,
    pub description: Option<Description>,
    /// PENDING when `None`.
    pub status: Option<InvoiceStatus>,
    /// The team's default sender address when `None`.
    pub sender_id: Option<SenderAddressId>,
    pub tax_percentage: Option<Decimal>,
    pub tax: Option<Decimal>,
    pub line_items: Vec<LineInput>,
    /// The time entries the invoice bills (see [`NewInvoice::time_entries`]).
    pub time_entries: Vec<crate::store::TimeToBill>,
    /// Standard when `None`.
    pub vat: Option<crate::invoice::Vat>,
    /// Units of the team's currency per unit of the invoice's: required where the client
    /// is billed in another currency than the team's, refused otherwise.
    pub exchange_rate: Option<Decimal>,
    pub supply: crate::Supply,
    /// The discount of the whole invoice, beside its lines'.
    pub discount: Option<crate::Discount>,
}

/// A partial update: `None` leaves a field; `Some(None)` clears a nullable one.
#[derive(Debug, Clone, Default)]
pub struct InvoiceChanges {
    pub client_id: Option<ClientId>,
    pub issue_date: Option<DateTime<Utc>>,
    pub due_date: Option<Option<DateTime<Utc>>>,
    pub description: Option<Option<Description>>,
    pub status: Option<InvoiceStatus>,
    pub sender_id: Option<SenderAddressId>,
    pub tax_percentage: Option<Decimal>,
    pub tax: Option<Decimal>,
    /// Replaces all items.
    pub line_items: Option<Vec<LineInput>>,
    pub vat: Option<crate::invoice::Vat>,
    /// A new exchange rate: only while nothing was paid, credited or sent
    /// ([`BillingError::RateLocked`]).
    pub exchange_rate: Option<Decimal>,
    /// `Some(None)` removes it.
    pub service: Option<Option<crate::ServiceTime>>,
    /// `Some(None)` removes it.
    pub purchase_order: Option<Option<crate::PurchaseOrder>>,
    /// `Some(None)` removes it.
    pub discount: Option<Option<crate::Discount>>,
}

/// The team's default sender address, made from the team's name if the team has none yet
/// (teams made before invoices existed).
pub async fn default_sender(
    store: &dyn BillingStore,
    accounts: &dyn AccountStore,
    team: TeamId,
    now: DateTime<Utc>,
) -> Result<SenderAddress, StoreError> {
    if let Some(sender) = store.default_sender(team).await? {
        return Ok(sender);
    }
    store.ensure_default_sender(&named_sender(&the_team(accounts, team).await?, now)).await
}

/// The team's default sender address as it stands, written nowhere: a team that has none
/// yet is named as a new one would be. What reads need (a page, a mail), which must not
/// write.
pub async fn sender_as_it_stands(
    store: &dyn BillingStore,
    accounts: &dyn AccountStore,
    team: TeamId,
    now: DateTime<Utc>,
) -> Result<SenderAddress, StoreError> {
    match store.default_sender(team).await? {
        Some(sender) => Ok(sender),
        None => Ok(named_sender(&the_team(accounts, team).await?, now)),
    }
}

/// After `team` was renamed from `old`: its default sender address, if it still bears the
/// old name (as a new team's starts out), takes the new one, so invoices are from the team
/// as it is now called. A sender named otherwise keeps its name.
pub async fn follow_rename(
    store: &dyn BillingStore,
    team: &Team,
    old: &accounts::TeamName,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let Some(sender) = store.default_sender(team.id).await? else { return Ok(()) };
    if sender.details.name.as_str() != old.as_str() || old == &team.name {
        return Ok(());
    }
    let details = SenderDetails { name: team.name.clone(), ..sender.details };
    store.update_sender(team.id, sender.id, &details, now).await?;
    Ok(())
}

/// A sender address made from the team's name: what a team without one gets as its default.
pub(crate) fn named_sender(team: &Team, now: DateTime<Utc>) -> SenderAddress {
    SenderAddress {
        id: SenderAddressId::generate(),
        team_id: team.id,
        details: SenderDetails::named(team.name.clone()),
        created_at: now,
        updated_at: now,
    }
}

/// The team, which must exist (a key or an invoice names it).
pub async fn the_team(accounts: &dyn AccountStore, team: TeamId) -> Result<Team, StoreError> {
    accounts
        .get_team(team)
        .await?
        .ok_or_else(|| StoreError::Unexpected(anyhow::anyhow!("team {team} does not exist")))
}

/// Creates an invoice in the team's currency with the next serial.
pub async fn create_invoice(
    store: &dyn BillingStore,
    accounts: &dyn AccountStore,
    team: TeamId,
    draft: InvoiceDraft,
    now: DateTime<Utc>,
) -> Result<Invoice, BillingError> {
    let new = new_invoice(store, accounts, team, draft, now).await?;
    store.create_invoice(new).await.map_err(refused)
}

/// The invoice [`create_invoice`] would make now, checked as a create is, with the serial
/// it would take; nothing is kept or reserved.
pub async fn preview_invoice(
    store: &dyn BillingStore,
    accounts: &dyn AccountStore,
    team: TeamId,
    draft: InvoiceDraft,
    now: DateTime<Utc>,
) -> Result<Invoice, BillingError> {
    let new = new_invoice(store, accounts, team, draft, now).await?;
    store.preview_invoice(new).await.map_err(refused)
}

/// Why storage refused a new invoice, as the use cases say it.
pub fn refused(error: CreateInvoiceError) -> BillingError {
    match error {
        CreateInvoiceError::UnknownClient => InvoiceRule::UnknownClient.into(),
        CreateInvoiceError::UnknownSender => InvoiceRule::UnknownSender.into(),
        CreateInvoiceError::TimeTaken => BillingError::TimeTaken,
        CreateInvoiceError::RecurrenceTaken => BillingError::RecurrenceTaken,
        CreateInvoiceError::ClientCurrencyDiffers { client, invoice } => {
            InvoiceRule::ClientCurrencyDiffers { client, invoice }.into()
        }
        CreateInvoiceError::Ledger(rule) => BillingError::Books(rule),
        CreateInvoiceError::TeamCurrencyChanged => BillingError::TeamCurrencyChanged,
        CreateInvoiceError::NumberTaken(taken) => BillingError::NumberTaken(taken),
        CreateInvoiceError::Store(error) => error.into(),
    }
}

/// `draft` priced and checked, in the team's currency, ready to store: what
/// [`create_invoice`] stores, for a use case that stores it in a transaction of its own (a
/// recurring invoice's period).
pub async fn new_invoice(
    store: &dyn BillingStore,
    accounts: &dyn AccountStore,
    team: TeamId,
    draft: InvoiceDraft,
    now: DateTime<Utc>,
) -> Result<NewInvoice, BillingError> {
    // PAID or EXPIRED on create: the ledger's first entry pays or writes off the total.
    let opening = match status_write(draft.status, now)? {
        StatusWrite::Settle(entry) => Some(entry),
        StatusWrite::Keep | StatusWrite::Pending => None,
    };
    let the_team = the_team(accounts, team).await?;
    // The client's currency (storage checks it again as it makes the invoice); a new
    // client's is the team's.
    let existing_client = match &draft.bill_to {
        BillTo::Existing(id) => Some(store.get(team, *id).await?.ok_or(InvoiceRule::UnknownClient)?),
        BillTo::Inline { .. } => None,
    };
    let client_currency = existing_client.as_ref().and_then(|client| client.details.currency);
    let currency = client_currency.unwrap_or(the_team.currency);
    let exchange = crate::Exchange::new(currency, the_team.currency, draft.exchange_rate)?;
    let issue_date = draft.issue_date.unwrap_or(now);
    // Without a due date of its own, an invoice is due after its client's payment terms.
    let terms = existing_client.as_ref().and_then(|client| client.details.payment_terms);
    let due_date = draft.due_date.or_else(|| terms.and_then(|terms| terms.due_after(issue_date)));
    check_dates(issue_date, due_date)?;
    let line_items = price_lines(draft.line_items, currency, now)?;
    let tax_rule = TaxRule::changed(None, draft.tax_percentage, draft.tax);
    let vat = draft.vat.unwrap_or_default();
    let discount = draft.discount;
    let totals = crate::Pricing { items: &line_items, vat: &vat, rule: tax_rule, discount, currency }
        .totals(draft.tax)?;
    exchange.in_team_currency(totals.total).ok_or(InvoiceRule::TeamTotalTooLarge)?;
    let sender = match draft.sender_id {
        Some(id) => store.get_sender(team, id).await?.ok_or(InvoiceRule::UnknownSender)?,
        None => store.default_sender(team).await?.unwrap_or_else(|| named_sender(&the_team, now)),
    };
    if crate::invoice::names_parties(&line_items, &vat, tax_rule) {
        let client = match (existing_client, &draft.bill_to) {
            (Some(client), _) => client,
            (None, BillTo::Inline { email, new_client }) => {
                let known = store.list(team).await?.into_iter().find(|client| &client.details.email == email);
                known.unwrap_or_else(|| (**new_client).clone())
            }
            (None, BillTo::Existing(_)) => return Err(InvoiceRule::UnknownClient.into()),
        };
        crate::invoice::check_parties(&line_items, &vat, tax_rule, &client.details, &sender.details)?;
    }
    let qr_reference = sender.details.iban.as_ref().is_some_and(crate::Iban::is_qr_iban);
    // A team without a default sender gets one in the invoice's transaction, so that a
    // refused create or a preview leaves none behind.
    let sender = match draft.sender_id {
        Some(id) => SenderChoice::Given(id),
        None => SenderChoice::TeamDefault { fallback: Box::new(named_sender(&the_team, now)) },
    };
    Ok(NewInvoice {
        id: InvoiceId::generate(),
        team_id: team,
        bill_to: draft.bill_to,
        sender,
        description: draft.description,
        issue_date,
        due_date,
        currency,
        tax_rule,
        discount,
        totals,
        line_items,
        created_at: now,
        opening,
        time_entries: draft.time_entries,
        recurrence: None,
        vat,
        exchange,
        supply: draft.supply,
        qr_reference,
        from_quote: None,
    })
}

/// Applies `changes`; the totals are recomputed from the result, and a status is what it
/// asks of the books ([`StatusWrite`]), in the same transaction.
pub async fn update_invoice(
    store: &dyn BillingStore,
    team: TeamId,
    id: InvoiceId,
    changes: InvoiceChanges,
    now: DateTime<Utc>,
) -> Result<Invoice, BillingError> {
    let status = status_write(changes.status, now)?;
    let current = store.get_invoice(team, id).await?.ok_or(BillingError::NotFound)?;
    let lines_changed = changes.line_items.is_some();
    let line_items = match changes.line_items {
        Some(inputs) => price_lines(inputs, current.currency, now)?,
        None => current.line_items.clone(),
    };
    let tax_rule = TaxRule::changed(Some(current.tax_rule), changes.tax_percentage, changes.tax);
    let vat = changes.vat.unwrap_or_else(|| current.vat.clone());
    let discount = changes.discount.unwrap_or(current.discount);
    let totals = crate::Pricing {
        items: &line_items,
        vat: &vat,
        rule: tax_rule,
        discount,
        currency: current.currency,
    }
    .totals(changes.tax)?;
    let issue_date = changes.issue_date.unwrap_or(current.issue_date);
    let due_date = changes.due_date.unwrap_or(current.due_date);
    check_dates(issue_date, due_date)?;
    let exchange = match changes.exchange_rate {
        Some(rate) => {
            if current.balance.has_money() || current.chasing.sent_at.is_some() {
                return Err(BillingError::RateLocked);
            }
            crate::Exchange::new(current.currency, current.exchange.team_currency, Some(rate))?
        }
        None => current.exchange,
    };
    exchange.in_team_currency(totals.total).ok_or(InvoiceRule::TeamTotalTooLarge)?;
    let deducted = current.deposits_deducted();
    if totals.total < deducted {
        return Err(InvoiceRule::BelowDeposits { deducted }.into());
    }
    if let Some(client) = changes.client_id.filter(|client| *client != current.client_id) {
        let billed_in = store.get(team, client).await?.ok_or(InvoiceRule::UnknownClient)?.details.currency;
        let client_currency = billed_in.unwrap_or(current.exchange.team_currency);
        if client_currency != current.currency {
            return Err(InvoiceRule::ClientCurrencyDiffers {
                client: client_currency,
                invoice: current.currency,
            }
            .into());
        }
    }
    let client_id = changes.client_id.unwrap_or(current.client_id);
    let sender_id = changes.sender_id.unwrap_or(current.sender_id);
    if crate::invoice::names_parties(&line_items, &vat, tax_rule) {
        let client = store.get(team, client_id).await?.ok_or(InvoiceRule::UnknownClient)?;
        let sender = store.get_sender(team, sender_id).await?.ok_or(InvoiceRule::UnknownSender)?;
        crate::invoice::check_parties(&line_items, &vat, tax_rule, &client.details, &sender.details)?;
    }
    let updated = Invoice {
        vat,
        exchange,
        issue_date,
        due_date,
        client_id,
        sender_id,
        description: changes.description.unwrap_or_else(|| current.description.clone()),
        supply: crate::Supply {
            service: changes.service.unwrap_or(current.supply.service),
            purchase_order: changes.purchase_order.unwrap_or_else(|| current.supply.purchase_order.clone()),
        },
        tax_rule,
        discount,
        totals,
        line_items,
        updated_at: now,
        ..current
    };
    Ok(store.replace_invoice(&updated, lines_changed, status).await?)
}

/// Marks the invoice PAID: records a payment of what is due (nothing when nothing is).
pub async fn mark_paid(
    store: &dyn BillingStore,
    team: TeamId,
    id: InvoiceId,
    now: DateTime<Utc>,
) -> Result<Invoice, BillingError> {
    let changes = InvoiceChanges { status: Some(InvoiceStatus::Paid), ..InvoiceChanges::default() };
    update_invoice(store, team, id, changes, now).await
}

pub async fn delete_invoice(
    store: &dyn BillingStore,
    team: TeamId,
    id: InvoiceId,
    now: DateTime<Utc>,
) -> Result<(), BillingError> {
    store.delete_invoice(team, id, now).await.map_err(|error| match error {
        DeleteInvoiceError::NotFound => BillingError::NotFound,
        DeleteInvoiceError::HasMoney => BillingError::HasMoney,
        DeleteInvoiceError::Deducted { by } => BillingError::Deducted { by },
        DeleteInvoiceError::Store(error) => error.into(),
    })
}

impl From<crate::store::LedgerError> for BillingError {
    fn from(error: crate::store::LedgerError) -> Self {
        use crate::store::LedgerError;
        match error {
            LedgerError::NotFound => Self::NotFound,
            LedgerError::Rule(rule) => Self::Books(rule),
            LedgerError::Lines(rule) => Self::Rule(rule),
            LedgerError::NumberTaken(taken) => Self::NumberTaken(taken),
            LedgerError::Store(error) => Self::Store(error),
        }
    }
}

/// Records a payment, a refund or a write-off on the team's invoice `invoice`.
pub async fn record_entry(
    store: &dyn BillingStore,
    team: TeamId,
    invoice: InvoiceId,
    entry: NewEntry,
) -> Result<(crate::LedgerEntry, Invoice), BillingError> {
    Ok(store.record_entry(team, invoice, entry).await?)
}

/// Voids the team's ledger entry `entry`: listed still, counted no more.
pub async fn void_entry(
    store: &dyn BillingStore,
    team: TeamId,
    entry: LedgerEntryId,
    reason: Option<crate::ledger::Notes>,
    now: DateTime<Utc>,
) -> Result<(crate::LedgerEntry, Invoice), BillingError> {
    Ok(store.void_entry(team, entry, reason, now).await?)
}

/// Issues a credit note against the team's invoice `invoice`. Lines of its own that state
/// a category naming the parties (reverse charge, intra-community supply) are held to the
/// invoice's client and sender first, as an invoice's are when it is made.
pub async fn issue_credit_note(
    store: &dyn BillingStore,
    team: TeamId,
    invoice: InvoiceId,
    note: crate::credit::NewCreditNote,
) -> Result<(crate::credit::CreditNote, Invoice), BillingError> {
    use crate::credit::CreditLines;
    if let CreditLines::Lines(inputs) | CreditLines::Discounted(inputs, _) = &note.lines {
        let current = store.get_invoice(team, invoice).await?.ok_or(BillingError::NotFound)?;
        let items = price_lines(inputs.clone(), current.currency, note.created_at)?;
        let rule = TaxRule::Percentage(current.tax_rule.percentage());
        if crate::invoice::names_parties(&items, &current.vat, rule) {
            let client = store.get(team, current.client_id).await?.ok_or(InvoiceRule::UnknownClient)?;
            let sender =
                store.get_sender(team, current.sender_id).await?.ok_or(InvoiceRule::UnknownSender)?;
            crate::invoice::check_parties(&items, &current.vat, rule, &client.details, &sender.details)?;
        }
    }
    Ok(store.issue_credit_note(team, invoice, note).await?)
}

/// Connects the team's Stripe account: answers the token of the webhook address to register
/// at Stripe, new each time (the address of an earlier connection stops working).
pub async fn connect_stripe(
    store: &dyn BillingStore,
    team: TeamId,
    secret_key: crate::cards::ProcessorSecret,
    webhook_secret: crate::cards::ProcessorSecret,
    now: DateTime<Utc>,
) -> Result<crate::cards::WebhookToken, StoreError> {
    let token = crate::cards::WebhookToken::generate();
    let account = crate::cards::CardAccount {
        team_id: team,
        processor: crate::cards::Processor::Stripe,
        secret_key,
        webhook_secret,
        token_hash: token.hash(),
        created_at: now,
        updated_at: now,
    };
    store.connect_card_account(&account).await?;
    Ok(token)
}

/// Why a client cannot pay an invoice by card, or a processor's delivery was not taken.
#[derive(Debug, thiserror::Error)]
pub enum CardError {
    #[error("invoice not found")]
    NotFound,
    /// The team has connected no card processor.
    #[error("the team takes no card payments")]
    NotOffered,
    #[error("nothing is due")]
    NothingDue,
    #[error(transparent)]
    Checkout(#[from] crate::cards::CheckoutError),
    /// No account has the delivery's webhook token.
    #[error("no account has this webhook address")]
    UnknownAccount,
    #[error(transparent)]
    Delivery(#[from] crate::cards::DeliveryRefusal),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Where the processor sends the client back to.
#[derive(Debug, Clone)]
pub struct ReturnLinks {
    pub paid: String,
    pub cancelled: String,
}

/// A checkout of what the invoice (found by its unguessable id, as its page is) has due,
/// on its team's Stripe account.
pub async fn card_checkout(
    store: &dyn BillingStore,
    processor: &dyn crate::cards::CardProcessor,
    invoice: InvoiceId,
    links: ReturnLinks,
) -> Result<crate::cards::Checkout, CardError> {
    let invoice = store.find_invoice(invoice).await?.ok_or(CardError::NotFound)?;
    let account = store
        .card_account(invoice.team_id, crate::cards::Processor::Stripe)
        .await?
        .ok_or(CardError::NotOffered)?;
    let due = invoice.balance.due();
    if due <= Decimal::ZERO {
        return Err(CardError::NothingDue);
    }
    let client = store.get(invoice.team_id, invoice.client_id).await?.ok_or(CardError::NotFound)?;
    let request = crate::cards::CheckoutRequest {
        team_id: invoice.team_id,
        invoice_id: invoice.id,
        invoice_number: invoice.number.to_string(),
        amount: due,
        currency: invoice.currency,
        client_email: client.details.email.as_str().to_owned(),
        success_url: links.paid,
        cancel_url: links.cancelled,
        language: client.details.language.map_or("auto", locale::Language::code),
    };
    Ok(processor.checkout(&account, &request).await?)
}

/// What a processor's delivery did to the books.
#[derive(Debug)]
pub enum Received {
    /// What the payment or refund it reported did.
    Booked(crate::cards::Booked),
    /// An event billable does not book.
    Ignored(String),
    /// Reported money the books cannot take (an invoice since deleted, a refund beyond
    /// what was paid): acknowledged, so the processor stops retrying, and to be booked by hand.
    Unbookable(LedgerError),
}

/// Reads and books a processor's delivery to the webhook address of `token`.
pub async fn receive_card_delivery(
    store: &dyn BillingStore,
    processor: &dyn crate::cards::CardProcessor,
    token: &str,
    payload: &[u8],
    signature: &str,
    now: DateTime<Utc>,
) -> Result<Received, CardError> {
    use crate::cards::{CardEvent, WebhookToken};
    let token = WebhookToken::parse(token).ok_or(CardError::UnknownAccount)?;
    let account = store.card_account_by_token(token.hash()).await?.ok_or(CardError::UnknownAccount)?;
    let team = account.team_id;
    let booked = match processor.read_delivery(&account, payload, signature, now)? {
        CardEvent::Other { kind } => return Ok(Received::Ignored(kind)),
        CardEvent::Paid(payment) => {
            store.book_card_payment(team, account.processor, payment, LedgerEntryId::generate(), now).await
        }
        CardEvent::Refunded(refund) => {
            store.book_card_refund(team, account.processor, refund, LedgerEntryId::generate(), now).await
        }
    };
    match booked {
        Ok(booked) => Ok(Received::Booked(booked)),
        Err(LedgerError::Store(error)) => Err(error.into()),
        Err(refused) => Ok(Received::Unbookable(refused)),
    }
}

/// Pays `amount` of the team's invoice from its client's credit in the invoice's currency.
pub async fn apply_credit(
    store: &dyn BillingStore,
    team: TeamId,
    invoice: InvoiceId,
    amount: Decimal,
    now: DateTime<Utc>,
) -> Result<(crate::LedgerEntry, Invoice), BillingError> {
    Ok(store.apply_credit(team, invoice, amount, LedgerEntryId::generate(), now).await?)
}
