//! Clients: who invoices are billed to.

use accounts::TeamId;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use kernel::{Email, SearchText, StoreError, Text, define_id};

define_id!(
    /// Identifies a client of a team.
    ClientId
);

/// A name: 1 to 255 characters.
pub type RequiredText = Text<1, 255>;
/// A postal code as the clients API requires it: 1 to 32 characters.
pub type PostalCode = Text<1, 32>;
/// A detail that may be empty (phone, VAT number, address lines): at most 255 characters.
pub type OptionalText = Text<0, 255>;
/// A client's postal code as kept: empty only where its first address line is too.
pub type KeptPostalCode = Text<0, 32>;

/// Everything a client is made of besides its identity; valid by construction.
///
/// The clients API requires `line1` and `postal_code` ([`RequiredText`], [`PostalCode`]);
/// a client made from an invoice's inline details without an address has them empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientDetails {
    pub name: RequiredText,
    pub email: Email,
    pub phone: OptionalText,
    pub vat_number: OptionalText,
    pub line1: OptionalText,
    pub line2: OptionalText,
    pub line3: OptionalText,
    pub postal_code: KeptPostalCode,
    /// The city of the address; may be empty.
    pub city: OptionalText,
    /// The country of the address, when given.
    pub country_code: Option<crate::party::CountryCode>,
    /// The buyer's reference for its invoices (EN 16931 BT-10; in Germany the Leitweg-ID
    /// a public buyer gives); may be empty.
    pub buyer_reference: OptionalText,
    /// Whether the team's payment reminders go to the client (default yes).
    pub reminders_enabled: bool,
    /// The currency the client is billed in; the team's when `None`.
    pub currency: Option<crate::money::Currency>,
    /// Days from an invoice's issue to its due date, where the invoice gives no due date.
    pub payment_terms: Option<PaymentTerms>,
    /// Its address in the Peppol network (BT-49), which a Peppol BIS e-invoice is sent to.
    pub peppol_id: Option<crate::peppol::PeppolId>,
    /// The language its documents, mails and page speak; its sender's (the team's) when
    /// `None`.
    pub language: Option<locale::Language>,
}

/// The language of BCP 47 `code`, one of those billable speaks.
pub fn language(code: &str) -> Result<locale::Language, kernel::InvalidValue> {
    locale::Language::from_code(code).ok_or_else(|| {
        kernel::InvalidValue::new(format!(
            "must be a language billable speaks: one of {}",
            locale::Language::codes()
        ))
    })
}

/// Days to pay: 0 to 365.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PaymentTerms(u16);

impl PaymentTerms {
    pub const MAX_DAYS: u16 = 365;

    pub fn new(days: i64) -> Result<Self, kernel::InvalidValue> {
        u16::try_from(days).ok().filter(|days| *days <= Self::MAX_DAYS).map(Self).ok_or_else(Self::refused)
    }

    fn refused() -> kernel::InvalidValue {
        kernel::InvalidValue::new("must be a whole number of days from 0 to 365")
    }

    /// The terms a JSON number's text states: a whole number (`14`, or `14.0`) of days.
    pub fn parse(number: &str) -> Result<Self, kernel::InvalidValue> {
        let days = kernel::number::whole_number(number).and_then(|days| i64::try_from(days).ok());
        days.ok_or_else(Self::refused).and_then(Self::new)
    }

    pub fn days(self) -> u16 {
        self.0
    }

    /// The due date of an invoice issued at `issued`: as many days later.
    pub fn due_after(self, issued: DateTime<Utc>) -> Option<DateTime<Utc>> {
        issued.checked_add_days(chrono::Days::new(u64::from(self.0)))
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Client {
    pub id: ClientId,
    pub team_id: TeamId,
    pub details: ClientDetails,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl Client {
    pub fn new(team_id: TeamId, details: ClientDetails, now: DateTime<Utc>) -> Self {
        use kernel::Id;
        Self { id: ClientId::generate(), team_id, details, created_at: now, updated_at: now }
    }

    /// Whether a search for `text` finds the client: in its name or its email.
    pub fn is_found_by(&self, text: &SearchText) -> bool {
        text.found_in(self.details.name.as_str()) || text.found_in(self.details.email.as_str())
    }

    /// The client after a full replacement of its details.
    #[must_use]
    pub fn replaced(self, details: ClientDetails, now: DateTime<Utc>) -> Self {
        Self { details, updated_at: now, ..self }
    }
}

/// Puts clients in listing order: by name, case-insensitively (full Unicode lowercase,
/// so every store orders alike), then by id.
pub fn sort_for_listing(clients: &mut [Client]) {
    clients.sort_by_cached_key(|c| (c.details.name.as_str().to_lowercase(), c.id));
}

#[derive(Debug, thiserror::Error)]
pub enum ReplaceClientError {
    #[error("client not found")]
    NotFound,
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[derive(Debug, thiserror::Error)]
pub enum DeleteClientError {
    #[error("client not found")]
    NotFound,
    /// Invoices keep their client: a client that has any cannot be deleted.
    #[error("client has invoices")]
    HasInvoices,
    /// Projects of time tracking belong to it: they are moved to another client, or to
    /// none, first.
    #[error("client has projects")]
    HasProjects,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Storage of clients. Every method is scoped to a team; a client of another team is
/// indistinguishable from a missing one.
#[async_trait]
pub trait ClientRepository: Send + Sync {
    /// The team's clients in [`sort_for_listing`] order.
    async fn list(&self, team: TeamId) -> Result<Vec<Client>, StoreError>;

    /// The client, or `None` when it does not exist or belongs to another team.
    async fn get(&self, team: TeamId, id: ClientId) -> Result<Option<Client>, StoreError>;

    async fn create(&self, client: &Client) -> Result<(), StoreError>;

    /// Replaces every detail and `updated_at`. MUST return `NotFound` when the client does
    /// not exist in `team`.
    async fn replace(
        &self,
        team: TeamId,
        id: ClientId,
        details: &ClientDetails,
        now: DateTime<Utc>,
    ) -> Result<Client, ReplaceClientError>;

    /// Deletes for good, at `at`. MUST return `NotFound` when the client does not exist in
    /// `team`, `HasInvoices` (deleting nothing) when any invoice refers to it, and
    /// `HasProjects` when any project belongs to it.
    async fn delete(&self, team: TeamId, id: ClientId, at: DateTime<Utc>) -> Result<(), DeleteClientError>;
}

#[cfg(test)]
mod tests {
    use accounts::TeamId;
    use chrono::Utc;
    use kernel::{Email, Id};

    use super::*;

    #[test]
    fn payment_terms_are_whole_days_from_0_to_365() {
        assert_eq!(PaymentTerms::parse("14").map(PaymentTerms::days), Ok(14));
        assert_eq!(PaymentTerms::parse("14.0").map(PaymentTerms::days), Ok(14));
        for refused in ["14.5", "-1", "366", "1e30"] {
            assert_eq!(
                PaymentTerms::parse(refused).unwrap_err().0,
                "must be a whole number of days from 0 to 365",
                "{refused}"
            );
        }
    }

    fn client(name: &str) -> Client {
        let details = ClientDetails {
            peppol_id: None,
            language: None,
            name: RequiredText::parse(name).unwrap(),
            email: Email::parse("a@example.com").unwrap(),
            phone: OptionalText::parse("").unwrap(),
            vat_number: OptionalText::parse("").unwrap(),
            line1: OptionalText::parse("1 Main St").unwrap(),
            line2: OptionalText::parse("").unwrap(),
            line3: OptionalText::parse("").unwrap(),
            postal_code: KeptPostalCode::parse("1000").unwrap(),
            city: OptionalText::empty(),
            country_code: None,
            buyer_reference: OptionalText::empty(),
            reminders_enabled: true,
            currency: None,
            payment_terms: None,
        };
        Client::new(TeamId::generate(), details, Utc::now())
    }

    #[test]
    fn listing_order_is_case_insensitive_name_then_id() {
        let mut clients =
            vec![client("beta"), client("Alpha"), client("Élan"), client("alpha"), client("ärger")];
        sort_for_listing(&mut clients);
        let names: Vec<_> = clients.iter().map(|c| c.details.name.as_str()).collect();
        // Same lowercase name: the older id (created first) comes first.
        assert_eq!(names, ["Alpha", "alpha", "beta", "ärger", "Élan"]);
    }

    #[test]
    fn replacing_keeps_identity_and_creation_time() {
        let original = client("Old");
        let later = original.created_at + chrono::TimeDelta::seconds(5);
        let replaced = original.clone().replaced(client("New").details, later);
        assert_eq!((replaced.id, replaced.created_at), (original.id, original.created_at));
        assert_eq!(replaced.updated_at, later);
        assert_eq!(replaced.details.name.as_str(), "New");
    }
}
