//! `/v1/team`: the key's team as its owners and admins keep it: its name, its currency
//! (while its books have none in it), and the default sender address its invoices are from.

use accounts::{Principal, TeamChange, UpdateTeamError};
use actix_web::http::StatusCode;
use actix_web::{get, patch, web};
use billing::SenderAddress;
use billing::numbering::{NumberingChange, NumberingPattern, Series};
use billing::sender::{SenderChange, SenderField};
use kernel::{FieldError, Id};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::conventions::body::{Json, Patch};
use crate::conventions::error::{ApiError, ErrorBody};
use crate::rest::auth::{Auth, InvoicesRead, InvoicesWrite};
use crate::rest::routes::{BodyErrors, KeyedErrors, Timestamp};
use crate::rest::state::ApiState;

/// The key's team.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TeamBody {
    id: Uuid,
    #[schema(example = "Acme GmbH")]
    name: String,
    /// ISO 4217: the currency of the team's books, and of each client that states none.
    #[schema(example = "EUR")]
    currency: &'static str,
    /// The default sender address, which the team's invoices are from unless they name
    /// another.
    sender: SenderBody,
    /// How each series of documents is numbered.
    numbering: NumberingBody,
    created_at: Timestamp,
}

/// The numbering pattern of each series: `{0000}` is the counter (one zero per digit it is
/// padded to), `{YYYY}` and `{YY}` the issue year, whose counter then restarts each year.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NumberingBody {
    #[schema(example = "INV-{0000}")]
    invoices: String,
    #[schema(example = "CN-{0000}")]
    credit_notes: String,
    #[schema(example = "Q-{0000}")]
    quotes: String,
}

/// A change of the numbering: only the series given change, from their next number.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct NumberingPatch {
    #[serde(default)]
    #[schema(value_type = String, min_length = 1, max_length = 40, pattern = r"^[A-Za-z0-9_./{}-]+$", example = "{YYYY}-{0000}")]
    invoices: Patch<String>,
    #[serde(default)]
    #[schema(value_type = String, min_length = 1, max_length = 40, pattern = r"^[A-Za-z0-9_./{}-]+$", example = "CN{YY}{000}")]
    credit_notes: Patch<String>,
    #[serde(default)]
    #[schema(value_type = String, min_length = 1, max_length = 40, pattern = r"^[A-Za-z0-9_./{}-]+$", example = "Q-{0000}")]
    quotes: Patch<String>,
}

impl NumberingPatch {
    /// The change of the series given.
    fn change(self) -> Result<NumberingChange, FieldError> {
        let mut change = NumberingChange::default();
        for (series, patch, field) in [
            (Series::Invoices, self.invoices, "numbering.invoices"),
            (Series::CreditNotes, self.credit_notes, "numbering.creditNotes"),
            (Series::Quotes, self.quotes, "numbering.quotes"),
        ] {
            if let Some(text) = patch.required(field)? {
                change.set(series, NumberingPattern::parse(&text).map_err(|e| e.at(field))?);
            }
        }
        Ok(change)
    }
}

/// A sender address: what invoices print as "from", and what e-invoices carry of the seller.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SenderBody {
    /// An invoice's `sendersAddressId`.
    id: Uuid,
    name: String,
    line1: String,
    line2: String,
    line3: String,
    postal_code: String,
    city: String,
    #[schema(required = true, example = "DE")]
    country_code: Option<&'static str>,
    #[schema(required = true)]
    email: Option<String>,
    vat_number: String,
    /// Printed under the totals of every invoice: bank, IBAN, BIC, payment terms.
    payment_details: String,
    #[schema(required = true, example = "DE89370400440532013000")]
    iban: Option<String>,
    #[schema(required = true)]
    bic: Option<String>,
    contact_name: String,
    contact_phone: String,
    #[schema(required = true)]
    contact_email: Option<String>,
    /// Its Peppol address, `scheme:identifier` (EN 16931 BT-34); null for none.
    #[schema(required = true, example = "9930:DE123456789")]
    peppol_id: Option<String>,
    /// The language of its documents and mails for clients that name none (BCP 47): the
    /// team's language.
    #[schema(example = "de", pattern = "^(en|de|fr|it|es|nl)$")]
    language: &'static str,
    /// The payment QR code its invoices' PDFs carry unless a request asks for another
    /// (`?qr=`): `auto` (the Swiss QR-bill to a Swiss account, else the EPC QR code where
    /// the invoice has what it needs, else none), `epc`, `swiss` or `none`.
    #[schema(example = "auto", pattern = "^(auto|epc|swiss|none)$")]
    payment_qr: &'static str,
    /// Whether a logo is printed on its invoices (set with `billable teams sender --logo`).
    has_logo: bool,
}

impl From<&SenderAddress> for SenderBody {
    fn from(sender: &SenderAddress) -> Self {
        let d = &sender.details;
        Self {
            id: sender.id.as_uuid(),
            name: d.name.as_str().to_owned(),
            line1: d.line1.as_str().to_owned(),
            line2: d.line2.as_str().to_owned(),
            line3: d.line3.as_str().to_owned(),
            postal_code: d.postal_code.as_str().to_owned(),
            city: d.city.as_str().to_owned(),
            country_code: d.country_code.map(billing::CountryCode::as_str),
            email: d.email.as_ref().map(|e| e.as_str().to_owned()),
            vat_number: d.vat_number.as_str().to_owned(),
            payment_details: d.payment_details.as_str().to_owned(),
            iban: d.iban.as_ref().map(|iban| iban.as_str().to_owned()),
            bic: d.bic.as_ref().map(|bic| bic.as_str().to_owned()),
            contact_name: d.contact_name.as_str().to_owned(),
            contact_phone: d.contact_phone.as_str().to_owned(),
            contact_email: d.contact_email.as_ref().map(|e| e.as_str().to_owned()),
            peppol_id: d.peppol_id.as_ref().map(ToString::to_string),
            language: d.language.code(),
            payment_qr: d.payment_qr.as_str(),
            has_logo: d.logo.is_some(),
        }
    }
}

/// A change of the team: only the fields given change.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schema(example = json!({"name": "Acme GmbH", "currency": "EUR",
    "sender": {"line1": "Hauptstraße 1", "postalCode": "10115", "city": "Berlin", "countryCode": "DE",
               "iban": "DE89370400440532013000"}}))]
pub(crate) struct TeamPatch {
    #[serde(default)]
    #[schema(value_type = String, min_length = 1, max_length = 255,
             pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$")]
    name: Patch<String>,
    /// Only while the team has no invoice and no recurring invoice (409 otherwise).
    #[serde(default)]
    #[schema(value_type = String, pattern = r"^[A-Z]{3}$", example = "EUR")]
    currency: Patch<String>,
    #[serde(default)]
    #[schema(value_type = SenderPatch)]
    sender: Patch<SenderPatch>,
    /// Patterns for the series given; each applies from that series' next number.
    #[serde(default)]
    #[schema(value_type = NumberingPatch)]
    numbering: Patch<NumberingPatch>,
}

/// A change of the default sender address: only the fields given change; `""` removes an
/// optional one.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct SenderPatch {
    #[serde(default)]
    #[schema(value_type = String, pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$", min_length = 1, max_length = 255)]
    name: Patch<String>,
    #[serde(default)]
    #[schema(value_type = String, pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$", max_length = 255)]
    line1: Patch<String>,
    #[serde(default)]
    #[schema(value_type = String, pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$", max_length = 255)]
    line2: Patch<String>,
    #[serde(default)]
    #[schema(value_type = String, pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$", max_length = 255)]
    line3: Patch<String>,
    #[serde(default)]
    #[schema(value_type = String, pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$", max_length = 32)]
    postal_code: Patch<String>,
    #[serde(default)]
    #[schema(value_type = String, pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$", max_length = 255)]
    city: Patch<String>,
    /// ISO 3166-1 alpha-2 in capitals (`DE`), or `""`.
    #[serde(default)]
    #[schema(value_type = String, pattern = r"^([A-Z]{2})?$")]
    country_code: Patch<String>,
    #[serde(default)]
    #[schema(value_type = String, pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$", max_length = 254)]
    email: Patch<String>,
    #[serde(default)]
    #[schema(value_type = String, pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$", max_length = 255)]
    vat_number: Patch<String>,
    #[serde(default)]
    #[schema(value_type = String, pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$", max_length = 1000)]
    payment_details: Patch<String>,
    /// An IBAN with valid check digits (spaces allowed), or `""`.
    #[serde(default)]
    #[schema(value_type = String, pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$", max_length = 42)]
    iban: Patch<String>,
    /// 8 or 11 characters, or `""`.
    #[serde(default)]
    #[schema(value_type = String, pattern = r"^([A-Z0-9]{8}([A-Z0-9]{3})?)?$")]
    bic: Patch<String>,
    #[serde(default)]
    #[schema(value_type = String, pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$", max_length = 255)]
    contact_name: Patch<String>,
    #[serde(default)]
    #[schema(value_type = String, pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$", max_length = 255)]
    contact_phone: Patch<String>,
    #[serde(default)]
    #[schema(value_type = String, pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$", max_length = 254)]
    contact_email: Patch<String>,
    /// Its Peppol address, `scheme:identifier` (as a client's `peppolId`), or `""`.
    #[serde(default)]
    #[schema(value_type = String, pattern = r"^([0-9]{4}:[A-Za-z0-9._-]{1,135})?$", example = "9930:DE123456789")]
    peppol_id: Patch<String>,
    /// The language of the team's documents, mails and pages for clients that name none:
    /// `en`, `de`, `fr`, `it`, `es` or `nl`.
    #[serde(default)]
    #[schema(value_type = String, pattern = "^(en|de|fr|it|es|nl)$", example = "de")]
    language: Patch<String>,
    /// The payment QR code of the team's invoice PDFs: `auto`, `epc`, `swiss` or `none`.
    #[serde(default)]
    #[schema(value_type = String, pattern = "^(auto|epc|swiss|none)$", example = "auto")]
    payment_qr: Patch<String>,
}

impl SenderPatch {
    fn change(self) -> Result<SenderChange, FieldError> {
        let at = |field: &str| format!("sender.{field}");
        Ok(SenderChange {
            language: self.language.required(&at("language"))?,
            payment_qr: self.payment_qr.required(&at("paymentQr"))?,
            name: self.name.required(&at("name"))?,
            line1: self.line1.required(&at("line1"))?,
            line2: self.line2.required(&at("line2"))?,
            line3: self.line3.required(&at("line3"))?,
            postal_code: self.postal_code.required(&at("postalCode"))?,
            city: self.city.required(&at("city"))?,
            country_code: self.country_code.required(&at("countryCode"))?,
            email: self.email.required(&at("email"))?,
            vat_number: self.vat_number.required(&at("vatNumber"))?,
            payment_details: self.payment_details.required(&at("paymentDetails"))?,
            iban: self.iban.required(&at("iban"))?,
            bic: self.bic.required(&at("bic"))?,
            contact_name: self.contact_name.required(&at("contactName"))?,
            contact_phone: self.contact_phone.required(&at("contactPhone"))?,
            contact_email: self.contact_email.required(&at("contactEmail"))?,
            peppol_id: self.peppol_id.required(&at("peppolId"))?,
        })
    }
}

/// The JSON field of a part of the sender's details.
fn sender_field(field: SenderField) -> &'static str {
    match field {
        SenderField::Name => "sender.name",
        SenderField::Line1 => "sender.line1",
        SenderField::Line2 => "sender.line2",
        SenderField::Line3 => "sender.line3",
        SenderField::PostalCode => "sender.postalCode",
        SenderField::City => "sender.city",
        SenderField::CountryCode => "sender.countryCode",
        SenderField::Email => "sender.email",
        SenderField::VatNumber => "sender.vatNumber",
        SenderField::PaymentDetails => "sender.paymentDetails",
        SenderField::Iban => "sender.iban",
        SenderField::Bic => "sender.bic",
        SenderField::ContactName => "sender.contactName",
        SenderField::ContactPhone => "sender.contactPhone",
        SenderField::ContactEmail => "sender.contactEmail",
        SenderField::PeppolId => "sender.peppolId",
        SenderField::Language => "sender.language",
        SenderField::PaymentQr => "sender.paymentQr",
    }
}

/// 403 unless the caller is an owner or admin of the team: the team is theirs to keep.
pub(crate) fn keeper(who: &Principal) -> Result<(), ApiError> {
    if who.role.may_act_for_others() {
        return Ok(());
    }
    Err(ApiError::new(StatusCode::FORBIDDEN, "only the team's owners and admins may read or change the team"))
}

async fn answer(state: &ApiState, who: &Principal) -> Result<TeamBody, ApiError> {
    let now = state.clock.now();
    let team = billing::service::the_team(&*state.stores.accounts, who.team_id).await?;
    let sender =
        billing::service::default_sender(&*state.stores.billing, &*state.stores.accounts, team.id, now)
            .await?;
    let numbering = state.stores.billing.numbering(team.id).await?;
    Ok(TeamBody {
        id: team.id.as_uuid(),
        name: team.name.as_str().to_owned(),
        currency: team.currency.as_str(),
        sender: SenderBody::from(&sender),
        numbering: NumberingBody {
            invoices: numbering.invoices.to_string(),
            credit_notes: numbering.credit_notes.to_string(),
            quotes: numbering.quotes.to_string(),
        },
        created_at: Timestamp(team.created_at),
    })
}

/// Get the team
///
/// The key's team: its name, its currency, and its default sender address. Needs
/// `invoices:read`, and an owner's or admin's key.
#[utoipa::path(
    tag = "Team",
    responses((status = 200, description = "The team", body = TeamBody), KeyedErrors)
)]
#[get("")]
pub(crate) async fn get_team(
    auth: Auth<InvoicesRead>,
    state: web::Data<ApiState>,
) -> Result<web::Json<TeamBody>, ApiError> {
    keeper(&auth.principal)?;
    Ok(web::Json(answer(&state, &auth.principal).await?))
}

/// Change the team
///
/// Only the fields given change. `currency` changes only while the team has no invoice and
/// no recurring invoice (409 otherwise): its books stay in theirs; a client may be billed in
/// another (its `currency`). A new `name` is its default sender's too while that sender still
/// bears the old one. `sender` changes the default sender address, field by field; `""`
/// removes an optional field. `numbering` sets the pattern of each series given
/// (`INV-{0000}`, `{YYYY}-{0000}`, `RE{YY}{000}`): `{0000}` is the counter, padded to as many
/// digits as it has zeros and longer once it outgrows them; `{YYYY}` or `{YY}` is the issue
/// date's year in UTC, and the counter then restarts at 1 each year. A pattern applies from
/// the series' next number; documents keep the numbers they were issued with. Everything is
/// checked before anything is written. Needs
/// `invoices:write`, and an owner's or admin's key.
#[utoipa::path(
    tag = "Team",
    request_body = TeamPatch,
    responses(
        (status = 200, description = "The team as changed", body = TeamBody),
        (status = 409, description = "Another currency for a team with invoices or recurring invoices", body = ErrorBody),
        BodyErrors,
        KeyedErrors,
    )
)]
#[patch("")]
pub(crate) async fn update_team(
    auth: Auth<InvoicesWrite>,
    Json(input): Json<TeamPatch>,
    state: web::Data<ApiState>,
) -> Result<web::Json<TeamBody>, ApiError> {
    let who = &auth.principal;
    keeper(who)?;
    let name = input.name.required("name")?.map(|n| accounts::TeamName::parse(n).map_err(|e| e.at("name")));
    let currency = input
        .currency
        .required("currency")?
        .map(|c| accounts::Currency::parse(&c).map_err(|e| e.at("currency")));
    let change = TeamChange { name: name.transpose()?, currency: currency.transpose()? };
    let now = state.clock.now();
    let billing = &*state.stores.billing;
    let sender = match input.sender.required("sender")? {
        None => None,
        Some(patch) => {
            let sender =
                billing::service::default_sender(billing, &*state.stores.accounts, who.team_id, now).await?;
            let details = sender
                .details
                .changed(patch.change()?)
                .map_err(|(field, error)| error.at(sender_field(field)))?;
            Some((sender.id, details))
        }
    };
    let numbering = match input.numbering.required("numbering")? {
        None => None,
        Some(patch) => Some(patch.change()?),
    };
    let mut renamed = None;
    if change != TeamChange::default() {
        let before = billing::service::the_team(&*state.stores.accounts, who.team_id).await?;
        let updated =
            state.stores.accounts.update_team(who.team_id, &change).await.map_err(|error| match error {
                UpdateTeamError::CurrencyInUse { .. } => ApiError::conflict(format!(
                    "currency: {error}; a client may be billed in another (its currency)"
                )),
                UpdateTeamError::NotFound => ApiError::internal(anyhow::anyhow!("the key's team is gone")),
                UpdateTeamError::Store(error) => error.into(),
            })?;
        renamed = Some((updated, before.name));
    }
    if let Some((id, details)) = sender {
        billing.update_sender(who.team_id, id, &details, now).await?;
    }
    if let Some(numbering) = numbering {
        billing.set_numbering(who.team_id, &numbering).await?;
    }
    if let Some((team, old_name)) = renamed {
        billing::service::follow_rename(billing, &team, &old_name, now).await?;
    }
    Ok(web::Json(answer(&state, who).await?))
}
