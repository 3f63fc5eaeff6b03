//! The invoice storage port, and the store the billing use cases need as a whole.

use accounts::TeamId;
use async_trait::async_trait;
use chrono::{DateTime, NaiveDate, Utc};
use kernel::{Email, StoreError};
use rust_decimal::Decimal;

use crate::cards::{Booked, CardAccount, CardPayment, CardRefund, CreditBalance, Processor, TokenHash};
use crate::credit::{CreditNote, CreditNoteFilter, CreditNoteId, NewCreditNote};
use crate::invoice::{Description, InvoiceRule};
use crate::ledger::{Balance, EntryFilter, Ledger, LedgerEntry, LedgerEntryId, LedgerRule, NewEntry, Notes};
use crate::numbering::NumberTaken;
use crate::quote::{ConversionKind, Decision, Quote, QuoteFilter, QuoteId, QuoteInvoice, QuoteRule};
use crate::receivables::Receivable;
use crate::{
    Client, ClientId, ClientRepository, Invoice, InvoiceFilter, InvoiceId, LineItem, SenderAddress,
    SenderAddressId, SenderRepository, Serial, TaxRule, Totals, money::Currency,
};

/// Who a new invoice is billed to.
#[derive(Debug, Clone)]
pub enum BillTo {
    /// A client of the team.
    Existing(ClientId),
    /// The team's oldest client with this email (compared case-insensitively), or else
    /// `new_client`, created in the invoice's transaction.
    Inline { email: Email, new_client: Box<Client> },
}

/// Whose sender address a new invoice carries.
#[derive(Debug, Clone)]
pub enum SenderChoice {
    /// One of the team's sender addresses.
    Given(SenderAddressId),
    /// The team's default sender address, or else `fallback`, made the team's default in
    /// the invoice's transaction (teams made before invoices existed have none).
    TeamDefault { fallback: Box<SenderAddress> },
}

/// An invoice ready to store but for its serial and, for an inline client, its client.
#[derive(Debug, Clone)]
pub struct NewInvoice {
    pub id: InvoiceId,
    pub team_id: TeamId,
    pub bill_to: BillTo,
    pub sender: SenderChoice,
    pub description: Option<Description>,
    pub issue_date: DateTime<Utc>,
    pub due_date: Option<DateTime<Utc>>,
    pub currency: Currency,
    pub tax_rule: TaxRule,
    /// The discount of the whole invoice, beside its lines'.
    pub discount: Option<crate::Discount>,
    pub totals: Totals,
    pub line_items: Vec<LineItem>,
    pub created_at: DateTime<Utc>,
    /// The ledger's first entry, written in the invoice's transaction: a create with
    /// `status: PAID` pays what is due, one with `status: EXPIRED` writes it off.
    pub opening: Option<NewEntry>,
    /// The team's time entries the invoice bills, as they were read. The store marks each
    /// billed by this invoice in the invoice's own transaction, only if it is still
    /// billable, unbilled and unchanged since, or makes nothing at all
    /// ([`CreateInvoiceError::TimeTaken`]).
    pub time_entries: Vec<TimeToBill>,
    /// The recurring invoice it is made for; storage keeps one invoice per sequence.
    pub recurrence: Option<crate::invoice::Recurrence>,
    pub vat: crate::invoice::Vat,
    /// The team's currency and the rate to it; storage refuses a client billed in another
    /// currency than `currency` ([`CreateInvoiceError::ClientCurrencyDiffers`]).
    pub exchange: crate::invoice::Exchange,
    pub supply: crate::Supply,
    /// Whether its sender is paid to a QR-IBAN, whose payments carry a QR reference: the
    /// kind of payment reference it gets with its number.
    pub qr_reference: bool,
    /// The quote it is made from, if any.
    pub from_quote: Option<crate::quote::FromQuote>,
}

impl NewInvoice {
    /// Whether a client billed in `client_currency` (the team's when `None`) may take it.
    pub fn suits(&self, client_currency: Option<Currency>) -> Result<(), CreateInvoiceError> {
        let client = client_currency.unwrap_or(self.exchange.team_currency);
        if client == self.currency {
            Ok(())
        } else {
            Err(CreateInvoiceError::ClientCurrencyDiffers { client, invoice: self.currency })
        }
    }
}

/// A time entry to bill, by id, as of its last change: the lines were made from that
/// version, so a later change (hours, day, project, user) must not be billed unseen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TimeToBill {
    pub id: kernel::uuid::Uuid,
    pub updated_at: DateTime<Utc>,
}

impl NewInvoice {
    /// [`NewInvoice::time_entries`] without repeats, in order of id.
    pub fn distinct_time_entries(&self) -> Vec<TimeToBill> {
        let mut entries = self.time_entries.clone();
        entries.sort_unstable();
        entries.dedup_by_key(|entry| entry.id);
        entries
    }

    /// The invoice once storage has given it `serial` and `number` and settled its client
    /// and sender, with its opening entry, if any, recorded.
    pub fn into_invoice(
        self,
        serial: Serial,
        number: crate::numbering::DocumentNumber,
        client_id: ClientId,
        sender_id: SenderAddressId,
    ) -> Result<(Invoice, Option<LedgerEntry>), LedgerRule> {
        let deducted = self.from_quote.as_ref().map_or(Decimal::ZERO, |link| link.deducted);
        let mut ledger = Ledger::new(self.totals.total - deducted, self.currency);
        let opening = match self.opening {
            Some(entry) => {
                let amount = ledger.amount_of(entry.kind, entry.amount)?;
                let position = ledger.next_position();
                ledger.apply(entry.kind, amount, entry.on)?;
                Some(entry.into_entry(self.team_id, self.id, amount, position))
            }
            None => None,
        };
        let invoice = Invoice {
            id: self.id,
            team_id: self.team_id,
            serial,
            payment_reference: if self.qr_reference {
                crate::PaymentReference::qr(number.as_str())
            } else {
                crate::PaymentReference::creditor(number.as_str())
            },
            number,
            description: self.description,
            issue_date: self.issue_date,
            due_date: self.due_date,
            status: ledger.balance().status(),
            currency: self.currency,
            tax_rule: self.tax_rule,
            discount: self.discount,
            totals: self.totals,
            balance: ledger.balance(),
            client_id,
            sender_id,
            line_items: self.line_items,
            chasing: crate::invoice::Chasing::default(),
            recurrence: self.recurrence,
            vat: self.vat,
            exchange: self.exchange,
            supply: self.supply,
            from_quote: self.from_quote,
            created_at: self.created_at,
            updated_at: self.created_at,
        };
        Ok((invoice, opening))
    }
}

/// What an update asks of an invoice's status, which follows its ledger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StatusWrite {
    /// No status given.
    Keep,
    /// PENDING: refused once money was recorded ([`LedgerRule::MoneyRecorded`]).
    Pending,
    /// PAID or EXPIRED: pay or write off what is due, in the update's transaction (nothing
    /// when nothing is due).
    Settle(NewEntry),
}

#[derive(Debug, thiserror::Error)]
pub enum CreateInvoiceError {
    #[error("no such client in the team")]
    UnknownClient,
    /// The opening entry breaks a rule of the books (a zero invoice has nothing to pay).
    #[error(transparent)]
    Ledger(#[from] LedgerRule),
    #[error("no such sender address in the team")]
    UnknownSender,
    /// A time entry to bill is gone, changed, not billable, or billed already; nothing was
    /// made.
    #[error("time to bill was billed, changed or deleted meanwhile")]
    TimeTaken,
    /// Its recurring invoice has an invoice of this sequence already (another pass made it);
    /// nothing was made.
    #[error("the recurring invoice has an invoice of this sequence already")]
    RecurrenceTaken,
    /// The client is billed in another currency than the invoice is in.
    #[error("the client is billed in {client}, the invoice is in {invoice}")]
    ClientCurrencyDiffers { client: Currency, invoice: Currency },
    /// The team's currency changed while the invoice was priced in the old one; nothing
    /// was made.
    #[error("the team's currency changed meanwhile")]
    TeamCurrencyChanged,
    /// The team's numbering pattern makes a number one of its invoices has already;
    /// nothing was made.
    #[error(transparent)]
    NumberTaken(#[from] crate::numbering::NumberTaken),
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[derive(Debug, thiserror::Error)]
pub enum SaveInvoiceError {
    #[error("invoice not found")]
    NotFound,
    #[error("no such client in the team")]
    UnknownClient,
    #[error("no such sender address in the team")]
    UnknownSender,
    /// The new total or the status asked for breaks a rule of the books.
    #[error(transparent)]
    Ledger(#[from] LedgerRule),
    /// A new exchange rate for an invoice that was paid, credited, written off or sent
    /// meanwhile: storage checks it under the invoice's lock.
    #[error("the exchange rate is fixed once the invoice was paid, credited, written off or sent")]
    RateLocked,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Whether a change of `stored`'s exchange to `asked` may be written: only while nothing
/// was recorded against the invoice (`recorded`: paid, credited and written off) and it was
/// never sent.
pub fn rate_may_change(
    stored: &crate::invoice::Exchange,
    asked: &crate::invoice::Exchange,
    recorded: Decimal,
    sent: bool,
) -> Result<(), SaveInvoiceError> {
    if stored != asked && (!recorded.is_zero() || sent) {
        return Err(SaveInvoiceError::RateLocked);
    }
    Ok(())
}

#[derive(Debug, thiserror::Error)]
pub enum DeleteInvoiceError {
    #[error("invoice not found")]
    NotFound,
    /// Its ledger has entries or it has credit notes: the books keep it.
    #[error("the invoice has payments, write-offs or credit notes")]
    HasMoney,
    /// A deposit invoice the final invoice `by` of its quote deducts: the final invoice's
    /// amount due counts on it.
    #[error("the final invoice {by} deducts this deposit invoice")]
    Deducted { by: crate::DocumentNumber },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Why a write of an invoice's ledger or a credit note was refused.
#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    /// No such invoice (or entry) in the team.
    #[error("not found")]
    NotFound,
    #[error(transparent)]
    Rule(#[from] LedgerRule),
    /// A credit note's lines break a rule of invoices.
    #[error(transparent)]
    Lines(#[from] InvoiceRule),
    /// The team's numbering pattern makes a number one of its credit notes has already;
    /// nothing was issued.
    #[error(transparent)]
    NumberTaken(#[from] crate::numbering::NumberTaken),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Storage of invoices with their line items. Scoped to a team, but for
/// [`InvoiceRepository::find_invoice`]: the public PDF link carries only the id.
#[async_trait]
pub trait InvoiceRepository: Send + Sync {
    /// The team's invoices that `filter` shows, in [`crate::invoice::sort_for_listing`]
    /// order, at most its `limit` of them, items in position order.
    async fn list_invoices(&self, team: TeamId, filter: &InvoiceFilter) -> Result<Vec<Invoice>, StoreError>;

    async fn get_invoice(&self, team: TeamId, id: InvoiceId) -> Result<Option<Invoice>, StoreError>;

    /// The invoice with this id, whatever its team.
    async fn find_invoice(&self, id: InvoiceId) -> Result<Option<Invoice>, StoreError>;

    /// Stores a new invoice, all or nothing, in one transaction: the team's next serial
    /// (the last one given plus one, never reused, gapless under concurrency because a
    /// failed create gives its serial back), the inline client when one is to be made,
    /// the team's default sender when it has none and the invoice asks for it, the
    /// invoice and its items. MUST check that the client and the sender address are the
    /// team's.
    async fn create_invoice(&self, invoice: NewInvoice) -> Result<Invoice, CreateInvoiceError>;

    /// Does all that [`InvoiceRepository::create_invoice`] would, checks included, and keeps
    /// none of it (a transaction rolled back): the answer is the invoice a create would
    /// store now, with the serial it would take. Nothing is reserved.
    async fn preview_invoice(&self, invoice: NewInvoice) -> Result<Invoice, CreateInvoiceError>;

    /// Writes every field of `invoice` but its identity, serial, currency, creation time,
    /// status and balance; with `lines_changed`, replaces all its items; then applies
    /// `status`. All or nothing, with the invoice locked against other writes of its
    /// ledger. MUST check that the client and the sender address are the team's, and that
    /// the ledger still plays with the new total ([`LedgerRule::TotalBelowRecorded`]).
    /// Answers the invoice as stored, its balance and status the ledger's.
    async fn replace_invoice(
        &self,
        invoice: &Invoice,
        lines_changed: bool,
        status: StatusWrite,
    ) -> Result<Invoice, SaveInvoiceError>;

    /// Deletes the invoice and its items for good, at `at`; refused
    /// ([`DeleteInvoiceError::HasMoney`]) while its ledger has entries or it has credit
    /// notes.
    async fn delete_invoice(
        &self,
        team: TeamId,
        id: InvoiceId,
        at: DateTime<Utc>,
    ) -> Result<(), DeleteInvoiceError>;
}

/// The ledger of each invoice, its credit notes, and what clients owe. Every write locks
/// its invoice, plays the ledger with the new event ([`Ledger`]), refuses what breaks a
/// rule, and stores the invoice's new balance and status, in one transaction: concurrent
/// writes to one invoice's books are played one after the other.
#[async_trait]
pub trait LedgerRepository: Send + Sync {
    /// Appends `entry` to the ledger of the team's invoice `invoice`; answers the entry
    /// (its amount settled) and the invoice as the ledger leaves it.
    async fn record_entry(
        &self,
        team: TeamId,
        invoice: InvoiceId,
        entry: NewEntry,
    ) -> Result<(LedgerEntry, Invoice), LedgerError>;

    /// Voids the team's entry `entry`: it stays listed and no longer counts. Refused when
    /// voided already, or when a later entry would break a rule without it.
    async fn void_entry(
        &self,
        team: TeamId,
        entry: LedgerEntryId,
        reason: Option<Notes>,
        at: DateTime<Utc>,
    ) -> Result<(LedgerEntry, Invoice), LedgerError>;

    async fn get_entry(&self, team: TeamId, id: LedgerEntryId) -> Result<Option<LedgerEntry>, StoreError>;

    /// The team's entries `filter` shows, newest day first (then newest id), at most its
    /// `limit`.
    async fn list_entries(&self, team: TeamId, filter: &EntryFilter) -> Result<Vec<LedgerEntry>, StoreError>;

    /// Issues a credit note against the team's invoice `invoice`, with the team's next
    /// credit serial (gapless and unique under concurrency, a series of its own).
    async fn issue_credit_note(
        &self,
        team: TeamId,
        invoice: InvoiceId,
        note: NewCreditNote,
    ) -> Result<(CreditNote, Invoice), LedgerError>;

    async fn get_credit_note(&self, team: TeamId, id: CreditNoteId)
    -> Result<Option<CreditNote>, StoreError>;

    /// The credit note with this id, whatever its team (its public PDF link).
    async fn find_credit_note(&self, id: CreditNoteId) -> Result<Option<CreditNote>, StoreError>;

    /// The team's credit notes `filter` shows, newest serial first, at most its `limit`.
    async fn list_credit_notes(
        &self,
        team: TeamId,
        filter: &CreditNoteFilter,
    ) -> Result<Vec<CreditNote>, StoreError>;

    /// What each client of the team owes, by how long it is past due on day `as_of`.
    async fn receivables(&self, team: TeamId, as_of: NaiveDate) -> Result<Vec<Receivable>, StoreError>;
}

/// The entry `entry` makes on `invoice` (as read under its lock) and the balance it leaves,
/// as every adapter writes them: the invoice's balance, with the entry applied by the
/// ledger's rules.
pub fn record(invoice: &Invoice, entry: NewEntry) -> Result<(LedgerEntry, Balance), LedgerRule> {
    let mut ledger = Ledger::resume(invoice.balance, invoice.currency);
    let amount = ledger.amount_of(entry.kind, entry.amount)?;
    let position = ledger.next_position();
    ledger.apply(entry.kind, amount, entry.on)?;
    Ok((entry.into_entry(invoice.team_id, invoice.id, amount, position), ledger.balance()))
}

/// A credit note of `note` against `invoice` (as read under its lock), as every adapter
/// makes it: its lines priced, what it does to the balance decided by the ledger, and the
/// balance it leaves.
pub fn credit(
    invoice: &Invoice,
    note: NewCreditNote,
    serial: crate::credit::CreditSerial,
    number: crate::numbering::DocumentNumber,
) -> Result<(CreditNote, Balance), LedgerError> {
    let crate::credit::PricedCredit { items: line_items, tax_rule, discount, totals } =
        crate::credit::price_credit(invoice, &note.lines, note.created_at)?;
    let mut ledger = Ledger::resume(invoice.balance, invoice.currency);
    let position = ledger.next_position();
    let application = ledger.credit(totals.total, invoice.balance.credit_notes_total())?;
    let note = CreditNote {
        id: note.id,
        team_id: invoice.team_id,
        serial,
        number,
        invoice_id: invoice.id,
        invoice_number: invoice.number.clone(),
        issue_date: note.created_at,
        currency: invoice.currency,
        tax_rule,
        vat: invoice.vat.clone(),
        line_items,
        discount,
        totals,
        reason: note.reason,
        application,
        position,
        created_at: note.created_at,
    };
    Ok((note, ledger.balance()))
}

/// The balance voiding `entry` leaves: the ledger played without it.
pub fn void(
    invoice: &Invoice,
    entries: &[LedgerEntry],
    credits: &[(crate::ledger::CreditApplication, crate::ledger::Position)],
    entry: LedgerEntryId,
    at: DateTime<Utc>,
) -> Result<Balance, LedgerRule> {
    let mut played = entries.to_vec();
    let target = played.iter_mut().find(|e| e.id == entry).ok_or(LedgerRule::AlreadyVoided)?;
    if target.voided_at.is_some() {
        return Err(LedgerRule::AlreadyVoided);
    }
    target.voided_at = Some(at);
    Ledger::settle(invoice.payable(), invoice.currency, crate::ledger::events(&played, credits))
        .map(|ledger| ledger.balance())
        .map_err(|rule| LedgerRule::VoidBreaks(Box::new(rule)))
}

/// The balance an update leaves: the ledger played with the new total (refused below what
/// was recorded), then the status asked for.
pub fn rebalance(
    updated: &Invoice,
    recorded_before: Decimal,
    entries: &[LedgerEntry],
    credits: &[(crate::ledger::CreditApplication, crate::ledger::Position)],
    status: StatusWrite,
) -> Result<(Balance, Option<LedgerEntry>), LedgerRule> {
    let mut ledger =
        crate::ledger::retotal(updated.payable(), updated.currency, entries, credits, recorded_before)?;
    let entry = match status {
        StatusWrite::Pending if ledger.balance().has_money() => return Err(LedgerRule::MoneyRecorded),
        StatusWrite::Keep | StatusWrite::Pending => None,
        StatusWrite::Settle(entry) => match ledger.amount_of(entry.kind, entry.amount) {
            // Nothing due, and the status asked for is the invoice's already: nothing to do.
            Err(LedgerRule::NothingDue) if ledger.balance().status() == entry.kind.settled_status() => None,
            Err(rule) => return Err(rule),
            Ok(amount) => {
                let position = ledger.next_position();
                ledger.apply(entry.kind, amount, entry.on)?;
                Some(entry.into_entry(updated.team_id, updated.id, amount, position))
            }
        },
    };
    Ok((ledger.balance(), entry))
}

/// A team's processor accounts, and the books' side of what processors report.
#[async_trait]
pub trait CardRepository: Send + Sync {
    /// Connects the team's account with `account.processor`, replacing the one it had.
    async fn connect_card_account(&self, account: &CardAccount) -> Result<(), StoreError>;

    async fn card_account(
        &self,
        team: TeamId,
        processor: Processor,
    ) -> Result<Option<CardAccount>, StoreError>;

    /// The account whose webhook token hashes to `hash`, whatever its team.
    async fn card_account_by_token(&self, hash: TokenHash) -> Result<Option<CardAccount>, StoreError>;

    /// Disconnects it; `false` when the team had none.
    async fn disconnect_card_account(&self, team: TeamId, processor: Processor) -> Result<bool, StoreError>;

    /// Books `payment` of the team's invoice exactly once (by its processor and reference):
    /// under the invoice's lock, what is due as a card payment ([`crate::cards::split_payment`]), the
    /// rest as the client's credit with an `invoice.overpaid` event. A payment in another
    /// currency than the invoice's is all credit.
    async fn book_card_payment(
        &self,
        team: TeamId,
        processor: Processor,
        payment: CardPayment,
        entry: LedgerEntryId,
        at: DateTime<Utc>,
    ) -> Result<Booked, LedgerError>;

    /// Books what `refund` says was refunded beyond the refunds booked of its payment, as
    /// one refund ([`crate::cards::split_refund`]), once. `NotFound` when no payment of that reference
    /// was booked; [`Booked::Already`] when nothing more was refunded.
    async fn book_card_refund(
        &self,
        team: TeamId,
        processor: Processor,
        refund: CardRefund,
        entry: LedgerEntryId,
        at: DateTime<Utc>,
    ) -> Result<Booked, LedgerError>;

    /// Pays `amount` of the team's invoice from its client's credit in the invoice's
    /// currency ([`crate::cards::credit_entry`]): refused ([`LedgerRule::CreditShort`])
    /// beyond that credit or ([`LedgerRule::ExceedsDue`]) beyond what is due.
    async fn apply_credit(
        &self,
        team: TeamId,
        invoice: InvoiceId,
        amount: Decimal,
        entry: LedgerEntryId,
        at: DateTime<Utc>,
    ) -> Result<(LedgerEntry, Invoice), LedgerError>;

    /// The credit the team's clients hold (of `client` only, when given), none at 0.
    async fn credit_balances(
        &self,
        team: TeamId,
        client: Option<ClientId>,
    ) -> Result<Vec<CreditBalance>, StoreError>;
}

/// Everything the billing use cases store.
pub trait BillingStore:
    ClientRepository
    + InvoiceRepository
    + SenderRepository
    + LedgerRepository
    + NumberingRepository
    + CardRepository
    + QuoteRepository
    + crate::banking::BankRepository
{
}

impl<
    T: ClientRepository
        + InvoiceRepository
        + SenderRepository
        + LedgerRepository
        + NumberingRepository
        + CardRepository
        + QuoteRepository
        + crate::banking::BankRepository,
> BillingStore for T
{
}

/// Storage of how each team numbers its documents. The stores that issue a document number
/// it in its own transaction, under the lock that keeps the series gapless: by the pattern
/// the team has then ([`crate::numbering::NumberingPattern::count_for`] says which count).
#[async_trait]
pub trait NumberingRepository: Send + Sync {
    /// The team's patterns: the defaults of the series it chose none for.
    async fn numbering(&self, team: TeamId) -> Result<crate::numbering::Numbering, StoreError>;

    /// Sets the patterns of the series `change` names: the team's next documents of them
    /// take them; the other series keep theirs, whatever changed them meanwhile.
    async fn set_numbering(
        &self,
        team: TeamId,
        change: &crate::numbering::NumberingChange,
    ) -> Result<(), StoreError>;
}

/// An invoice to make of a quote, as planned from the quote as it was read.
#[derive(Debug, Clone)]
pub struct Conversion {
    pub kind: ConversionKind,
    /// The invoice, its `from_quote` set.
    pub invoice: NewInvoice,
    /// How many invoices the quote had when the conversion was planned: storage makes
    /// nothing ([`QuoteStoreError::ChangedMeanwhile`]) when another was made since.
    pub invoices_before: usize,
}

/// Why storage refused a write of a quote.
#[derive(Debug, thiserror::Error)]
pub enum QuoteStoreError {
    #[error("quote not found")]
    NotFound,
    #[error("no such client in the team")]
    UnknownClient,
    /// The quote as locked breaks a rule of quotes for this write.
    #[error(transparent)]
    Rule(#[from] QuoteRule),
    /// Another invoice was made of the quote since the conversion was planned; nothing was
    /// made.
    #[error("the quote gained an invoice meanwhile")]
    ChangedMeanwhile,
    /// The invoice of a conversion was refused as a create is.
    #[error(transparent)]
    Invoice(#[from] CreateInvoiceError),
    /// The team's numbering pattern makes a number one of its quotes has already; nothing
    /// was numbered.
    #[error(transparent)]
    NumberTaken(#[from] NumberTaken),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Storage of quotes with their lines, decisions and invoices. Scoped to a team, but for
/// [`QuoteRepository::find_quote`]: the quote's page carries only its id. Every write locks
/// the quote and checks its rule on the quote as locked, so that concurrent writes of one
/// quote are played one after the other.
#[async_trait]
pub trait QuoteRepository: Send + Sync {
    /// Stores a new draft with its lines. MUST check that its client is the team's.
    async fn create_quote(&self, quote: &Quote) -> Result<Quote, QuoteStoreError>;

    async fn get_quote(&self, team: TeamId, id: QuoteId) -> Result<Option<Quote>, StoreError>;

    /// The quote with this id, whatever its team.
    async fn find_quote(&self, id: QuoteId) -> Result<Option<Quote>, StoreError>;

    /// The team's quotes `filter` shows, in [`crate::quote::sort_for_listing`] order, at most its `limit`.
    async fn list_quotes(&self, team: TeamId, filter: &QuoteFilter) -> Result<Vec<Quote>, StoreError>;

    /// Writes every field of the draft `quote` but its identity, number, creation and
    /// decision, and replaces its lines; refused unless it is still a draft as locked
    /// ([`QuoteRule::NotADraft`]). MUST check that its client is the team's.
    async fn replace_quote(&self, quote: &Quote) -> Result<Quote, QuoteStoreError>;

    /// Deletes a draft for good; refused once it is numbered.
    async fn delete_quote(&self, team: TeamId, id: QuoteId, at: DateTime<Utc>)
    -> Result<(), QuoteStoreError>;

    /// Numbers a draft with the team's next number of its quote series (gapless under
    /// concurrency, as invoices' are) and puts it before its client at `at`, raising
    /// `quote.sent`; a quote numbered already is answered as it is, with `false`.
    async fn finalize_quote(
        &self,
        team: TeamId,
        id: QuoteId,
        at: DateTime<Utc>,
    ) -> Result<(Quote, bool), QuoteStoreError>;

    /// Records its client's decision, final, where [`Quote::check_decidable`] allows it on
    /// the quote as locked, raising `quote.accepted` or `quote.declined`.
    async fn decide_quote(
        &self,
        team: TeamId,
        id: QuoteId,
        decision: &Decision,
    ) -> Result<Quote, QuoteStoreError>;

    /// Makes `conversion`'s invoice of the quote in one transaction with the quote locked:
    /// refused by [`Quote::check_convertible`] on the quote as locked (a second full
    /// conversion names the first's invoice), or [`QuoteStoreError::ChangedMeanwhile`] when
    /// it gained an invoice since it was planned; else the invoice as
    /// [`crate::InvoiceRepository::create_invoice`] makes it (its serial, checks and events),
    /// kept among the quote's invoices, with `quote.converted` once a full or final one is
    /// made.
    async fn convert_quote(
        &self,
        team: TeamId,
        id: QuoteId,
        conversion: &Conversion,
        at: DateTime<Utc>,
    ) -> Result<(Quote, Invoice), QuoteStoreError>;
}

/// What a conversion adds to the quote it converts, as every adapter keeps it.
pub fn converted(conversion: &Conversion, invoice: &Invoice) -> QuoteInvoice {
    QuoteInvoice {
        invoice_id: invoice.id,
        number: invoice.number.clone(),
        kind: conversion.kind,
        net: invoice.totals.taxable_amount(),
        total: invoice.totals.total,
    }
}

/// The check of a conversion on the quote as locked, as every adapter makes it.
pub fn check_conversion(
    locked: &Quote,
    conversion: &Conversion,
    at: DateTime<Utc>,
) -> Result<(), QuoteStoreError> {
    locked.check_convertible(at)?;
    if locked.invoices.len() != conversion.invoices_before {
        return Err(QuoteStoreError::ChangedMeanwhile);
    }
    Ok(())
}

/// A ledger write's refusal within a bank booking.
impl From<LedgerError> for crate::banking::BankError {
    fn from(error: LedgerError) -> Self {
        match error {
            LedgerError::Rule(rule) => Self::Books(rule),
            LedgerError::Store(error) => Self::Store(error),
            LedgerError::NotFound => Self::NotFound,
            other => {
                Self::Store(StoreError::Unexpected(anyhow::anyhow!("a bank booking's ledger write: {other}")))
            }
        }
    }
}
