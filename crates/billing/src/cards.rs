//! Card payments through a processor (Stripe): a team's account with it, the checkout a
//! client pays what is due in, and the processor's reports of payments and refunds booked
//! into the books exactly once.
//!
//! Money a processor reports is never refused: what an invoice no longer owes becomes the
//! client's credit ([`split_payment`]), kept per currency, which a later invoice may take
//! (the card port's `apply_credit`). A refund gives back that credit first, then the
//! payment on the invoice ([`split_refund`]).

use accounts::TeamId;
use async_trait::async_trait;
use chrono::{DateTime, NaiveDate, Utc};
use kernel::InvalidValue;
use rust_decimal::Decimal;
use sha2::{Digest, Sha256};

use crate::client::ClientId;
use crate::invoice::{Invoice, InvoiceId};
use crate::ledger::{
    EntryAmount, EntryKind, LedgerEntry, LedgerEntryId, LedgerRule, NewEntry, PaymentMethod, Reference,
};
use crate::money::Currency;

/// A card processor billable speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Processor {
    Stripe,
}

kernel::words!(Processor {
    Stripe => "stripe",
});

/// A secret a processor gave the team: never shown, never logged (its `Debug` hides it).
#[derive(Clone, PartialEq, Eq)]
pub struct ProcessorSecret(String);

impl ProcessorSecret {
    /// A secret that starts with one of `prefixes` and holds no space or control character.
    fn parse(text: &str, prefixes: &[&str]) -> Result<Self, InvalidValue> {
        if !prefixes.iter().any(|prefix| text.starts_with(prefix)) {
            return Err(InvalidValue::new(format!("must start with {}", prefixes.join(" or "))));
        }
        if text.len() > 255 || !text.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(InvalidValue::new(
                "must be the key as the processor shows it: at most 255 characters, no spaces",
            ));
        }
        Ok(Self(text.to_owned()))
    }

    /// A secret as storage kept it.
    pub fn from_stored(text: String) -> Self {
        Self(text)
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for ProcessorSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProcessorSecret(…)")
    }
}

/// A Stripe secret or restricted API key (`sk_…`, `rk_…`).
pub fn stripe_secret_key(text: &str) -> Result<ProcessorSecret, InvalidValue> {
    ProcessorSecret::parse(text, &["sk_", "rk_"])
}

/// A Stripe webhook endpoint's signing secret (`whsec_…`).
pub fn stripe_webhook_secret(text: &str) -> Result<ProcessorSecret, InvalidValue> {
    ProcessorSecret::parse(text, &["whsec_"])
}

/// The unguessable token in the address a processor posts a team's events to: 256 random
/// bits, 43 base62 characters. Storage keeps its [`TokenHash`] and finds the account by it.
#[derive(Clone, PartialEq, Eq)]
pub struct WebhookToken(String);

const TOKEN_CHARS: usize = 43;

impl WebhookToken {
    pub fn generate() -> Self {
        use rand::Rng;
        let random: String =
            rand::rng().sample_iter(&rand::distr::Alphanumeric).take(TOKEN_CHARS).map(char::from).collect();
        Self(random)
    }

    /// Text shaped like a token; anything else cannot be one and needs no lookup.
    pub fn parse(text: &str) -> Option<Self> {
        (text.len() == TOKEN_CHARS && text.bytes().all(|b| b.is_ascii_alphanumeric()))
            .then(|| Self(text.to_owned()))
    }

    pub fn expose(&self) -> &str {
        &self.0
    }

    pub fn hash(&self) -> TokenHash {
        TokenHash(Sha256::digest(self.0.as_bytes()).into())
    }
}

impl std::fmt::Debug for WebhookToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WebhookToken(…)")
    }
}

/// SHA-256 of a [`WebhookToken`]: the token has 256 random bits, so an unsalted fast hash
/// is enough, and a lookup by hash compares no secret byte by byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TokenHash(pub [u8; 32]);

/// A team's account with a processor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardAccount {
    pub team_id: TeamId,
    pub processor: Processor,
    /// What billable calls the processor's API with.
    pub secret_key: ProcessorSecret,
    /// What the processor signs its webhook deliveries with.
    pub webhook_secret: ProcessorSecret,
    pub token_hash: TokenHash,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// A checkout for what an invoice has due: the client pays it on the processor's page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckoutRequest {
    pub team_id: TeamId,
    pub invoice_id: InvoiceId,
    /// The invoice's number, what the client sees it as.
    pub invoice_number: String,
    pub amount: Decimal,
    pub currency: Currency,
    pub client_email: String,
    /// Where the client returns to once it paid, and where if it gave up.
    pub success_url: String,
    pub cancel_url: String,
    /// The language of the processor's page (BCP 47).
    pub language: &'static str,
}

impl CheckoutRequest {
    /// A key the processor recognises a repeated request by: the same invoice and amount
    /// make the same checkout, however often the client presses the button.
    pub fn idempotency_key(&self) -> String {
        format!("billable-checkout-{}-{}-{}", self.invoice_id, self.amount.normalize(), self.currency)
    }
}

/// The processor's page to send the client to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkout {
    pub url: String,
}

/// Why a checkout could not be made.
#[derive(Debug, thiserror::Error)]
pub enum CheckoutError {
    /// The processor answered it cannot (a key refused, a currency it does not take).
    #[error("the card processor refused the checkout: {0}")]
    Refused(String),
    /// The processor could not be reached or failed; trying later may work.
    #[error("the card processor is unavailable: {0}")]
    Unavailable(String),
}

/// What a processor's webhook delivery reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CardEvent {
    /// Money received for an invoice.
    Paid(CardPayment),
    /// Money given back: how much of a payment is refunded by now.
    Refunded(CardRefund),
    /// Anything else: acknowledged, not booked.
    Other { kind: String },
}

/// A payment a processor reports: `reference` names it at the processor (a Stripe
/// `PaymentIntent`), and books it once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardPayment {
    pub invoice_id: InvoiceId,
    pub reference: Reference,
    pub amount: Decimal,
    pub currency: Currency,
    pub on: NaiveDate,
}

/// What a processor reports of a payment's refunds: how much of the payment `payment` is
/// refunded by now, all refunds together (Stripe's charge's `amount_refunded`). What the
/// books have not booked of it yet is one refund; a report of less than they have (one
/// that arrived late) books nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardRefund {
    pub payment: Reference,
    /// The processor's name of what was refunded (a Stripe charge): the refund entries'
    /// reference.
    pub charge: Reference,
    pub refunded: Decimal,
    pub currency: Currency,
    pub on: NaiveDate,
}

impl CardRefund {
    /// The key its booking is kept by: the charge and the total refunded, so that each
    /// total is booked once.
    pub fn key(&self) -> Reference {
        let key = format!("{}/refunded/{}", self.charge.as_str(), self.refunded.normalize());
        Reference::parse(key.chars().take(200).collect::<String>()).unwrap_or_else(|_| self.charge.clone())
    }
}

/// Why a webhook delivery is not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeliveryRefusal {
    /// No signature made with the account's secret over this payload.
    #[error("the signature does not match the payload")]
    BadSignature,
    /// Signed too long ago (or too far ahead): a replay.
    #[error("the signature's timestamp is more than {tolerance_seconds} seconds from now")]
    Stale { tolerance_seconds: i64 },
    /// Signed, but not an event billable can read.
    #[error("{0}")]
    Malformed(String),
}

/// A processor billable makes checkouts with and reads webhook deliveries of.
#[async_trait]
pub trait CardProcessor: Send + Sync {
    /// A checkout of `request` on the team's `account`.
    async fn checkout(
        &self,
        account: &CardAccount,
        request: &CheckoutRequest,
    ) -> Result<Checkout, CheckoutError>;

    /// The event a delivery of `payload` with signature `signature` carries, checked against
    /// the account's webhook secret at `now`.
    fn read_delivery(
        &self,
        account: &CardAccount,
        payload: &[u8],
        signature: &str,
        now: DateTime<Utc>,
    ) -> Result<CardEvent, DeliveryRefusal>;
}

/// How money a processor reports divides between an invoice's books and the client's credit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Split {
    /// A payment (or a refund) on the invoice.
    pub invoice: Decimal,
    /// Credit the client gains (or, for a refund, gives back).
    pub credit: Decimal,
}

/// A payment of `amount` on an invoice with `due`: the invoice takes what it owes, the
/// rest is the client's credit.
pub fn split_payment(due: Decimal, amount: Decimal) -> Split {
    let invoice = amount.min(due.max(Decimal::ZERO));
    Split { invoice, credit: amount - invoice }
}

/// A refund of `amount` of a payment that left `payment_credit` of credit still unrefunded,
/// of a client whose credit in the currency is `client_credit`: the credit goes back first,
/// then the payment on the invoice.
pub fn split_refund(amount: Decimal, payment_credit: Decimal, client_credit: Decimal) -> Split {
    let credit = amount.min(payment_credit).min(client_credit).max(Decimal::ZERO);
    Split { invoice: amount - credit, credit }
}

/// How `payment` divides on `invoice` (as read under its lock): what the invoice has due,
/// when the payment is in its currency, and the rest is the client's credit.
pub fn payment_split(invoice: &Invoice, payment: &CardPayment) -> Split {
    let due = if payment.currency == invoice.currency { invoice.balance.due() } else { Decimal::ZERO };
    split_payment(due, payment.amount)
}

/// One booking of what a processor reported of a payment: the payment's, or a refund's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Booking {
    pub kind: EntryKind,
    pub amount: Decimal,
    /// What went to the client's credit (a payment's) or came back from it (a refund's).
    pub credited: Decimal,
}

/// A refund to book: what it adds to the refunds booked of its payment, and how that divides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RefundBooking {
    pub amount: Decimal,
    pub split: Split,
}

/// What `refund` books on `invoice` (its payment's, as read under its lock), given the
/// bookings of that payment so far and the client's credit in the refund's currency:
/// `None` when it adds nothing to the refunds booked (a report again, or an earlier one that
/// arrived late). A part the credit does not cover goes on the invoice, refused when the
/// refund is in another currency than the invoice (that payment paid it nothing).
pub fn refund_booking(
    invoice: &Invoice,
    refund: &CardRefund,
    bookings: &[Booking],
    client_credit: Decimal,
) -> Result<Option<RefundBooking>, LedgerRule> {
    let (refunded, payment_credit) =
        bookings.iter().fold((Decimal::ZERO, Decimal::ZERO), |(refunded, credit), booking| {
            match booking.kind {
                EntryKind::Payment => (refunded, credit + booking.credited),
                _ => (refunded + booking.amount, credit - booking.credited),
            }
        });
    let amount = refund.refunded - refunded;
    if amount <= Decimal::ZERO {
        return Ok(None);
    }
    let split = split_refund(amount, payment_credit, client_credit);
    if split.invoice > Decimal::ZERO && refund.currency != invoice.currency {
        return Err(LedgerRule::ExceedsPaid { paid: Decimal::ZERO });
    }
    Ok(Some(RefundBooking { amount, split }))
}

/// The entry of the part of a card payment or refund that goes on an invoice's books.
pub fn card_entry(
    id: LedgerEntryId,
    kind: EntryKind,
    amount: Decimal,
    reference: &Reference,
    on: NaiveDate,
    at: DateTime<Utc>,
) -> NewEntry {
    NewEntry {
        id,
        kind,
        amount: EntryAmount::Exactly(amount),
        on,
        method: PaymentMethod::Card,
        reference: Some(reference.clone()),
        notes: None,
        created_at: at,
    }
}

/// The reference of a payment made from the client's credit.
pub const CREDIT_REFERENCE: &str = "client-credit";

/// The entry of a payment of `amount` from the client's credit, made at `at`.
pub fn credit_entry(id: LedgerEntryId, amount: Decimal, at: DateTime<Utc>) -> NewEntry {
    NewEntry {
        id,
        kind: EntryKind::Payment,
        amount: EntryAmount::Exactly(amount),
        on: at.date_naive(),
        method: PaymentMethod::Other,
        reference: Reference::parse(CREDIT_REFERENCE).ok(),
        notes: None,
        created_at: at,
    }
}

/// What booking a processor's report did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Booked {
    /// Booked now: the entry on the invoice (none when all went to credit), the credit the
    /// client gained (or gave back), and the invoice as its books leave it.
    Now { entry: Option<LedgerEntry>, credit: Decimal, invoice: Box<Invoice> },
    /// Booked before (a processor's retry, or another replica's delivery): nothing changed.
    Already,
}

/// What a client holds as credit in one currency.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CreditBalance {
    pub client_id: ClientId,
    pub currency: Currency,
    pub amount: Decimal,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(text: &str) -> Decimal {
        text.parse().unwrap()
    }

    #[test]
    fn a_payment_beyond_what_is_due_leaves_the_rest_as_credit() {
        assert_eq!(split_payment(dec("100"), dec("40")), Split { invoice: dec("40"), credit: dec("0") });
        assert_eq!(split_payment(dec("100"), dec("130")), Split { invoice: dec("100"), credit: dec("30") });
        assert_eq!(split_payment(dec("0"), dec("25")), Split { invoice: dec("0"), credit: dec("25") });
    }

    #[test]
    fn a_refund_gives_back_the_payments_credit_first_and_never_more_than_the_client_holds() {
        assert_eq!(
            split_refund(dec("50"), dec("30"), dec("30")),
            Split { invoice: dec("20"), credit: dec("30") }
        );
        assert_eq!(
            split_refund(dec("50"), dec("30"), dec("10")),
            Split { invoice: dec("40"), credit: dec("10") }
        );
        assert_eq!(
            split_refund(dec("50"), dec("0"), dec("90")),
            Split { invoice: dec("50"), credit: dec("0") }
        );
    }

    #[test]
    fn secrets_are_checked_and_never_shown() {
        let key = stripe_secret_key("sk_test_abc").unwrap();
        assert_eq!(format!("{key:?}"), "ProcessorSecret(…)");
        assert!(stripe_secret_key("pk_test_abc").is_err());
        assert!(stripe_webhook_secret("whsec_a b").is_err());
        let token = WebhookToken::generate();
        assert_eq!(WebhookToken::parse(token.expose()), Some(token.clone()));
        assert_ne!(token, WebhookToken::generate());
        assert_eq!(WebhookToken::parse("short"), None);
    }
}
