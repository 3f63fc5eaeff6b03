//! Sender addresses: who invoices are from. Every team has a default one, which new
//! invoices use unless they name another.

use accounts::TeamId;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use kernel::{Email, StoreError, define_id};

use crate::client::{OptionalText, RequiredText};

define_id!(
    /// Identifies a sender address of a team.
    SenderAddressId
);

/// A postal code on a sender address: may be empty until the team sets it.
pub type SenderPostalCode = kernel::Text<0, 32>;

/// How to pay the sender, as free text printed on its invoices: bank, IBAN, BIC, payment
/// terms, one per line. Empty when the team has not set it.
pub type PaymentDetails = kernel::Text<0, 1000>;

/// What an invoice shows as its sender.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SenderDetails {
    pub name: RequiredText,
    pub line1: OptionalText,
    pub line2: OptionalText,
    pub line3: OptionalText,
    pub postal_code: SenderPostalCode,
    pub email: Option<Email>,
    pub vat_number: OptionalText,
    pub payment_details: PaymentDetails,
}

impl SenderDetails {
    /// A sender known only by its name, as a new team's default starts out.
    pub fn named(name: RequiredText) -> Self {
        Self {
            name,
            line1: OptionalText::empty(),
            line2: OptionalText::empty(),
            line3: OptionalText::empty(),
            postal_code: SenderPostalCode::empty(),
            email: None,
            vat_number: OptionalText::empty(),
            payment_details: PaymentDetails::empty(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SenderAddress {
    pub id: SenderAddressId,
    pub team_id: TeamId,
    pub details: SenderDetails,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// Storage of sender addresses, scoped to a team.
#[async_trait]
pub trait SenderRepository: Send + Sync {
    async fn get_sender(
        &self,
        team: TeamId,
        id: SenderAddressId,
    ) -> Result<Option<SenderAddress>, StoreError>;

    /// The team's default sender address, if it has one yet.
    async fn default_sender(&self, team: TeamId) -> Result<Option<SenderAddress>, StoreError>;

    /// Makes `sender` the team's default unless the team has one already; returns the
    /// default either way. Safe under concurrency: a team never gets two defaults.
    async fn ensure_default_sender(&self, sender: &SenderAddress) -> Result<SenderAddress, StoreError>;

    /// Replaces the details of one of the team's sender addresses; `None` when there is
    /// no such address.
    async fn update_sender(
        &self,
        team: TeamId,
        id: SenderAddressId,
        details: &SenderDetails,
        now: DateTime<Utc>,
    ) -> Result<Option<SenderAddress>, StoreError>;
}
