//! What was paid, refunded, written off and credited on an invoice, and what that leaves
//! due: the append-only ledger of an invoice, its rules, and the status that follows.
//!
//! An invoice's balance is the ledger played in order ([`Ledger::settle`]): a payment
//! lowers what is due and may not exceed it; a refund gives back what was paid and may not
//! exceed it; a write-off forgives what is due; a credit note lowers what is due by what it
//! can ([`CreditApplication`]) and leaves the rest refundable, which the next refunds pay
//! out first. Every entry and credit note takes the next [`Position`] in its invoice's
//! books when it is written, under the invoice's lock, and the ledger plays them in that
//! order: clocks (coarse, or another replica's) never decide it. A voided entry no longer counts: the ledger is played again without it, and
//! the void is refused if a later entry would then break a rule. Storage plays it in the
//! transaction of every write that touches an invoice's money, so the figures it keeps are
//! always the ledger's.

use accounts::TeamId;
use chrono::{DateTime, NaiveDate, Utc};
use kernel::{InvalidValue, Text, define_id};
use rust_decimal::Decimal;

use crate::invoice::{InvoiceId, InvoiceStatus};
use crate::money::{Bound, Currency, round_to_minor};

define_id!(
    /// Identifies a ledger entry: a payment, a refund or a write-off.
    LedgerEntryId
);

/// What a ledger entry records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EntryKind {
    /// Money received from the client.
    Payment,
    /// Money given back to the client.
    Refund,
    /// What is due, forgiven: the invoice will not be paid.
    WriteOff,
}

kernel::words!(EntryKind {
    Payment => "payment",
    Refund => "refund",
    WriteOff => "write_off",
});

impl EntryKind {
    /// The status an invoice has once an entry of this kind took what was due to 0.
    pub fn settled_status(self) -> InvoiceStatus {
        match self {
            Self::Payment => InvoiceStatus::Paid,
            Self::WriteOff => InvoiceStatus::Expired,
            Self::Refund => InvoiceStatus::Pending,
        }
    }
}

/// How money was paid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PaymentMethod {
    BankTransfer,
    Card,
    Cash,
    Check,
    #[default]
    Other,
}

kernel::words!(PaymentMethod {
    BankTransfer => "bank_transfer",
    Card => "card",
    Cash => "cash",
    Check => "check",
    Other => "other",
});

impl PaymentMethod {
    pub fn parse(text: &str) -> Result<Self, InvalidValue> {
        <Self as kernel::Words>::parse_word(text)
    }
}

/// A bank's or processor's reference of a payment: at most 200 characters.
pub type Reference = Text<0, 200>;
/// Notes on an entry, the reason of a refund, a write-off or a void: at most 1000 characters.
pub type Notes = Text<0, 1000>;

/// A payment's, refund's or write-off's amount: greater than 0, at most 10²⁴, at most 4
/// decimals (the finest minor unit of ISO 4217); [`Ledger`] holds it to its currency's.
pub const ENTRY_AMOUNT: Bound = Bound {
    max: Decimal::from_parts(0xA100_0000, 0x1BCE_CCED, 0xD3C2, false, 0),
    decimals: 4,
    above_zero: true,
    rounded_to_minor_unit: false,
};

/// Where an entry or a credit note stands in its invoice's books: the first one written is
/// 0 and each later one, voided or not, the next. The ledger is played in this order.
pub type Position = u32;

/// One entry of an invoice's ledger. Entries are never changed but to be voided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerEntry {
    pub id: LedgerEntryId,
    pub team_id: TeamId,
    pub invoice_id: InvoiceId,
    pub position: Position,
    pub kind: EntryKind,
    /// Positive, at the invoice currency's minor unit.
    pub amount: Decimal,
    /// The day the money moved (or the debt was forgiven).
    pub on: NaiveDate,
    pub method: PaymentMethod,
    pub reference: Option<Reference>,
    pub notes: Option<Notes>,
    pub voided_at: Option<DateTime<Utc>>,
    pub void_reason: Option<Notes>,
    pub created_at: DateTime<Utc>,
}

impl LedgerEntry {
    pub fn counts(&self) -> bool {
        self.voided_at.is_none()
    }
}

/// How much a new entry is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryAmount {
    Exactly(Decimal),
    /// Whatever is due when the entry is written: `mark`, `status: PAID`, a write-off.
    AllDue,
}

/// A ledger entry to write, but for its amount when that is [`EntryAmount::AllDue`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewEntry {
    pub id: LedgerEntryId,
    pub kind: EntryKind,
    pub amount: EntryAmount,
    pub on: NaiveDate,
    pub method: PaymentMethod,
    pub reference: Option<Reference>,
    pub notes: Option<Notes>,
    pub created_at: DateTime<Utc>,
}

impl NewEntry {
    /// The entry of `invoice` for `amount` at `position` in its books, as storage keeps it.
    pub fn into_entry(
        self,
        team_id: TeamId,
        invoice_id: InvoiceId,
        amount: Decimal,
        position: Position,
    ) -> LedgerEntry {
        LedgerEntry {
            id: self.id,
            team_id,
            invoice_id,
            position,
            kind: self.kind,
            amount,
            on: self.on,
            method: self.method,
            reference: self.reference,
            notes: self.notes,
            voided_at: None,
            void_reason: None,
            created_at: self.created_at,
        }
    }
}

/// A rule of the books that a write would break, with the figure it would pass.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LedgerRule {
    #[error("the amount exceeds what is due, {due}")]
    ExceedsDue { due: Decimal },
    #[error("the amount exceeds what was paid, {paid}")]
    ExceedsPaid { paid: Decimal },
    #[error("nothing is due")]
    NothingDue,
    /// More than the client's credit in the invoice's currency.
    #[error("the amount exceeds the client's credit, {available}")]
    CreditShort { available: Decimal },
    /// The invoice's credit notes would come to more than its total.
    #[error("the credit notes would come to {credited}, more than the invoice's total {total}")]
    CreditExceedsTotal { credited: Decimal, total: Decimal },
    /// A new total below what the ledger has recorded against the invoice.
    #[error("the total {total} would be below what was paid, credited and written off, {recorded}")]
    TotalBelowRecorded { total: Decimal, recorded: Decimal },
    /// Playing the ledger without a voided entry breaks a later one.
    #[error("voiding it would leave a later entry unbacked: {0}")]
    VoidBreaks(Box<LedgerRule>),
    #[error("the entry is voided already")]
    AlreadyVoided,
    /// A PENDING status asked of an invoice that has money recorded.
    #[error("money was recorded against the invoice")]
    MoneyRecorded,
    /// An amount finer than the currency's minor unit.
    #[error("{currency} has {places} decimal places")]
    FinerThanCurrency { currency: Currency, places: u32 },
}

/// What a credit note does to its invoice's balance, decided when it is issued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CreditApplication {
    pub total: Decimal,
    /// The part that lowers what is due: the smaller of the note's total and what was due.
    pub applied: Decimal,
    /// The rest: owed back to the client, paid out by the next refunds.
    pub refundable: Decimal,
}

/// One event of an invoice's ledger: an entry, or what a credit note did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event<'a> {
    Entry(&'a LedgerEntry),
    Credit { application: CreditApplication, position: Position },
}

impl Event<'_> {
    fn position(&self) -> Position {
        match self {
            Self::Entry(entry) => entry.position,
            Self::Credit { position, .. } => *position,
        }
    }
}

/// An invoice's money as its ledger leaves it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Balance {
    pub total: Decimal,
    /// Payments less refunds.
    pub paid: Decimal,
    /// What its credit notes took off what is due.
    pub credited: Decimal,
    pub written_off: Decimal,
    /// Credit owed back to the client and not refunded yet.
    pub refundable: Decimal,
    /// When what is due reached 0 with money paid: the day of the entry that settled it.
    pub paid_on: Option<NaiveDate>,
    /// How many entries and credit notes the books hold, voided ones too: the position of
    /// the next.
    pub events: Position,
}

impl Balance {
    /// An invoice of `total` with nothing recorded.
    pub fn unpaid(total: Decimal) -> Self {
        Self {
            total,
            paid: Decimal::ZERO,
            credited: Decimal::ZERO,
            written_off: Decimal::ZERO,
            refundable: Decimal::ZERO,
            paid_on: None,
            events: 0,
        }
    }

    /// `total − paid − credited − written off`; never below 0.
    pub fn due(&self) -> Decimal {
        self.total - self.paid - self.credited - self.written_off
    }

    /// What the ledger has recorded against the invoice.
    pub fn recorded(&self) -> Decimal {
        self.paid + self.credited + self.written_off
    }

    /// What the invoice's credit notes came to: a refund moves credit from refundable to
    /// credited, so the two together never change but by a new note.
    pub fn credit_notes_total(&self) -> Decimal {
        self.credited + self.refundable
    }

    /// Whether any money was recorded against the invoice.
    pub fn has_money(&self) -> bool {
        !self.recorded().is_zero() || !self.refundable.is_zero()
    }

    /// The status the books give: nothing recorded, `PENDING`; what is due at 0 with
    /// nothing written off and money paid, `PAID`; at 0 otherwise (written off, or
    /// credited in full), `EXPIRED`; paid in part, `PAID_PARTIAL`; credited in part only,
    /// `PENDING`. A `PENDING` invoice reads `OVERDUE` past its due date
    /// ([`crate::Invoice::status_at`]).
    pub fn status(&self) -> InvoiceStatus {
        let paid = self.paid > Decimal::ZERO;
        if self.due().is_zero() && !self.total.is_zero() {
            if self.written_off.is_zero() && paid { InvoiceStatus::Paid } else { InvoiceStatus::Expired }
        } else if paid {
            InvoiceStatus::PaidPartial
        } else {
            InvoiceStatus::Pending
        }
    }
}

/// Plays an invoice's ledger.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ledger {
    balance: Balance,
    currency: Currency,
}

impl Ledger {
    /// An invoice of `total` in `currency` with nothing recorded.
    pub fn new(total: Decimal, currency: Currency) -> Self {
        Self::resume(Balance::unpaid(total), currency)
    }

    /// The ledger of an invoice whose books left `balance`, to write its next event: what
    /// the invoice stores is always what playing its books gives, so a new entry or credit
    /// note need not play them again.
    pub fn resume(balance: Balance, currency: Currency) -> Self {
        Self { balance, currency }
    }

    pub fn balance(&self) -> Balance {
        self.balance
    }

    /// Where the next entry or credit note written stands in the invoice's books.
    pub fn next_position(&self) -> Position {
        self.balance.events
    }

    /// The balance after `events`, played in the order of their positions (voided entries
    /// are left out). Fails with the first rule an event breaks.
    pub fn settle<'a>(
        total: Decimal,
        currency: Currency,
        events: impl IntoIterator<Item = Event<'a>>,
    ) -> Result<Self, LedgerRule> {
        let mut events: Vec<Event<'a>> = events.into_iter().collect();
        events.sort_by_key(Event::position);
        let mut ledger = Self::new(total, currency);
        for event in events {
            match event {
                Event::Entry(entry) if entry.counts() => {
                    ledger.apply(entry.kind, entry.amount, entry.on)?;
                }
                Event::Entry(_) => ledger.balance.events += 1,
                Event::Credit { application, .. } => ledger.replay_credit(application)?,
            }
        }
        Ok(ledger)
    }

    /// `amount` as this ledger's currency holds it: refused when finer than its minor unit.
    pub fn exact(&self, amount: Decimal) -> Result<Decimal, LedgerRule> {
        let rounded = round_to_minor(amount, self.currency);
        if rounded == amount {
            Ok(rounded)
        } else {
            Err(LedgerRule::FinerThanCurrency { currency: self.currency, places: self.currency.minor_unit() })
        }
    }

    /// The amount `amount` stands for now: what is due for [`EntryAmount::AllDue`].
    pub fn amount_of(&self, kind: EntryKind, amount: EntryAmount) -> Result<Decimal, LedgerRule> {
        match amount {
            EntryAmount::Exactly(amount) => self.exact(amount),
            EntryAmount::AllDue => {
                let due = self.balance.due();
                if due > Decimal::ZERO || kind == EntryKind::Refund {
                    Ok(due)
                } else {
                    Err(LedgerRule::NothingDue)
                }
            }
        }
    }

    /// Records an entry of `kind` for `amount` on day `on`.
    pub fn apply(&mut self, kind: EntryKind, amount: Decimal, on: NaiveDate) -> Result<(), LedgerRule> {
        let amount = self.exact(amount)?;
        let balance = &mut self.balance;
        match kind {
            EntryKind::Payment => {
                if amount > balance.due() {
                    return Err(LedgerRule::ExceedsDue { due: balance.due() });
                }
                balance.paid += amount;
                if balance.due().is_zero() {
                    balance.paid_on = Some(on);
                }
            }
            EntryKind::WriteOff => {
                if amount > balance.due() {
                    return Err(LedgerRule::ExceedsDue { due: balance.due() });
                }
                balance.written_off += amount;
            }
            EntryKind::Refund => {
                if amount > balance.paid {
                    return Err(LedgerRule::ExceedsPaid { paid: balance.paid });
                }
                balance.paid -= amount;
                // What credit notes left refundable is paid out first: that much of the
                // credit now counts against the invoice instead.
                let from_credit = amount.min(balance.refundable);
                balance.refundable -= from_credit;
                balance.credited += from_credit;
            }
        }
        if !balance.due().is_zero() {
            balance.paid_on = None;
        }
        balance.events += 1;
        Ok(())
    }

    /// Issues a credit note of `total` against the invoice, given the totals of the ones
    /// issued before: it lowers what is due by what it can, the rest is refundable.
    pub fn credit(
        &mut self,
        total: Decimal,
        earlier_credits: Decimal,
    ) -> Result<CreditApplication, LedgerRule> {
        let total = self.exact(total)?;
        let credited = earlier_credits + total;
        if credited > self.balance.total {
            return Err(LedgerRule::CreditExceedsTotal { credited, total: self.balance.total });
        }
        let applied = total.min(self.balance.due());
        let application = CreditApplication { total, applied, refundable: total - applied };
        self.replay_credit(application)?;
        Ok(application)
    }

    fn replay_credit(&mut self, application: CreditApplication) -> Result<(), LedgerRule> {
        let balance = &mut self.balance;
        if application.applied > balance.due() {
            return Err(LedgerRule::TotalBelowRecorded {
                total: balance.total,
                recorded: balance.recorded(),
            });
        }
        balance.credited += application.applied;
        balance.refundable += application.refundable;
        balance.events += 1;
        Ok(())
    }
}

/// The balance of an invoice of `total` whose ledger holds `entries` and whose credit notes
/// did `credits`, after its total changed to `total`: refused when the new total is below
/// what was recorded.
pub fn retotal<'a>(
    total: Decimal,
    currency: Currency,
    entries: &'a [LedgerEntry],
    credits: &'a [(CreditApplication, Position)],
    recorded_before: Decimal,
) -> Result<Ledger, LedgerRule> {
    Ledger::settle(total, currency, events(entries, credits))
        .map_err(|_| LedgerRule::TotalBelowRecorded { total, recorded: recorded_before })
}

/// The events of an invoice's ledger: its entries, and what each of its credit notes did
/// with the note's position.
pub fn events<'a>(
    entries: &'a [LedgerEntry],
    credits: &'a [(CreditApplication, Position)],
) -> impl Iterator<Item = Event<'a>> {
    entries.iter().map(Event::Entry).chain(
        credits
            .iter()
            .map(|(application, position)| Event::Credit { application: *application, position: *position }),
    )
}

/// Which listing a ledger entry is in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EntryFilter {
    pub invoice: Option<InvoiceId>,
    pub client: Option<crate::ClientId>,
    /// Entries of this day or later.
    pub from: Option<NaiveDate>,
    /// Entries of this day or earlier.
    pub to: Option<NaiveDate>,
    pub method: Option<PaymentMethod>,
    /// Only entries after this one in listing order (newest first: day, then id).
    pub after: Option<EntryPosition>,
    pub limit: Option<u32>,
}

/// Where an entry stands in listing order, reversed: `(on, id)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EntryPosition {
    pub on: NaiveDate,
    pub id: kernel::uuid::Uuid,
}

impl EntryPosition {
    pub fn of(entry: &LedgerEntry) -> Self {
        use kernel::Id;
        Self { on: entry.on, id: entry.id.as_uuid() }
    }
}

impl EntryFilter {
    /// Whether `entry`, of an invoice billed to `client`, is one the listing shows (before
    /// `limit`).
    pub fn matches(&self, entry: &LedgerEntry, client: crate::ClientId) -> bool {
        self.invoice.is_none_or(|invoice| entry.invoice_id == invoice)
            && self.client.is_none_or(|wanted| wanted == client)
            && self.from.is_none_or(|from| entry.on >= from)
            && self.to.is_none_or(|to| entry.on <= to)
            && self.method.is_none_or(|method| entry.kind == EntryKind::Payment && entry.method == method)
            && self.after.is_none_or(|after| EntryPosition::of(entry) < after)
    }
}

/// Puts entries in listing order: newest day first, then newest id.
pub fn sort_for_listing(entries: &mut [LedgerEntry]) {
    entries.sort_by_key(|entry| std::cmp::Reverse(EntryPosition::of(entry)));
}

#[cfg(test)]
mod tests {

    use kernel::Id;

    use super::*;

    fn eur() -> Currency {
        Currency::parse("EUR").unwrap()
    }

    fn d(text: &str) -> Decimal {
        text.parse().unwrap()
    }

    fn day() -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, 11, 25).unwrap()
    }

    /// An entry at `position`, written at the same instant as every other: the clock never
    /// orders the books.
    fn entry(kind: EntryKind, amount: &str, position: Position) -> LedgerEntry {
        LedgerEntry {
            id: LedgerEntryId::generate(),
            team_id: TeamId::generate(),
            invoice_id: InvoiceId::generate(),
            position,
            kind,
            amount: d(amount),
            on: day(),
            method: PaymentMethod::Other,
            reference: None,
            notes: None,
            voided_at: None,
            void_reason: None,
            created_at: DateTime::from_timestamp(1_800_000_000, 0).unwrap(),
        }
    }

    #[test]
    fn payments_lower_what_is_due_and_never_pass_it() {
        let mut ledger = Ledger::new(d("100.00"), eur());
        ledger.apply(EntryKind::Payment, d("29.21"), day()).unwrap();
        assert_eq!(ledger.balance().due(), d("70.79"));
        assert_eq!(ledger.balance().status(), InvoiceStatus::PaidPartial);
        assert_eq!(
            ledger.apply(EntryKind::Payment, d("70.80"), day()),
            Err(LedgerRule::ExceedsDue { due: d("70.79") })
        );
        ledger.apply(EntryKind::Payment, d("70.79"), day()).unwrap();
        assert_eq!((ledger.balance().status(), ledger.balance().paid_on), (InvoiceStatus::Paid, Some(day())));
        assert_eq!(ledger.amount_of(EntryKind::Payment, EntryAmount::AllDue), Err(LedgerRule::NothingDue));
    }

    #[test]
    fn amounts_are_held_to_the_currency() {
        assert_eq!(ENTRY_AMOUNT.max, d("1000000000000000000000000"));
        assert_eq!(ENTRY_AMOUNT.parse("0").unwrap_err().to_string(), "must be greater than 0");
        let ledger = Ledger::new(d("100"), Currency::parse("JPY").unwrap());
        assert_eq!(
            ledger.exact(d("1.5")),
            Err(LedgerRule::FinerThanCurrency { currency: Currency::parse("JPY").unwrap(), places: 0 })
        );
        assert_eq!(Ledger::new(d("1"), eur()).exact(d("0.10")), Ok(d("0.10")));
    }

    #[test]
    fn refunds_give_back_what_was_paid_only() {
        let mut ledger = Ledger::new(d("100.00"), eur());
        ledger.apply(EntryKind::Payment, d("100.00"), day()).unwrap();
        assert_eq!(
            ledger.apply(EntryKind::Refund, d("100.01"), day()),
            Err(LedgerRule::ExceedsPaid { paid: d("100.00") })
        );
        ledger.apply(EntryKind::Refund, d("40.00"), day()).unwrap();
        let balance = ledger.balance();
        assert_eq!((balance.paid, balance.due(), balance.paid_on), (d("60.00"), d("40.00"), None));
        assert_eq!(balance.status(), InvoiceStatus::PaidPartial);
        ledger.apply(EntryKind::Refund, d("60.00"), day()).unwrap();
        assert_eq!(ledger.balance().status(), InvoiceStatus::Pending);
    }

    #[test]
    fn a_write_off_expires_what_is_due() {
        let mut ledger = Ledger::new(d("100.00"), eur());
        ledger.apply(EntryKind::Payment, d("30.00"), day()).unwrap();
        let due = ledger.amount_of(EntryKind::WriteOff, EntryAmount::AllDue).unwrap();
        ledger.apply(EntryKind::WriteOff, due, day()).unwrap();
        assert_eq!(
            (ledger.balance().due(), ledger.balance().status()),
            (Decimal::ZERO, InvoiceStatus::Expired)
        );
    }

    #[test]
    fn credit_lowers_what_is_due_and_the_rest_is_refunded_first() {
        let mut ledger = Ledger::new(d("100.00"), eur());
        ledger.apply(EntryKind::Payment, d("80.00"), day()).unwrap();
        let credit = ledger.credit(d("50.00"), Decimal::ZERO).unwrap();
        assert_eq!((credit.applied, credit.refundable), (d("20.00"), d("30.00")));
        assert_eq!((ledger.balance().due(), ledger.balance().status()), (Decimal::ZERO, InvoiceStatus::Paid));
        // Paying back the refundable credit leaves the corrected invoice settled.
        ledger.apply(EntryKind::Refund, d("30.00"), day()).unwrap();
        let balance = ledger.balance();
        assert_eq!((balance.paid, balance.credited, balance.due()), (d("50.00"), d("50.00"), Decimal::ZERO));
        assert_eq!(
            ledger.credit(d("50.01"), d("50.00")),
            Err(LedgerRule::CreditExceedsTotal { credited: d("100.01"), total: d("100.00") })
        );
        let mut credited_only = Ledger::new(d("100.00"), eur());
        credited_only.credit(d("100.00"), Decimal::ZERO).unwrap();
        assert_eq!(credited_only.balance().status(), InvoiceStatus::Expired);
        let mut part = Ledger::new(d("100.00"), eur());
        part.credit(d("10.00"), Decimal::ZERO).unwrap();
        assert_eq!(part.balance().status(), InvoiceStatus::Pending);
    }

    #[test]
    fn settling_plays_in_order_and_skips_voids() {
        let pay = entry(EntryKind::Payment, "60.00", 1);
        let mut refund = entry(EntryKind::Refund, "60.00", 2);
        let again = entry(EntryKind::Payment, "100.00", 3);
        let events = [&again, &pay, &refund].map(Event::Entry);
        let ledger = Ledger::settle(d("100.00"), eur(), events).unwrap();
        assert_eq!(ledger.balance().status(), InvoiceStatus::Paid);
        // Without the refund, the last payment would pass what is due.
        refund.voided_at = Some(refund.created_at);
        let voided = Ledger::settle(d("100.00"), eur(), [&pay, &refund, &again].map(Event::Entry));
        assert_eq!(voided, Err(LedgerRule::ExceedsDue { due: d("40.00") }));
    }

    #[test]
    fn a_refund_after_a_credit_note_pays_out_its_credit_whatever_the_clock_says() {
        let pay = entry(EntryKind::Payment, "80.00", 0);
        let refund = entry(EntryKind::Refund, "30.00", 2);
        let credit = CreditApplication { total: d("50.00"), applied: d("20.00"), refundable: d("30.00") };
        let entries = [refund, pay];
        let ledger = Ledger::settle(d("100.00"), eur(), events(&entries, &[(credit, 1)])).unwrap();
        let balance = ledger.balance();
        assert_eq!(
            (balance.paid, balance.credited, balance.refundable),
            (d("50.00"), d("50.00"), Decimal::ZERO)
        );
        assert_eq!(ledger.next_position(), 3);
        // A write resumes from the stored balance, to the same figures a replay gives.
        let mut resumed = Ledger::resume(balance, eur());
        resumed.apply(EntryKind::Refund, d("10.00"), day()).unwrap();
        let mut voided = entry(EntryKind::Refund, "10.00", 3);
        let replayed = Ledger::settle(
            d("100.00"),
            eur(),
            events(&[entries.to_vec(), vec![voided.clone()]].concat(), &[(credit, 1)]),
        );
        assert_eq!(replayed.unwrap().balance(), resumed.balance());
        voided.voided_at = Some(voided.created_at);
        let without = Ledger::settle(
            d("100.00"),
            eur(),
            events(&[entries.to_vec(), vec![voided]].concat(), &[(credit, 1)]),
        );
        assert_eq!(without.unwrap().next_position(), 4, "a voided entry keeps its place");
    }

    #[test]
    fn a_new_total_may_not_fall_below_what_was_recorded() {
        let pay = entry(EntryKind::Payment, "60.00", 1);
        let entries = [pay];
        assert!(retotal(d("60.00"), eur(), &entries, &[], d("60.00")).is_ok());
        assert_eq!(
            retotal(d("59.99"), eur(), &entries, &[], d("60.00")).map(|l| l.balance()),
            Err(LedgerRule::TotalBelowRecorded { total: d("59.99"), recorded: d("60.00") })
        );
    }

    #[test]
    fn statuses_follow_the_books() {
        let mut balance = Balance::unpaid(d("10"));
        assert_eq!(balance.status(), InvoiceStatus::Pending);
        balance.paid = d("10");
        assert_eq!(balance.status(), InvoiceStatus::Paid);
        balance.paid = d("4");
        balance.written_off = d("6");
        assert_eq!(balance.status(), InvoiceStatus::Expired);
        assert!(balance.has_money());
        assert!(!Balance::unpaid(d("10")).has_money());
    }
}
