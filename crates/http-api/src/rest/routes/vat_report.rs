//! `/v1/reports/vat`: what a team files for a period, per currency, VAT category and rate.

use accounts::Principal;
use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, get, web};
use billing::InvoiceFilter;
use billing::credit::CreditNoteFilter;
use billing::money::{Currency, round_to_minor};
use billing::vat_return::{PeriodRule, ReturnPeriod, vat_return};
use kernel::FieldError;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::{IntoParams, ToSchema};

use crate::conventions::error::ApiError;
use crate::rest::auth::{Auth, InvoicesRead};
use crate::rest::csv;
use crate::rest::paging;
use crate::rest::routes::numbers::Exact;
use crate::rest::routes::{KeyedErrors, QueryErrors, query_day};
use crate::rest::state::ApiState;

/// The sums of one currency, VAT category and rate.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct VatReturnLine {
    #[schema(example = "EUR")]
    currency: &'static str,
    #[schema(example = "S")]
    vat_category: &'static str,
    #[schema(example = 19)]
    tax_percentage: Exact,
    /// What its invoices' lines of the rate sum to, less its credit notes'.
    taxable_amount: Exact,
    /// Its invoices' VAT at the rate, each rounded once per invoice, less its credit notes'.
    tax_amount: Exact,
}

/// The period of the return, and its currency.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub(crate) struct VatReturnQuery {
    /// Its first day, `YYYY-MM-DD` (UTC).
    #[param(value_type = String, format = Date, example = "2026-11-01")]
    from: Option<String>,
    /// Its last day, included: at most 366 days after `from`.
    #[param(value_type = String, format = Date, example = "2026-11-30")]
    to: Option<String>,
    /// Only documents in this currency (ISO 4217).
    #[param(value_type = Option<String>, pattern = "^[A-Z]{3}$", example = "EUR")]
    currency: Option<String>,
}

/// The VAT return of a period
///
/// Per currency, VAT category and rate: the taxable amount and the VAT of the invoices
/// issued from `from` to `to` (both included, by issue date in UTC), less those of the
/// credit notes issued in the period, which correct in the period they are made. Lines are
/// ordered by currency, category and rate; a period with no documents has none.
/// `Accept: text/csv` answers it as CSV. Needs `invoices:read`.
#[utoipa::path(
    tag = "Payments",
    params(VatReturnQuery),
    responses(
        (status = 200, description = "The return's lines; with `Accept: text/csv`, as CSV", content((Vec<VatReturnLine> = "application/json"), (String = "text/csv"))),
        QueryErrors,
        KeyedErrors,
    )
)]
#[get("/vat")]
pub(crate) async fn vat_report(
    auth: Auth<InvoicesRead>,
    request: HttpRequest,
    listing: paging::Listing,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let lines = vat_lines(&state, &auth.principal, listing.parameters.clone()).await?;
    if csv::wanted(&request) {
        let mut sheet = csv::Rows::new();
        sheet.row(["currency", "vatCategory", "taxPercentage", "taxableAmount", "taxAmount"])?;
        for line in &lines {
            sheet.row([
                line.currency.to_owned(),
                line.vat_category.to_owned(),
                line.tax_percentage.0.to_string(),
                line.taxable_amount.0.to_string(),
                line.tax_amount.0.to_string(),
            ])?;
        }
        return Ok(csv::answer("vat-return.csv", sheet.take()?));
    }
    Ok(HttpResponse::Ok().insert_header((header::VARY, csv::VARY)).json(lines))
}

/// The return the parameters in `query` ask of the caller's team.
pub(crate) async fn vat_lines(
    state: &ApiState,
    who: &Principal,
    query: Map<String, Value>,
) -> Result<Vec<VatReturnLine>, ApiError> {
    let query: VatReturnQuery = paging::read_query(query)?;
    let day = |text: Option<String>, field: &str| match text {
        Some(text) => query_day(&text, field),
        None => Err(FieldError::new(field, "is required: the period's first and last day, YYYY-MM-DD")),
    };
    let (from, to) = (day(query.from, "from")?, day(query.to, "to")?);
    let period = ReturnPeriod::new(from, to).map_err(|rule| match rule {
        PeriodRule::Reversed => FieldError::new("to", "must not be before from"),
        PeriodRule::TooLong => {
            FieldError::new("to", "must be at most 366 days after from: ask for a year at most")
        }
    })?;
    let currency =
        query.currency.map(|code| Currency::parse(&code).map_err(|e| e.at("currency"))).transpose()?;
    let start = |day: chrono::NaiveDate| day.and_hms_opt(0, 0, 0).map(|at| at.and_utc());
    let (issued_from, issued_before) = (start(period.from()), period.to().succ_opt().and_then(start));
    let filter =
        InvoiceFilter { issued_from, issued_before, now: state.clock.now(), ..InvoiceFilter::default() };
    let billing = &*state.stores.billing;
    let invoices = billing.list_invoices(who.team_id, &filter).await?;
    let notes = billing
        .list_credit_notes(
            who.team_id,
            &CreditNoteFilter { issued_from, issued_before, ..CreditNoteFilter::default() },
        )
        .await?;
    Ok(vat_return(period, currency, &invoices, &notes)
        .into_iter()
        .map(|line| VatReturnLine {
            currency: line.currency.as_str(),
            vat_category: line.category.as_str(),
            tax_percentage: Exact(line.percentage.normalize()),
            taxable_amount: Exact(round_to_minor(line.taxable_amount, line.currency)),
            tax_amount: Exact(round_to_minor(line.tax_amount, line.currency)),
        })
        .collect())
}
