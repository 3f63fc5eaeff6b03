//! `/v1/bank-statements` and `/v1/bank-transactions`: a bank's statement imported as its
//! file (camt.053, camt.054, MT940, or CSV by the team's mapping), its transactions kept
//! once and matched to open invoices, and bookings by hand.

use accounts::Principal;
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, get, post, put, web};
use billing::banking::{
    Allocation, BankError, BankStatementId, BankTransaction, BankTransactionId, CsvColumns, CsvMapping,
    Decision, ImportedStatement, StatementFormat, StatementRule, TransactionFilter, TransactionStatus,
};
use billing::ledger::ENTRY_AMOUNT;
use billing::money::{Decimal, round_to_minor};
use billing::reconciling::{self, ImportError, Matched};
use kernel::{FieldError, Id, Words};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::conventions::body::{Json, OptionalJson};
use crate::conventions::error::{ApiError, ErrorBody};
use crate::rest::auth::{Auth, BankingRead, BankingWrite};
use crate::rest::csv;
use crate::rest::openapi::{
    Placement as PlacementSchema, StatementFormat as StatementFormatSchema,
    TransactionStatus as TransactionStatusSchema,
};
use crate::rest::paging::{self, Page};
use crate::rest::routes::numbers::Exact;
use crate::rest::routes::{BodyErrors, KeyedErrors, NotFound, QueryErrors, Timestamp, not_found, path_id};
use crate::rest::state::ApiState;

/// A statement as imported.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StatementBody {
    id: Uuid,
    #[schema(value_type = StatementFormatSchema)]
    format: &'static str,
    /// The account's IBAN (or the bank's account id where it gives no IBAN); `null` for CSV.
    #[schema(required = true, example = "DE44500105175407324931")]
    account: Option<String>,
    #[schema(example = "EUR")]
    currency: String,
    /// `null` where the format gives none (camt.054, CSV).
    #[schema(required = true, value_type = Option<f64>)]
    opening_balance: Option<Exact>,
    #[schema(required = true, value_type = Option<f64>)]
    closing_balance: Option<Exact>,
    #[schema(required = true, format = Date)]
    from: Option<String>,
    #[schema(required = true, format = Date)]
    to: Option<String>,
    /// Its entries, those of them kept before (by an earlier import, or earlier in the
    /// file), and of its new ones, those booked and those suggested.
    entries: usize,
    duplicates: usize,
    matched: usize,
    suggested: usize,
    imported_at: Timestamp,
}

impl From<ImportedStatement> for StatementBody {
    fn from(statement: ImportedStatement) -> Self {
        let money = |value: Option<Decimal>| value.map(Exact);
        Self {
            id: statement.id.as_uuid(),
            format: statement.format.as_str(),
            account: statement.account,
            currency: statement.currency.as_str().to_owned(),
            opening_balance: money(statement.opening),
            closing_balance: money(statement.closing),
            from: statement.from.map(|day| day.to_string()),
            to: statement.to.map(|day| day.to_string()),
            entries: statement.entries,
            duplicates: statement.duplicates,
            matched: statement.matched,
            suggested: statement.suggested,
            imported_at: Timestamp(statement.imported_at),
        }
    }
}

/// What an import made: each statement of the file, in order.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ImportBody {
    /// The file's first statement (most files hold one); the others are in `statements`.
    #[serde(flatten)]
    first: StatementBody,
    statements: Vec<StatementBody>,
}

/// A payment a transaction made.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BankPaymentBody {
    /// The payment (`GET /v1/payments/{id}`).
    id: Uuid,
    invoice_id: Uuid,
    amount: Exact,
}

/// A transaction of a statement and what became of it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BankTransactionBody {
    id: Uuid,
    statement_id: Uuid,
    #[schema(required = true)]
    account: Option<String>,
    #[schema(format = Date, example = "2026-11-20")]
    date: String,
    #[schema(required = true, format = Date)]
    value_date: Option<String>,
    /// Money in is positive, money out negative.
    amount: Exact,
    #[schema(example = "EUR")]
    currency: String,
    #[schema(required = true)]
    counterparty_name: Option<String>,
    #[schema(required = true)]
    counterparty_iban: Option<String>,
    /// The remittance information, as the payer wrote it.
    text: String,
    /// The structured creditor reference given with it (RF or QR reference).
    #[schema(required = true)]
    reference: Option<String>,
    /// The bank's own reference of the booking.
    #[schema(required = true)]
    bank_reference: Option<String>,
    #[schema(value_type = TransactionStatusSchema)]
    status: &'static str,
    /// While `suggested`: the open invoice it probably pays.
    #[schema(required = true)]
    suggested_invoice_id: Option<Uuid>,
    /// While `matched`: the payments it made.
    payments: Vec<BankPaymentBody>,
    /// While `matched`: what went to the client's credit, above what its invoices had due.
    credited: Exact,
    created_at: Timestamp,
}

impl From<BankTransaction> for BankTransactionBody {
    fn from(transaction: BankTransaction) -> Self {
        let entry = transaction.entry;
        let currency = entry.currency;
        Self {
            id: transaction.id.as_uuid(),
            statement_id: transaction.statement_id.as_uuid(),
            account: transaction.account,
            date: entry.booked_on.to_string(),
            value_date: entry.value_on.map(|day| day.to_string()),
            amount: Exact(entry.amount),
            currency: currency.as_str().to_owned(),
            counterparty_name: entry.counterparty_name,
            counterparty_iban: entry.counterparty_iban,
            text: entry.text,
            reference: entry.reference,
            bank_reference: entry.bank_reference,
            status: transaction.status.as_str(),
            suggested_invoice_id: transaction.suggested_invoice.map(|id| id.as_uuid()),
            payments: transaction
                .payments
                .into_iter()
                .map(|p| BankPaymentBody {
                    id: p.entry_id.as_uuid(),
                    invoice_id: p.invoice_id.as_uuid(),
                    amount: Exact(p.amount),
                })
                .collect(),
            credited: Exact(round_to_minor(transaction.credited, currency)),
            created_at: Timestamp(transaction.created_at),
        }
    }
}

/// Which format the body is in.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct ImportQuery {
    /// The file's format.
    #[param(value_type = StatementFormatSchema, example = "camt.053")]
    format: Option<String>,
}

fn refused_import(error: ImportError) -> ApiError {
    match error {
        ImportError::Read(error) => FieldError::new("body", error.problem).into(),
        ImportError::Rule(rule @ StatementRule::TooManyEntries { .. }) => {
            ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, format!("body: {rule}; split it"))
        }
        ImportError::Rule(rule) => FieldError::new("body", rule.to_string()).into(),
        ImportError::Store(error) => error.into(),
    }
}

/// Import a bank statement
///
/// Takes the bank's file as the body, in the `format` named (`camt.053` or `camt.054` as
/// `application/xml`, `mt940` as `text/plain`, `csv` as `text/csv`, read by the team's
/// saved [mapping](#tag/Banking/operation/put_csv_mapping)), keeps each of its
/// transactions once (importing it again, or an overlapping statement, adds none), and
/// matches each new one to the team's open invoices: a structured reference or an
/// invoice's serial books a payment; an amount equal to what one invoice of the payer has
/// due only suggests it. A statement whose opening balance and entries do not come to its
/// closing balance is refused (400) and nothing is kept. Up to the server's statement body
/// limit (50 MiB by default) and 100,000 entries. Needs `banking:write`.
#[utoipa::path(
    tag = "Banking",
    params(ImportQuery),
    request_body(
        content = inline(crate::rest::openapi::Binary),
        content_type = "application/octet-stream",
        description = "The bank's file as it came, under any media type (camt as `application/xml`, MT940 as `text/plain`, CSV as `text/csv`)"
    ),
    responses(
        (status = 201, description = "Imported", body = ImportBody, headers(("Location" = String, description = "URL of the (first) statement"))),
        (status = 413, description = "Over the statement body limit, or over 100,000 entries", body = ErrorBody),
        BodyErrors,
        QueryErrors,
        KeyedErrors,
    )
)]
#[post("")]
pub(crate) async fn import_statement(
    auth: Auth<BankingWrite>,
    query: web::Query<ImportQuery>,
    payload: web::Payload,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let limit = state.settings.statement_limit;
    let body = match payload.to_bytes_limited(limit).await {
        Ok(Ok(body)) => body,
        Ok(Err(error)) => return Err(crate::conventions::body::unread_body(&error)),
        Err(_) => {
            return Err(ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("body: a statement file may be at most {limit} bytes (BILLABLE_STATEMENT_LIMIT_MB)"),
            ));
        }
    };
    let format = query.format.as_deref().ok_or_else(|| {
        FieldError::new("format", "name the file's format: camt.053, camt.054, mt940 or csv")
    })?;
    let format = StatementFormat::parse_word(format).map_err(|e| e.at("format"))?;
    let team = auth.principal.team_id;
    let stores = &state.stores;
    let currency = billing::service::the_team(&*stores.accounts, team).await?.currency;
    let now = state.clock.now();
    let reader = state.statements.clone();
    let store = stores.billing.clone();
    let imported = reconciling::import(&*store, &*reader, team, format, &body, currency, now)
        .await
        .map_err(refused_import)?;
    let first =
        imported.first().cloned().ok_or_else(|| FieldError::new("body", "the file holds no statement"))?;
    let location = format!("/v1/bank-statements/{}", first.id);
    let statements = imported.into_iter().map(StatementBody::from).collect();
    Ok(crate::rest::routes::created(location, ImportBody { first: first.into(), statements }))
}

/// Get a statement
///
/// One statement the team imported. Needs `banking:read`.
#[utoipa::path(
    tag = "Banking",
    params(("id" = Uuid, Path, description = "Statement id")),
    responses((status = 200, description = "The statement", body = StatementBody), NotFound, KeyedErrors)
)]
#[get("/{id}")]
pub(crate) async fn get_statement(
    auth: Auth<BankingRead>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<web::Json<StatementBody>, ApiError> {
    let id: BankStatementId = path_id(&path, "statement")?;
    let found = state.stores.billing.get_statement(auth.principal.team_id, id).await?;
    Ok(web::Json(found.ok_or_else(|| not_found("statement"))?.into()))
}

/// List a statement's transactions
///
/// The transactions a statement added (those it repeated belong to the statement that
/// added them first), newest booking first, paged as every listing is. Needs
/// `banking:read`.
#[utoipa::path(
    tag = "Banking",
    params(("id" = Uuid, Path, description = "Statement id"), TransactionQuery, paging::PageQuery),
    responses(
        (status = 200, description = "The statement's transactions", body = Vec<BankTransactionBody>,
         headers(("Link" = String, description = "`<URL of the next page>; rel=\"next\"`, on a page with more after it"))),
        QueryErrors,
        NotFound,
        KeyedErrors,
    )
)]
#[get("/{id}/transactions")]
pub(crate) async fn list_statement_transactions(
    auth: Auth<BankingRead>,
    path: web::Path<String>,
    listing: paging::Listing,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let id: BankStatementId = path_id(&path, "statement")?;
    let team = auth.principal.team_id;
    if state.stores.billing.get_statement(team, id).await?.is_none() {
        return Err(not_found("statement"));
    }
    listing.respond(list_of(&state, &auth.principal, Some(id), listing.parameters.clone()).await)
}

/// The columns of a team's CSV exports, by their headers.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct CsvColumnsInput {
    #[schema(example = "Buchungstag")]
    date: String,
    #[schema(example = "Betrag")]
    amount: String,
    /// Where rows name their currency; without it, rows are in the team's currency.
    #[serde(default)]
    #[schema(example = "Währung")]
    currency: Option<String>,
    #[serde(default)]
    counterparty_name: Option<String>,
    #[serde(default)]
    counterparty_iban: Option<String>,
    #[schema(example = "Verwendungszweck")]
    text: String,
    #[serde(default)]
    reference: Option<String>,
}

/// How the team's CSV exports are read.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schema(example = json!({"delimiter": ";", "decimalSeparator": ",", "dateFormat": "%d.%m.%Y",
    "columns": {"date": "Buchungstag", "amount": "Betrag", "currency": "Währung",
                "counterpartyName": "Name", "counterpartyIban": "IBAN", "text": "Verwendungszweck",
                "reference": "Referenz"}}))]
pub(crate) struct CsvMappingInput {
    /// One character: `;`, `,`, or a tab.
    #[schema(min_length = 1, max_length = 1)]
    delimiter: String,
    /// `.` or `,`.
    #[schema(min_length = 1, max_length = 1)]
    decimal_separator: String,
    /// A chrono date format naming day, month and year (`%d.%m.%Y`, `%Y-%m-%d`).
    #[schema(min_length = 1, max_length = 50)]
    date_format: String,
    columns: CsvColumnsInput,
}

fn header(text: &str, field: &str) -> Result<String, FieldError> {
    let trimmed = text.trim();
    if trimmed.is_empty() || trimmed.chars().count() > 200 {
        return Err(FieldError::new(field, "must be a column's header, 1 to 200 characters"));
    }
    Ok(trimmed.to_owned())
}

impl CsvMappingInput {
    fn parse(self) -> Result<CsvMapping, FieldError> {
        let one = |text: &str, field: &str| {
            let mut chars = text.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => Ok(c),
                _ => Err(FieldError::new(field, "must be one character")),
            }
        };
        let delimiter = one(&self.delimiter, "delimiter")?;
        let delimiter = u8::try_from(delimiter)
            .map_err(|_| FieldError::new("delimiter", "must be one ASCII character"))?;
        if self.date_format.chars().count() > 50 {
            return Err(FieldError::new("dateFormat", "must be at most 50 characters"));
        }
        let optional =
            |text: Option<String>, field: &str| text.as_deref().map(|t| header(t, field)).transpose();
        let columns = self.columns;
        let mapping = CsvMapping {
            delimiter,
            decimal_separator: one(&self.decimal_separator, "decimalSeparator")?,
            date_format: self.date_format,
            columns: CsvColumns {
                date: header(&columns.date, "columns.date")?,
                amount: header(&columns.amount, "columns.amount")?,
                currency: optional(columns.currency, "columns.currency")?,
                counterparty_name: optional(columns.counterparty_name, "columns.counterpartyName")?,
                counterparty_iban: optional(columns.counterparty_iban, "columns.counterpartyIban")?,
                text: header(&columns.text, "columns.text")?,
                reference: optional(columns.reference, "columns.reference")?,
            },
        };
        mapping.check().map_err(|(field, invalid)| invalid.at(field))?;
        Ok(mapping)
    }
}

/// The columns of a team's CSV exports, by their headers; `null` for a column not mapped.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CsvColumnsBody {
    date: String,
    amount: String,
    currency: Option<String>,
    counterparty_name: Option<String>,
    counterparty_iban: Option<String>,
    text: String,
    reference: Option<String>,
}

/// How the team's CSV exports are read, as saved.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CsvMappingBody {
    delimiter: String,
    decimal_separator: String,
    date_format: String,
    columns: CsvColumnsBody,
}

impl CsvMappingBody {
    fn of(mapping: CsvMapping) -> Self {
        let columns = mapping.columns;
        Self {
            delimiter: char::from(mapping.delimiter).to_string(),
            decimal_separator: mapping.decimal_separator.to_string(),
            date_format: mapping.date_format,
            columns: CsvColumnsBody {
                date: columns.date,
                amount: columns.amount,
                currency: columns.currency,
                counterparty_name: columns.counterparty_name,
                counterparty_iban: columns.counterparty_iban,
                text: columns.text,
                reference: columns.reference,
            },
        }
    }
}

/// Save the CSV mapping
///
/// Sets how the team's CSV exports are read: the delimiter, the decimal separator, the
/// date format and which column (by its header) holds what. Needs `banking:write`.
#[utoipa::path(
    tag = "Banking",
    request_body = CsvMappingInput,
    responses((status = 200, description = "The mapping saved", body = CsvMappingBody), BodyErrors, KeyedErrors)
)]
#[put("")]
pub(crate) async fn put_csv_mapping(
    auth: Auth<BankingWrite>,
    Json(input): Json<CsvMappingInput>,
    state: web::Data<ApiState>,
) -> Result<web::Json<CsvMappingBody>, ApiError> {
    let mapping = input.parse()?;
    state.stores.billing.save_csv_mapping(auth.principal.team_id, &mapping, state.clock.now()).await?;
    Ok(web::Json(CsvMappingBody::of(mapping)))
}

/// Get the CSV mapping
///
/// How the team's CSV exports are read; 404 until one is saved. Needs `banking:read`.
#[utoipa::path(
    tag = "Banking",
    responses((status = 200, description = "The mapping", body = CsvMappingBody), NotFound, KeyedErrors)
)]
#[get("")]
pub(crate) async fn get_csv_mapping(
    auth: Auth<BankingRead>,
    state: web::Data<ApiState>,
) -> Result<web::Json<CsvMappingBody>, ApiError> {
    let mapping = state.stores.billing.csv_mapping(auth.principal.team_id).await?;
    Ok(web::Json(CsvMappingBody::of(mapping.ok_or_else(|| not_found("CSV mapping"))?)))
}

/// The transaction listing's filters.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub(crate) struct TransactionQuery {
    /// Only transactions in these statuses (repeatable).
    #[param(value_type = Option<Vec<TransactionStatusSchema>>, example = json!(["unmatched"]))]
    status: Option<paging::OneOrMany>,
}

fn filter_of(query: TransactionQuery) -> Result<TransactionFilter, FieldError> {
    let statuses = query.status.map(paging::OneOrMany::into_vec).unwrap_or_default();
    let statuses = statuses
        .iter()
        .map(|s| TransactionStatus::parse_word(s).map_err(|e| e.at("status")))
        .collect::<Result<_, _>>()?;
    Ok(TransactionFilter { statuses, statement: None, after: None, limit: u32::MAX })
}

/// List bank transactions
///
/// The team's transactions, newest booking first, with what became of each: `unmatched`
/// and `suggested` money in waits for a person (or the agent), `matched` made payments,
/// `ignored` is money out. With `limit`, a page; with `Accept: text/csv`, all of them as
/// CSV. Needs `banking:read`.
#[utoipa::path(
    tag = "Banking",
    params(TransactionQuery, paging::PageQuery),
    responses(
        (status = 200, description = "The team's transactions", content((Vec<BankTransactionBody> = "application/json"), (String = "text/csv")),
         headers(("Link" = String, description = "`<URL of the next page>; rel=\"next\"`, on a page with more after it"))),
        QueryErrors,
        KeyedErrors,
    )
)]
#[get("")]
pub(crate) async fn list_transactions(
    auth: Auth<BankingRead>,
    request: HttpRequest,
    listing: paging::Listing,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    if csv::wanted(&request) {
        let (store, team) = (state.stores.billing.clone(), auth.principal.team_id);
        return csv::listing("bank-transactions.csv", listing.parameters.clone(), |query| {
            Ok(TransactionsCsv { store, team, filter: filter_of(query)? })
        })
        .await;
    }
    Ok(csv::varying(listing.respond(list(&state, &auth.principal, listing.parameters.clone()).await)?))
}

/// The team's transactions as CSV, a page at a time.
#[derive(Clone)]
struct TransactionsCsv {
    store: std::sync::Arc<dyn billing::BillingStore>,
    team: accounts::TeamId,
    filter: TransactionFilter,
}

type Position = (chrono::NaiveDate, BankTransactionId);

impl csv::PagedListing for TransactionsCsv {
    type Item = BankTransaction;
    type Position = Position;

    async fn read(&self, after: Option<Position>, limit: u32) -> Result<Vec<BankTransaction>, ApiError> {
        let filter = TransactionFilter { after, limit, ..self.filter.clone() };
        Ok(self.store.list_transactions(self.team, &filter).await?)
    }

    fn position(transaction: &BankTransaction) -> Position {
        (transaction.entry.booked_on, transaction.id)
    }

    fn header() -> &'static [&'static str] {
        &[
            "id",
            "date",
            "amount",
            "currency",
            "counterpartyName",
            "counterpartyIban",
            "text",
            "reference",
            "bankReference",
            "status",
            "suggestedInvoiceId",
            "paymentIds",
        ]
    }

    fn cells(&self, transaction: &BankTransaction) -> Vec<String> {
        let entry = &transaction.entry;
        vec![
            transaction.id.to_string(),
            entry.booked_on.to_string(),
            entry.amount.to_string(),
            entry.currency.as_str().to_owned(),
            entry.counterparty_name.clone().unwrap_or_default(),
            entry.counterparty_iban.clone().unwrap_or_default(),
            entry.text.clone(),
            entry.reference.clone().unwrap_or_default(),
            entry.bank_reference.clone().unwrap_or_default(),
            transaction.status.as_str().to_owned(),
            transaction.suggested_invoice.map(|id| id.to_string()).unwrap_or_default(),
            transaction.payments.iter().map(|p| p.entry_id.to_string()).collect::<Vec<_>>().join(" "),
        ]
    }
}

/// The team's transactions that `query` asks for, newest booking first.
pub(crate) async fn list(
    state: &ApiState,
    who: &Principal,
    query: Map<String, Value>,
) -> Result<Page<BankTransactionBody>, ApiError> {
    list_of(state, who, None, query).await
}

/// The team's transactions (of `statement` only, when given) that `query` asks for.
async fn list_of(
    state: &ApiState,
    who: &Principal,
    statement: Option<BankStatementId>,
    query: Map<String, Value>,
) -> Result<Page<BankTransactionBody>, ApiError> {
    let (query, page) = paging::read_listing::<TransactionQuery>(query)?;
    let filter = TransactionFilter { statement, ..filter_of(query)? };
    let page = paging::page_from_store(
        &page,
        position,
        |t: &BankTransaction| cursor_of((t.entry.booked_on, t.id)),
        |after, limit| async move {
            let filter = TransactionFilter { after, limit: limit.unwrap_or(u32::MAX), ..filter };
            Ok(state.stores.billing.list_transactions(who.team_id, &filter).await?)
        },
    )
    .await?;
    Ok(page.map(BankTransactionBody::from))
}

fn cursor_of((day, id): Position) -> String {
    paging::encode_cursor(&[day.to_string(), id.to_string()])
}

fn position(cursor: &str) -> Result<Position, FieldError> {
    let parts = paging::decode_cursor(cursor)?;
    let [day, id] = parts.as_slice() else { return Err(paging::not_a_cursor()) };
    let day = chrono::NaiveDate::parse_from_str(day, "%Y-%m-%d").map_err(|_| paging::not_a_cursor())?;
    Ok((day, BankTransactionId::parse(id).ok_or_else(paging::not_a_cursor)?))
}

/// Get a bank transaction
///
/// One transaction of the team's statements. Needs `banking:read`.
#[utoipa::path(
    tag = "Banking",
    params(("id" = Uuid, Path, description = "Transaction id")),
    responses((status = 200, description = "The transaction", body = BankTransactionBody), NotFound, KeyedErrors)
)]
#[get("/{id}")]
pub(crate) async fn get_transaction(
    auth: Auth<BankingRead>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<web::Json<BankTransactionBody>, ApiError> {
    let id: BankTransactionId = path_id(&path, "transaction")?;
    let found = state.stores.billing.get_transaction(auth.principal.team_id, id).await?;
    Ok(web::Json(found.ok_or_else(|| not_found("transaction"))?.into()))
}

/// What matching the pending transactions asks.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schema(example = json!({"dryRun": true}))]
pub(crate) struct MatchInput {
    /// Answer what would be booked and suggested, and book nothing. Default `false`.
    #[serde(default)]
    dry_run: bool,
}

/// A share of a transaction on one invoice.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct AllocationBody {
    invoice_id: Uuid,
    /// Greater than 0; what is above the invoice's due goes to its client's credit.
    #[schema(value_type = f64, exclusive_minimum = 0)]
    amount: Number,
}

/// What matching did (or would do) with one transaction.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct MatchBody {
    transaction_id: Uuid,
    #[schema(value_type = PlacementSchema)]
    decision: &'static str,
    allocations: Vec<AllocationBody>,
    #[schema(required = true)]
    suggested_invoice_id: Option<Uuid>,
}

impl MatchBody {
    /// What `matched` did, unless it left the transaction as it was.
    fn of(matched: Matched) -> Option<Self> {
        let decision = matched.decision.placement()?.as_str();
        let (allocations, suggested) = match matched.decision {
            Decision::Book(allocations) => (allocations, None),
            Decision::Suggest(invoice) => (Vec::new(), Some(invoice.as_uuid())),
            Decision::Leave => return None,
        };
        Some(Self {
            transaction_id: matched.transaction.as_uuid(),
            decision,
            allocations: allocations
                .into_iter()
                .map(|a| AllocationBody {
                    invoice_id: a.invoice.as_uuid(),
                    amount: a.amount.to_string().parse().unwrap_or_else(|_| Number::from(0)),
                })
                .collect(),
            suggested_invoice_id: suggested,
        })
    }
}

/// Match pending transactions
///
/// Runs the rules of an import again over the team's `unmatched` and `suggested`
/// transactions, oldest first (say, after invoices were made for money that came before
/// them); with `dryRun`, answers what it would do and books nothing. Needs `banking:write`.
#[utoipa::path(
    tag = "Banking",
    request_body(content = MatchInput, description = "May be left out"),
    responses((status = 200, description = "What was (or would be) booked and suggested", body = Vec<MatchBody>), BodyErrors, KeyedErrors)
)]
#[post("")]
pub(crate) async fn match_pending(
    auth: Auth<BankingWrite>,
    OptionalJson(input): OptionalJson<MatchInput>,
    state: web::Data<ApiState>,
) -> Result<web::Json<Vec<MatchBody>>, ApiError> {
    let store = state.stores.billing.clone();
    let decided =
        reconciling::match_pending(&*store, auth.principal.team_id, input.dry_run, state.clock.now()).await?;
    Ok(web::Json(decided.into_iter().filter_map(MatchBody::of).collect()))
}

/// A transaction to book by hand.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schema(example = json!({"allocations": [{"invoiceId": "7f1e3a2c-6a51-4c1e-9a55-0d2b8c1e4f10", "amount": 119.00}]}))]
pub(crate) struct ManualMatchInput {
    /// 1 to 100 shares, on distinct invoices, adding up to the transaction's amount.
    #[schema(min_items = 1, max_items = 100)]
    allocations: Vec<AllocationBody>,
}

fn bank_refusal(error: BankError) -> ApiError {
    match error {
        BankError::NotFound => not_found("transaction"),
        BankError::InvoiceNotFound(id) => {
            FieldError::new("allocations", format!("no such invoice in the team: {id}")).into()
        }
        BankError::AlreadyMatched => ApiError::conflict(
            "status: the transaction is matched already; unmatch it first (POST /v1/bank-transactions/{id}/unmatch)",
        ),
        BankError::Debit => ApiError::conflict("amount: the transaction is money out, which pays no invoice"),
        BankError::Unallocated { allocated, amount } => FieldError::new(
            "allocations",
            format!(
                "must add up to the transaction's amount, {amount}, each above 0; they come to {allocated}"
            ),
        )
        .into(),
        BankError::OtherCurrency { invoice, currency } => FieldError::new(
            "allocations",
            format!("invoice {invoice} is in {}, the transaction in another currency", currency.as_str()),
        )
        .into(),
        BankError::NotMatched => {
            ApiError::conflict("status: the transaction is not matched, so nothing is undone")
        }
        BankError::CreditUsed => ApiError::conflict(
            "credited: the client's credit this transaction gave was used since; it cannot be unmatched",
        ),
        BankError::Books(rule) => crate::rest::routes::refusals::books_refusal(&rule),
        BankError::Store(error) => error.into(),
    }
}

/// Match a transaction by hand
///
/// Books the transaction as payments of the invoices `allocations` name (confirming a
/// suggestion, or splitting one transfer over several invoices), each under its invoice's
/// lock; what is above an invoice's due goes to its client's credit. Once: a matched
/// transaction answers 409, however many race. Needs `banking:write`.
#[utoipa::path(
    tag = "Banking",
    params(("id" = Uuid, Path, description = "Transaction id")),
    request_body = ManualMatchInput,
    responses(
        (status = 200, description = "The matched transaction", body = BankTransactionBody),
        (status = 409, description = "Matched already, or money out", body = ErrorBody),
        BodyErrors,
        NotFound,
        KeyedErrors,
    )
)]
#[post("/{id}/match")]
pub(crate) async fn match_transaction(
    auth: Auth<BankingWrite>,
    path: web::Path<String>,
    Json(input): Json<ManualMatchInput>,
    state: web::Data<ApiState>,
) -> Result<web::Json<BankTransactionBody>, ApiError> {
    Ok(web::Json(match_by_hand(&state, &auth.principal, &path, input).await?))
}

/// Books the caller's team's transaction `id` as `input` says.
pub(crate) async fn match_by_hand(
    state: &ApiState,
    who: &Principal,
    id: &str,
    input: ManualMatchInput,
) -> Result<BankTransactionBody, ApiError> {
    let id: BankTransactionId = path_id(id, "transaction")?;
    if input.allocations.is_empty() || input.allocations.len() > 100 {
        return Err(FieldError::new("allocations", "must hold 1 to 100 shares").into());
    }
    let mut allocations = Vec::with_capacity(input.allocations.len());
    for (index, share) in input.allocations.iter().enumerate() {
        let amount = ENTRY_AMOUNT
            .parse(&share.amount.to_string())
            .map_err(|e| e.at(format!("allocations[{index}].amount")))?;
        let invoice = billing::InvoiceId::from_uuid(share.invoice_id);
        if allocations.iter().any(|a: &Allocation| a.invoice == invoice) {
            return Err(
                FieldError::new(format!("allocations[{index}].invoiceId"), "names an invoice twice").into()
            );
        }
        allocations.push(Allocation { invoice, amount });
    }
    let store = state.stores.billing.clone();
    let booked = reconciling::match_by_hand(&*store, who.team_id, id, &allocations, state.clock.now())
        .await
        .map_err(bank_refusal)?;
    Ok(booked.into())
}

/// Unmatch a transaction
///
/// Voids the payments a matched transaction made and takes back the credit it gave its
/// client: it is `unmatched` again. Refused (409) when that credit was used since. Takes no
/// body. Needs `banking:write`.
#[utoipa::path(
    tag = "Banking",
    params(("id" = Uuid, Path, description = "Transaction id")),
    responses(
        (status = 200, description = "The transaction, unmatched", body = BankTransactionBody),
        (status = 409, description = "Not matched, or its credit was used", body = ErrorBody),
        NotFound,
        KeyedErrors,
    )
)]
#[post("/{id}/unmatch")]
pub(crate) async fn unmatch_transaction(
    auth: Auth<BankingWrite>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<web::Json<BankTransactionBody>, ApiError> {
    let id: BankTransactionId = path_id(&path, "transaction")?;
    let undone = state
        .stores
        .billing
        .unmatch_transaction(auth.principal.team_id, id, state.clock.now())
        .await
        .map_err(bank_refusal)?;
    Ok(web::Json(undone.into()))
}
