//! Sender addresses: who invoices are from. Every team has a default one, which new
//! invoices use unless they name another.

use accounts::TeamId;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use kernel::{Email, InvalidValue, StoreError, define_id};

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

/// The sender's logo, printed at the top of its invoices: a PNG or an SVG of at most
/// [`Logo::MAX_BYTES`]. Valid by construction: what [`Logo::parse`] accepts is one of the
/// two formats by its signature (a renderer may still find it undrawable, and leaves it out).
#[derive(Clone, PartialEq, Eq)]
pub struct Logo {
    format: LogoFormat,
    bytes: Vec<u8>,
}

/// The image formats a logo may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogoFormat {
    Png,
    Svg,
}

/// Why bytes are not a logo.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LogoError {
    #[error("the image is empty")]
    Empty,
    #[error("the image has {0} bytes; a logo may have at most 262144 (256 KiB)")]
    TooLarge(usize),
    #[error("must be a PNG or SVG image")]
    NotAnImage,
}

impl Logo {
    /// The largest logo, in bytes: enough for a crisp PNG or any sensible SVG, small enough
    /// to travel with every invoice document.
    pub const MAX_BYTES: usize = 256 * 1024;

    pub fn parse(bytes: Vec<u8>) -> Result<Self, LogoError> {
        if bytes.is_empty() {
            return Err(LogoError::Empty);
        }
        if bytes.len() > Self::MAX_BYTES {
            return Err(LogoError::TooLarge(bytes.len()));
        }
        let format = if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
            LogoFormat::Png
        } else if starts_with_svg_element(&bytes) {
            LogoFormat::Svg
        } else {
            return Err(LogoError::NotAnImage);
        };
        Ok(Self { format, bytes })
    }

    pub fn format(&self) -> LogoFormat {
        self.format
    }

    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

impl From<LogoError> for kernel::InvalidValue {
    fn from(error: LogoError) -> Self {
        Self::new(error.to_string())
    }
}

impl std::fmt::Debug for Logo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Logo").field("format", &self.format).field("bytes", &self.bytes.len()).finish()
    }
}

/// Whether `bytes` is UTF-8 text whose first element is `<svg`, after an optional byte
/// order mark, XML declaration, comments, doctype and whitespace.
fn starts_with_svg_element(bytes: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(bytes) else { return false };
    let mut rest = text.strip_prefix('\u{FEFF}').unwrap_or(text);
    loop {
        rest = rest.trim_start();
        let skipped = [("<?", "?>"), ("<!--", "-->"), ("<!DOCTYPE", ">"), ("<!doctype", ">")]
            .iter()
            .find(|(open, _)| rest.starts_with(open))
            .map(|(open, close)| {
                rest[open.len()..].find(close).map(|end| &rest[open.len() + end + close.len()..])
            });
        match skipped {
            Some(Some(after)) => rest = after,
            Some(None) => return false,
            None => break,
        }
    }
    rest.strip_prefix("<svg").is_some_and(|after| after.starts_with([' ', '\t', '\n', '\r', '>', '/']))
}

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
    pub logo: Option<Logo>,
    /// The city of the address; may be empty.
    pub city: OptionalText,
    /// The country of the address, when given.
    pub country_code: Option<crate::party::CountryCode>,
    /// The account clients pay to, structured as e-invoices carry it (beside the free
    /// `payment_details` the PDF prints).
    pub iban: Option<crate::party::Iban>,
    pub bic: Option<crate::party::Bic>,
    /// Whom the buyer contacts about the invoice; each may be empty.
    pub contact_name: OptionalText,
    pub contact_phone: OptionalText,
    pub contact_email: Option<Email>,
    /// Its address in the Peppol network (BT-34), which a Peppol BIS e-invoice names.
    pub peppol_id: Option<crate::peppol::PeppolId>,
    /// The language its documents and mails speak to clients that name none: the team's
    /// language, for its default sender.
    pub language: locale::Language,
    /// The payment QR code its invoices' PDFs carry unless a request asks for another.
    pub payment_qr: crate::qr_choice::QrChoice,
}

impl SenderDetails {
    /// A sender known only by its name, as a new team's default starts out.
    pub fn named(name: RequiredText) -> Self {
        Self {
            peppol_id: None,
            language: locale::Language::default(),
            payment_qr: crate::qr_choice::QrChoice::default(),
            name,
            line1: OptionalText::empty(),
            line2: OptionalText::empty(),
            line3: OptionalText::empty(),
            postal_code: SenderPostalCode::empty(),
            email: None,
            vat_number: OptionalText::empty(),
            payment_details: PaymentDetails::empty(),
            logo: None,
            city: OptionalText::empty(),
            country_code: None,
            iban: None,
            bic: None,
            contact_name: OptionalText::empty(),
            contact_phone: OptionalText::empty(),
            contact_email: None,
        }
    }
}

/// A change of a sender's details, as a person gives them in text: only the parts given
/// change, and an empty text removes an optional part (a required one, the name, refuses
/// it).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SenderChange {
    pub name: Option<String>,
    pub line1: Option<String>,
    pub line2: Option<String>,
    pub line3: Option<String>,
    pub postal_code: Option<String>,
    pub city: Option<String>,
    pub country_code: Option<String>,
    pub email: Option<String>,
    pub vat_number: Option<String>,
    pub payment_details: Option<String>,
    pub iban: Option<String>,
    pub bic: Option<String>,
    pub contact_name: Option<String>,
    pub contact_phone: Option<String>,
    pub contact_email: Option<String>,
    pub peppol_id: Option<String>,
    pub language: Option<String>,
    pub payment_qr: Option<String>,
}

/// A part of a sender's details, as a refused change names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SenderField {
    Name,
    Line1,
    Line2,
    Line3,
    PostalCode,
    City,
    CountryCode,
    Email,
    VatNumber,
    PaymentDetails,
    Iban,
    Bic,
    ContactName,
    ContactPhone,
    ContactEmail,
    PeppolId,
    Language,
    PaymentQr,
}

/// `text` parsed by `parse`, or `None` when empty (a change that removes the part).
fn removable<T>(
    text: &str,
    parse: impl Fn(&str) -> Result<T, InvalidValue>,
) -> Result<Option<T>, InvalidValue> {
    if text.is_empty() { Ok(None) } else { parse(text).map(Some) }
}

impl SenderDetails {
    /// These details with `change` applied, every part checked; the first refused names
    /// its field.
    pub fn changed(&self, change: SenderChange) -> Result<Self, (SenderField, InvalidValue)> {
        let mut details = self.clone();
        let at = |field: SenderField| move |error: InvalidValue| (field, error);
        if let Some(name) = change.name {
            details.name = RequiredText::parse(name).map_err(at(SenderField::Name))?;
        }
        for (value, part, field) in [
            (change.line1, &mut details.line1, SenderField::Line1),
            (change.line2, &mut details.line2, SenderField::Line2),
            (change.line3, &mut details.line3, SenderField::Line3),
            (change.city, &mut details.city, SenderField::City),
            (change.vat_number, &mut details.vat_number, SenderField::VatNumber),
            (change.contact_name, &mut details.contact_name, SenderField::ContactName),
            (change.contact_phone, &mut details.contact_phone, SenderField::ContactPhone),
        ] {
            if let Some(value) = value {
                *part = OptionalText::parse(value).map_err(at(field))?;
            }
        }
        if let Some(code) = change.postal_code {
            details.postal_code = SenderPostalCode::parse(code).map_err(at(SenderField::PostalCode))?;
        }
        if let Some(payment) = change.payment_details {
            details.payment_details =
                PaymentDetails::parse(payment).map_err(at(SenderField::PaymentDetails))?;
        }
        for (value, part, field) in [
            (change.email, &mut details.email, SenderField::Email),
            (change.contact_email, &mut details.contact_email, SenderField::ContactEmail),
        ] {
            if let Some(value) = value {
                *part = removable(&value, |text| Email::parse(text)).map_err(at(field))?;
            }
        }
        if let Some(code) = change.country_code {
            details.country_code =
                removable(&code, crate::party::CountryCode::parse).map_err(at(SenderField::CountryCode))?;
        }
        if let Some(iban) = change.iban {
            details.iban = removable(&iban, crate::party::Iban::parse).map_err(at(SenderField::Iban))?;
        }
        if let Some(bic) = change.bic {
            details.bic = removable(&bic, crate::party::Bic::parse).map_err(at(SenderField::Bic))?;
        }
        if let Some(id) = change.peppol_id {
            details.peppol_id =
                removable(&id, crate::peppol::PeppolId::parse).map_err(at(SenderField::PeppolId))?;
        }
        if let Some(choice) = change.payment_qr {
            details.payment_qr = <crate::qr_choice::QrChoice as kernel::Words>::parse_word(&choice)
                .map_err(at(SenderField::PaymentQr))?;
        }
        if let Some(code) = change.language {
            details.language = crate::client::language(&code).map_err(at(SenderField::Language))?;
        }
        Ok(details)
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

#[cfg(test)]
mod tests {
    use super::*;

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

    #[test]
    fn a_logo_is_a_png_or_an_svg_by_its_signature() {
        assert_eq!(Logo::parse(PNG.to_vec()).unwrap().format(), LogoFormat::Png);
        for svg in [
            "<svg xmlns=\"http://www.w3.org/2000/svg\"/>",
            "\u{FEFF}<?xml version=\"1.0\"?>\n<!-- made by hand -->\n<!DOCTYPE svg>\n<svg>\n</svg>",
            "  \n<svg\n width=\"10\"></svg>",
        ] {
            assert_eq!(Logo::parse(svg.into()).unwrap().format(), LogoFormat::Svg, "{svg:?}");
        }
        for not in ["<html><svg></svg></html>", "<svgfoo/>", "<!-- never closed <svg/>", "GIF89a", "<?xml?>"]
        {
            assert_eq!(Logo::parse(not.into()), Err(LogoError::NotAnImage), "{not:?}");
        }
        assert_eq!(Logo::parse(vec![0xff, 0xfe, b'<']), Err(LogoError::NotAnImage));
    }

    #[test]
    fn a_logo_is_never_empty_nor_over_256_kib() {
        assert_eq!(Logo::parse(Vec::new()), Err(LogoError::Empty));
        let mut large = PNG.to_vec();
        large.resize(Logo::MAX_BYTES, 0);
        assert!(Logo::parse(large.clone()).is_ok(), "exactly the limit");
        large.push(0);
        let error = Logo::parse(large).unwrap_err();
        assert_eq!(error, LogoError::TooLarge(Logo::MAX_BYTES + 1));
        assert!(error.to_string().contains("256 KiB"));
    }

    #[test]
    fn its_debug_form_does_not_dump_the_image() {
        let logo = Logo::parse(PNG.to_vec()).unwrap();
        assert_eq!(format!("{logo:?}"), "Logo { format: Png, bytes: 16 }");
    }
}
