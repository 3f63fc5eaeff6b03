//! `/v1/invoices/clients`: the team's clients.

use accounts::Principal;
use actix_web::{HttpResponse, delete, get, patch, post, web};
use billing::client::{OptionalText, PaymentTerms, PostalCode, RequiredText};
use billing::{Client, ClientDetails, ClientId, DeleteClientError, ReplaceClientError};
use kernel::{Email, FieldError, Id};
use serde::{Deserialize, Serialize};
use serde_json::Number;

use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::conventions::body::{Json, Patch};
use crate::conventions::error::{ApiError, ErrorBody};
use crate::rest::auth::{Auth, ClientsRead, ClientsWrite};
use crate::rest::collection::Collection;
use crate::rest::paging;
use crate::rest::routes::{
    BodyErrors, Deleted, KeyedErrors, NotFound, QueryErrors, Timestamp, created, not_found, path_id,
    query_search,
};
use crate::rest::state::ApiState;

/// A client: who invoices are billed to.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ClientBody {
    /// UUID.
    id: Uuid,
    name: String,
    email: String,
    /// Empty string when not supplied.
    phone: String,
    /// Empty string when not supplied.
    vat_number: String,
    line1: String,
    /// Empty string when not supplied.
    line2: String,
    /// Empty string when not supplied.
    line3: String,
    postal_code: String,
    /// Empty string when not supplied.
    city: String,
    /// ISO 3166-1 alpha-2; empty string when not supplied.
    country_code: String,
    /// The buyer's reference for its invoices (EN 16931 BT-10, the Leitweg-ID of a German
    /// public buyer); empty string when not supplied.
    buyer_reference: String,
    /// Whether the team's payment reminders go to the client.
    reminders_enabled: bool,
    /// The ISO 4217 currency the client is billed in; empty string: the team's.
    currency: String,
    /// Days from an invoice's issue to its due date, for invoices that give no `dueDate`;
    /// null for none (such invoices have no due date).
    #[schema(required = true)]
    payment_terms_days: Option<u16>,
    /// Its Peppol address, `scheme:identifier` (EN 16931 BT-49); null for none.
    #[schema(required = true, example = "0208:0123456749")]
    peppol_id: Option<String>,
    /// The language of its documents, mails and page (BCP 47); null: the team's.
    #[schema(required = true, example = "de", pattern = "^(en|de|fr|it|es|nl)$")]
    language: Option<&'static str>,
    team_id: Uuid,
    created_at: Timestamp,
    updated_at: Timestamp,
}

impl From<Client> for ClientBody {
    fn from(client: Client) -> Self {
        let d = client.details;
        Self {
            id: client.id.as_uuid(),
            name: d.name.into_string(),
            email: d.email.into_string(),
            phone: d.phone.into_string(),
            vat_number: d.vat_number.into_string(),
            line1: d.line1.into_string(),
            line2: d.line2.into_string(),
            line3: d.line3.into_string(),
            postal_code: d.postal_code.into_string(),
            city: d.city.into_string(),
            country_code: d.country_code.map(|code| code.as_str().to_owned()).unwrap_or_default(),
            buyer_reference: d.buyer_reference.into_string(),
            reminders_enabled: d.reminders_enabled,
            currency: d.currency.map(|currency| currency.as_str().to_owned()).unwrap_or_default(),
            payment_terms_days: d.payment_terms.map(billing::client::PaymentTerms::days),
            peppol_id: d.peppol_id.map(|id| id.to_string()),
            language: d.language.map(locale::Language::code),
            team_id: client.team_id.as_uuid(),
            created_at: Timestamp(client.created_at),
            updated_at: Timestamp(client.updated_at),
        }
    }
}

/// The details of a client, for create and for full replacement. No text may contain a
/// control character but tab and line breaks, nor U+FFFE or U+FFFF.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schema(example = json!({"name": "Acme GmbH", "email": "billing@acme.example", "phone": "+49 30 1234567",
    "vatNumber": "DE123456789", "line1": "Hauptstraße 1", "line2": "3. OG", "line3": "", "postalCode": "10115",
    "city": "Berlin", "countryCode": "DE", "buyerReference": "04011000-1234512345-06"}))]
pub(crate) struct ClientInput {
    #[schema(
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$",
        min_length = 1,
        max_length = 255
    )]
    name: String,
    #[schema(format = Email, max_length = 254)]
    email: String,
    #[serde(default)]
    #[schema(
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$",
        max_length = 255,
        default = ""
    )]
    phone: String,
    #[serde(default)]
    #[schema(
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$",
        max_length = 255,
        default = ""
    )]
    vat_number: String,
    #[schema(
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$",
        min_length = 1,
        max_length = 255
    )]
    line1: String,
    #[serde(default)]
    #[schema(
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$",
        max_length = 255,
        default = ""
    )]
    line2: String,
    #[serde(default)]
    #[schema(
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$",
        max_length = 255,
        default = ""
    )]
    line3: String,
    #[schema(
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$",
        min_length = 1,
        max_length = 32
    )]
    postal_code: String,
    /// The address's city; empty to remove. Left out: empty on a create, unchanged on a
    /// replacement (as `countryCode` and `buyerReference`: an API client that predates them
    /// does not erase them).
    #[serde(default)]
    #[schema(pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$", max_length = 255)]
    city: Option<String>,
    /// The address's country, ISO 3166-1 alpha-2 in capitals (`DE`, `CH`); empty to
    /// remove.
    #[serde(default)]
    #[schema(pattern = r"^([A-Z]{2})?$")]
    country_code: Option<String>,
    /// The buyer's reference its invoices must carry (EN 16931 BT-10; the Leitweg-ID of a
    /// German public buyer); empty to remove.
    #[serde(default)]
    #[schema(pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$", max_length = 255)]
    buyer_reference: Option<String>,
    /// Whether the team's payment reminders go to the client; manual sends are not
    /// affected. Left out: `true` on a create, unchanged on a replacement (so that a client
    /// that predates the field cannot turn reminders back on).
    #[serde(default)]
    #[schema(default = true)]
    reminders_enabled: Option<bool>,
    /// The ISO 4217 currency the client is billed in (`CHF`); its invoices are in it, and
    /// state the rate to the team's (`exchangeRate`). Empty: the team's currency. Left out:
    /// the team's on a create, unchanged on a replacement.
    #[serde(default)]
    #[schema(pattern = r"^([A-Z]{3})?$")]
    currency: Option<String>,
    /// Days from an invoice's issue to its due date (0 to 365), for the client's invoices
    /// that give no `dueDate`; null for none. Left out: none on a create, unchanged on a
    /// replacement.
    #[serde(default)]
    #[schema(value_type = Option<i64>, minimum = 0, maximum = 365)]
    payment_terms_days: Patch<Number>,
    /// Its address in the Peppol network, `scheme:identifier` (BT-49): an Electronic
    /// Address Scheme code of Peppol BIS Billing 3.0 and the identifier under it, whose
    /// check digits must hold where Peppol checks them (`0208:0123456749`, a Belgian
    /// enterprise number; `9930:DE123456789`, a German VAT number). A `peppol-bis`
    /// e-invoice needs it. Empty to remove; left out: none on a create, unchanged on a
    /// replacement.
    #[serde(default)]
    #[schema(pattern = r"^([0-9]{4}:[A-Za-z0-9._-]{1,135})?$", example = "0208:0123456749")]
    peppol_id: Option<String>,
    /// The language its PDFs, mails and page speak: `en`, `de`, `fr`, `it`, `es` or `nl`.
    /// Empty for the team's; left out: the team's on a create, unchanged on a replacement.
    #[serde(default)]
    #[schema(pattern = "^(en|de|fr|it|es|nl)?$", example = "de")]
    language: Option<String>,
}

impl ClientInput {
    /// Whether a replacement must read the client first: for the fields left out, which it
    /// keeps.
    fn keeps_some(&self) -> bool {
        self.reminders_enabled.is_none()
            || self.currency.is_none()
            || self.city.is_none()
            || self.country_code.is_none()
            || self.buyer_reference.is_none()
            || matches!(self.payment_terms_days, Patch::Absent)
            || self.peppol_id.is_none()
            || self.language.is_none()
    }

    /// The details given; a field left out takes `kept`'s (a replacement's current client),
    /// or its default on a create.
    fn parse(self, kept: Option<&ClientDetails>) -> Result<ClientDetails, FieldError> {
        let country_code = match self.country_code.as_deref() {
            None => kept.and_then(|kept| kept.country_code),
            Some("") => None,
            Some(code) => Some(billing::CountryCode::parse(code).map_err(|e| e.at("countryCode"))?),
        };
        let currency = match self.currency.as_deref() {
            None => kept.and_then(|kept| kept.currency),
            Some("") => None,
            Some(code) => Some(accounts::Currency::parse(code).map_err(|e| e.at("currency"))?),
        };
        let payment_terms = match self.payment_terms_days.nullable() {
            None => kept.and_then(|kept| kept.payment_terms),
            Some(None) => None,
            Some(Some(days)) => {
                Some(PaymentTerms::parse(&days.to_string()).map_err(|e| e.at("paymentTermsDays"))?)
            }
        };
        let peppol_id = match self.peppol_id.as_deref() {
            None => kept.and_then(|kept| kept.peppol_id.clone()),
            Some("") => None,
            Some(id) => Some(billing::peppol::PeppolId::parse(id).map_err(|e| e.at("peppolId"))?),
        };
        let language = match self.language.as_deref() {
            None => kept.and_then(|kept| kept.language),
            Some("") => None,
            Some(code) => Some(billing::client::language(code).map_err(|e| e.at("language"))?),
        };
        let text = |given: Option<String>, field: &str, kept: Option<&OptionalText>| match given {
            Some(text) => OptionalText::parse(text).map_err(|e| e.at(field)),
            None => Ok(kept.cloned().unwrap_or_else(OptionalText::empty)),
        };
        Ok(ClientDetails {
            language,
            city: text(self.city, "city", kept.map(|kept| &kept.city))?,
            country_code,
            buyer_reference: text(
                self.buyer_reference,
                "buyerReference",
                kept.map(|kept| &kept.buyer_reference),
            )?,
            name: RequiredText::parse(self.name).map_err(|e| e.at("name"))?,
            email: Email::parse(self.email).map_err(|e| e.at("email"))?,
            phone: OptionalText::parse(self.phone).map_err(|e| e.at("phone"))?,
            vat_number: OptionalText::parse(self.vat_number).map_err(|e| e.at("vatNumber"))?,
            line1: RequiredText::parse(self.line1).map_err(|e| e.at("line1"))?.or_empty(),
            line2: OptionalText::parse(self.line2).map_err(|e| e.at("line2"))?,
            line3: OptionalText::parse(self.line3).map_err(|e| e.at("line3"))?,
            postal_code: PostalCode::parse(self.postal_code).map_err(|e| e.at("postalCode"))?.or_empty(),
            reminders_enabled: self
                .reminders_enabled
                .unwrap_or(kept.is_none_or(|kept| kept.reminders_enabled)),
            currency,
            payment_terms,
            peppol_id,
        })
    }
}

fn client_id(path: &str) -> Result<ClientId, ApiError> {
    path_id(path, "client")
}

fn client_not_found() -> ApiError {
    not_found("client")
}

/// The client listing's filter.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct ClientQuery {
    /// Only clients whose name or email holds this, in any case of its letters (1 to 100
    /// characters).
    #[param(
        min_length = 1,
        max_length = 100,
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$",
        example = "acme"
    )]
    q: Option<String>,
}

/// List clients
///
/// Lists the team's clients, by name (case-insensitive), then id; with `q`, only those it
/// finds. With `limit`, a page: a `Link` header with `rel="next"` names the next one while
/// there is more. Needs `clients:read`.
#[utoipa::path(
    tag = "Clients",
    params(ClientQuery, paging::PageQuery),
    responses(
        (status = 200, description = "The team's clients", body = [ClientBody],
         headers(("Link" = String, description = "`<URL of the next page>; rel=\"next\"`, on a page with more after it"))),
        QueryErrors,
        KeyedErrors,
    )
)]
#[get("")]
pub(crate) async fn list_clients(
    auth: Auth<ClientsRead>,
    listing: paging::Listing,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    listing.answer::<Clients>(&state, &auth.principal).await
}

/// The team's clients, by name (case-insensitive), then id.
pub(crate) struct Clients;

impl Collection for Clients {
    type Filters = ClientQuery;
    type Row = Client;
    type Body = ClientBody;

    async fn find(state: &ApiState, who: &Principal, query: ClientQuery) -> Result<Vec<Client>, ApiError> {
        let search = query_search(query.q.as_deref())?;
        let mut clients = state.stores.billing.list(who.team_id).await?;
        if let Some(search) = &search {
            clients.retain(|client| client.is_found_by(search));
        }
        Ok(clients)
    }

    fn order(client: &Client) -> [String; 2] {
        [client.details.name.as_str().to_lowercase(), client.id.to_string()]
    }
}

/// Create a client
///
/// Creates a client in the key's team. `phone`, `vatNumber`, `line2` and `line3` may be left
/// out; they are then empty. Needs `clients:write`.
#[utoipa::path(
    tag = "Clients",
    request_body = ClientInput,
    responses(
        (status = 201, description = "Created", body = ClientBody, headers(("Location" = String, description = "URL of the new client"))),
        BodyErrors,
        KeyedErrors,
    )
)]
#[post("")]
pub(crate) async fn create_client(
    auth: Auth<ClientsWrite>,
    Json(input): Json<ClientInput>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let client = create(&state, &auth.principal, input).await?;
    Ok(created(format!("/v1/invoices/clients/{}", client.id), client))
}

/// Makes a client of `input` in the caller's team.
pub(crate) async fn create(
    state: &ApiState,
    who: &Principal,
    input: ClientInput,
) -> Result<ClientBody, ApiError> {
    let client = Client::new(who.team_id, input.parse(None)?, state.clock.now());
    state.stores.billing.create(&client).await?;
    Ok(client.into())
}

/// Get a client
///
/// Returns one client of the key's team; a client of another team is a 404 like an unknown
/// one. Needs `clients:read`.
#[utoipa::path(
    tag = "Clients",
    params(("id" = Uuid, Path, description = "Client id")),
    responses(
        (status = 200, description = "The client", body = ClientBody),
        NotFound,
        KeyedErrors,
    )
)]
#[get("/{id}")]
pub(crate) async fn get_client(
    auth: Auth<ClientsRead>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<web::Json<ClientBody>, ApiError> {
    Ok(web::Json(get(&state, &auth.principal, &path).await?))
}

/// The caller's team's client `id` (as written in a path).
pub(crate) async fn get(state: &ApiState, who: &Principal, id: &str) -> Result<ClientBody, ApiError> {
    let client = state.stores.billing.get(who.team_id, client_id(id)?).await?.ok_or_else(client_not_found)?;
    Ok(client.into())
}

/// Replace a client
///
/// A full replacement, not a merge: every required field must be given, and omitted optional
/// fields become empty. Needs `clients:write`.
#[utoipa::path(
    tag = "Clients",
    params(("id" = Uuid, Path, description = "Client id")),
    request_body = ClientInput,
    responses(
        (status = 200, description = "The replaced client", body = ClientBody),
        BodyErrors,
        NotFound,
        KeyedErrors,
    )
)]
#[patch("/{id}")]
pub(crate) async fn replace_client(
    auth: Auth<ClientsWrite>,
    Json(input): Json<ClientInput>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<web::Json<ClientBody>, ApiError> {
    let id = client_id(&path)?;
    let team = auth.principal.team_id;
    let current = if input.keeps_some() {
        Some(state.stores.billing.get(team, id).await?.ok_or_else(client_not_found)?.details)
    } else {
        None
    };
    let details = input.parse(current.as_ref())?;
    let client =
        state.stores.billing.replace(auth.principal.team_id, id, &details, state.clock.now()).await.map_err(
            |error| match error {
                ReplaceClientError::NotFound => client_not_found(),
                ReplaceClientError::Store(error) => error.into(),
            },
        )?;
    Ok(web::Json(client.into()))
}

/// Delete a client
///
/// Deletes the client for good. Refused with 409 while invoices refer to it or projects
/// belong to it. Needs `clients:write`.
#[utoipa::path(
    tag = "Clients",
    params(("id" = Uuid, Path, description = "Client id")),
    responses(
        (status = 200, description = "Deleted", body = Deleted),
        (status = 409, description = "The client has invoices or projects", body = ErrorBody),
        NotFound,
        KeyedErrors,
    )
)]
#[delete("/{id}")]
pub(crate) async fn delete_client(
    auth: Auth<ClientsWrite>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<web::Json<Deleted>, ApiError> {
    let id = client_id(&path)?;
    state.stores.billing.delete(auth.principal.team_id, id, state.clock.now()).await.map_err(|error| {
        match error {
            DeleteClientError::NotFound => client_not_found(),
            DeleteClientError::HasInvoices => ApiError::conflict("client has invoices and cannot be deleted"),
            DeleteClientError::HasProjects => ApiError::conflict(
                "client has projects and cannot be deleted: give each another client, or none, first",
            ),
            DeleteClientError::Store(error) => error.into(),
        }
    })?;
    Ok(Deleted::new("client"))
}
