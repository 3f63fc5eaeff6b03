//! The REST API: keys and permissions (`auth`), retries (`idempotency`), the listings'
//! caches and revisions, metrics, the handlers (`routes`), and the OpenAPI description,
//! built by the same calls that register the routes.
//!
//! Imports `conventions` and the domain; never `tools` or `triggers`.

pub mod auth;
pub(crate) mod collection;
pub(crate) mod csv;
pub mod describe;
pub mod idempotency;
pub mod keys;
pub mod listings;
pub mod metrics;
pub(crate) mod observe;
pub(crate) mod openapi;
pub mod paging;
pub mod revisions;
pub(crate) mod routes;
pub mod state;

use std::rc::Rc;

use actix_web::App;
use actix_web::dev::{ServiceFactory, ServiceRequest};
use actix_web::http::Method;
use actix_web::middleware::from_fn;
use serde_json::Value;
use utoipa::OpenApi;
use utoipa_actix_web::{AppExt, UtoipaApp, scope};

use self::openapi::{ApiDoc, SchemaLedger};

fn register<T>(app: UtoipaApp<T>, ledger: &Rc<SchemaLedger>) -> UtoipaApp<T>
where
    T: ServiceFactory<ServiceRequest, Config = (), Error = actix_web::Error, InitError = ()>,
{
    let app = team_routes(app.openapi(ApiDoc::openapi()), ledger);
    let app =
        banking_routes(quote_routes(credit_note_routes(page_routes(app, ledger), ledger), ledger), ledger);
    let app = app.service(
        scope("/v1/reports")
            .wrap(from_fn(auth::require_api_key))
            .service(ledger.check(routes::vat_report::vat_report)),
    );
    recurring_routes(tracking_routes(app, ledger), ledger)
        .service(
            scope("/v1/invoices/clients")
                .wrap(from_fn(idempotency::replay_retries))
                .wrap(from_fn(auth::require_api_key))
                .service(ledger.check(routes::clients::list_clients))
                .service(ledger.check(routes::clients::create_client))
                .service(ledger.check(routes::clients::get_client))
                .service(ledger.check(routes::cards::client_credit))
                .service(ledger.check(routes::clients::replace_client))
                .service(ledger.check(routes::clients::delete_client)),
        )
        // A scope of its own, before the keyed `/v1/invoices` one, so that `/{id}` there
        // never sees `pdf` (another method on it is a 405 here).
        .service(scope("/v1/invoices/pdf").service(ledger.check(routes::invoices::invoice_pdf)))
        .service(
            scope("/v1/invoices/receivables")
                .wrap(from_fn(auth::require_api_key))
                .service(ledger.check(routes::payments::receivables_report)),
        )
        .service(
            scope("/v1/invoices/from-time")
                .wrap(from_fn(idempotency::replay_retries))
                .wrap(from_fn(auth::require_api_key))
                .service(ledger.check(routes::billed_time::invoice_time)),
        )
        .service(
            scope("/v1/invoices")
                .wrap(from_fn(idempotency::replay_retries))
                .wrap(from_fn(auth::require_api_key))
                .service(ledger.check(routes::invoices::list_invoices))
                .service(ledger.check(routes::invoices::create_invoice))
                .service(ledger.check(routes::invoices::get_invoice))
                .service(ledger.check(routes::invoices::update_invoice))
                .service(ledger.check(routes::invoices::mark_invoice))
                .service(ledger.check(routes::invoices::delete_invoice))
                .service(ledger.check(routes::payments::record_payment))
                .service(ledger.check(routes::payments::list_invoice_payments))
                .service(ledger.check(routes::payments::record_refund))
                .service(ledger.check(routes::payments::write_off))
                .service(ledger.check(routes::payments::apply_credit))
                .service(ledger.check(routes::credit_notes::create_credit_note))
                .service(ledger.check(routes::einvoices::invoice_e_invoice))
                .service(ledger.check(routes::payment_qr::invoice_payment_qr))
                .service(ledger.check(routes::cards::payment_link))
                .service(ledger.check(routes::messages::send_invoice))
                .service(ledger.check(routes::messages::mark_invoice_sent))
                .service(ledger.check(routes::messages::remind_invoice))
                .service(ledger.check(routes::messages::list_invoice_messages)),
        )
        .service(
            scope("/v1/messages")
                .wrap(from_fn(idempotency::replay_retries))
                .wrap(from_fn(auth::require_api_key))
                .service(ledger.check(routes::messages::list_messages))
                .service(ledger.check(routes::messages::get_message))
                .service(ledger.check(routes::messages::retry_message)),
        )
        // A scope of its own, before `/v1/webhooks`, so that `/{id}` there never sees it.
        .service(
            scope("/v1/webhooks/event-types")
                .wrap(from_fn(auth::require_api_key))
                .service(ledger.check(routes::webhooks::list_event_types)),
        )
        .service(
            scope("/v1/webhooks")
                .wrap(from_fn(idempotency::replay_retries))
                .wrap(from_fn(auth::require_api_key))
                .service(ledger.check(routes::webhooks::list_webhook_endpoints))
                .service(ledger.check(routes::webhooks::create_webhook_endpoint))
                .service(ledger.check(routes::webhooks::get_webhook_endpoint))
                .service(ledger.check(routes::webhooks::update_webhook_endpoint))
                .service(ledger.check(routes::webhooks::delete_webhook_endpoint))
                .service(ledger.check(routes::webhooks::rotate_webhook_secret))
                .service(ledger.check(routes::webhooks::test_webhook_endpoint))
                .service(ledger.check(routes::webhooks::list_webhook_deliveries))
                .service(ledger.check(routes::webhooks::redeliver_webhook)),
        )
        .service(
            scope("/v1/payments")
                .wrap(from_fn(idempotency::replay_retries))
                .wrap(from_fn(auth::require_api_key))
                .service(ledger.check(routes::payments::list_payments))
                .service(ledger.check(routes::payments::get_payment))
                .service(ledger.check(routes::payments::void_payment)),
        )
        .service(ledger.check(routes::ops::healthz))
        .service(ledger.check(routes::ops::readyz))
        .service(ledger.check(routes::ops::metrics))
}

/// Quotes: the keyed `/v1/quotes` (their public pages are among the client's pages).
fn quote_routes<T>(app: UtoipaApp<T>, ledger: &Rc<SchemaLedger>) -> UtoipaApp<T>
where
    T: ServiceFactory<ServiceRequest, Config = (), Error = actix_web::Error, InitError = ()>,
{
    app.service(
        scope("/v1/quotes")
            .wrap(from_fn(idempotency::replay_retries))
            .wrap(from_fn(auth::require_api_key))
            .service(ledger.check(routes::quotes::list_quotes))
            .service(ledger.check(routes::quotes::create_quote))
            .service(ledger.check(routes::quotes::get_quote))
            .service(ledger.check(routes::quotes::update_quote))
            .service(ledger.check(routes::quotes::delete_quote))
            .service(ledger.check(routes::quotes::finalize_quote))
            .service(ledger.check(routes::quotes::accept_quote))
            .service(ledger.check(routes::quotes::decline_quote))
            .service(ledger.check(routes::quotes::convert_quote))
            .service(ledger.check(routes::messages::send_quote)),
    )
}

/// Banking: statements imported as files (read to a limit of their own, and not replayed
/// for retries: an import keeps each transaction once by itself) and their transactions.
fn banking_routes<T>(app: UtoipaApp<T>, ledger: &Rc<SchemaLedger>) -> UtoipaApp<T>
where
    T: ServiceFactory<ServiceRequest, Config = (), Error = actix_web::Error, InitError = ()>,
{
    app.service(
        scope("/v1/bank-statements/csv-mapping")
            .wrap(from_fn(idempotency::replay_retries))
            .wrap(from_fn(auth::require_api_key))
            .service(ledger.check(routes::banking::put_csv_mapping))
            .service(ledger.check(routes::banking::get_csv_mapping)),
    )
    .service(
        scope("/v1/bank-statements")
            .wrap(from_fn(auth::require_api_key))
            .service(ledger.check(routes::banking::import_statement))
            .service(ledger.check(routes::banking::get_statement))
            .service(ledger.check(routes::banking::list_statement_transactions)),
    )
    .service(
        scope("/v1/bank-transactions/match")
            .wrap(from_fn(idempotency::replay_retries))
            .wrap(from_fn(auth::require_api_key))
            .service(ledger.check(routes::banking::match_pending)),
    )
    .service(
        scope("/v1/bank-transactions")
            .wrap(from_fn(idempotency::replay_retries))
            .wrap(from_fn(auth::require_api_key))
            .service(ledger.check(routes::banking::list_transactions))
            .service(ledger.check(routes::banking::get_transaction))
            .service(ledger.check(routes::banking::match_transaction))
            .service(ledger.check(routes::banking::unmatch_transaction)),
    )
}

/// Credit notes: their public PDF, and the keyed `/v1/credit-notes`.
fn credit_note_routes<T>(app: UtoipaApp<T>, ledger: &Rc<SchemaLedger>) -> UtoipaApp<T>
where
    T: ServiceFactory<ServiceRequest, Config = (), Error = actix_web::Error, InitError = ()>,
{
    app        // Public, before the keyed scope, as the invoice PDF is.
        .service(scope("/v1/credit-notes/pdf").service(ledger.check(routes::credit_notes::credit_note_pdf)))
        .service(
            scope("/v1/credit-notes")
                .wrap(from_fn(idempotency::replay_retries))
                .wrap(from_fn(auth::require_api_key))
                .service(ledger.check(routes::credit_notes::list_credit_notes))
                .service(ledger.check(routes::credit_notes::get_credit_note))
                .service(ledger.check(routes::einvoices::credit_note_e_invoice))
                .service(ledger.check(routes::messages::send_credit_note)),
        )
}

/// The client's pages: an invoice's and its "Pay by card", a quote's with its decision and PDF.
fn page_routes<T>(app: UtoipaApp<T>, ledger: &Rc<SchemaLedger>) -> UtoipaApp<T>
where
    T: ServiceFactory<ServiceRequest, Config = (), Error = actix_web::Error, InitError = ()>,
{
    app.service(
        scope("/invoices")
            .service(ledger.check(routes::page::invoice_page))
            .service(ledger.check(routes::cards::pay_by_card)),
    )
    .service(
        scope("/quotes")
            .service(ledger.check(routes::quote_page::quote_page))
            .service(ledger.check(routes::quote_page::quote_pdf))
            .service(ledger.check(routes::quote_page::accept_on_page))
            .service(ledger.check(routes::quote_page::decline_on_page)),
    )
}

/// The team's own settings: `/v1/team`, `/v1/payment-providers/stripe` and
/// `/v1/reminder-policy`.
fn team_routes<T>(app: UtoipaApp<T>, ledger: &Rc<SchemaLedger>) -> UtoipaApp<T>
where
    T: ServiceFactory<ServiceRequest, Config = (), Error = actix_web::Error, InitError = ()>,
{
    app.service(
        scope("/v1/team")
            .wrap(from_fn(idempotency::replay_retries))
            .wrap(from_fn(auth::require_api_key))
            .service(ledger.check(routes::team::get_team))
            .service(ledger.check(routes::team::update_team)),
    )
    // Public, before the keyed scope: Stripe's deliveries carry no key.
    .service(
        scope("/v1/payment-providers/stripe/webhook").service(ledger.check(routes::cards::stripe_webhook)),
    )
    .service(
        scope("/v1/payment-providers/stripe")
            .wrap(from_fn(idempotency::replay_retries))
            .wrap(from_fn(auth::require_api_key))
            .service(ledger.check(routes::cards::connect_stripe))
            .service(ledger.check(routes::cards::get_stripe))
            .service(ledger.check(routes::cards::disconnect_stripe)),
    )
    .service(
        scope("/v1/reminder-policy")
            .wrap(from_fn(idempotency::replay_retries))
            .wrap(from_fn(auth::require_api_key))
            .service(ledger.check(routes::reminders::get_policy))
            .service(ledger.check(routes::reminders::put_policy)),
    )
}

/// The recurring invoices' routes, `/v1/recurring-invoices`.
fn recurring_routes<T>(app: UtoipaApp<T>, ledger: &Rc<SchemaLedger>) -> UtoipaApp<T>
where
    T: ServiceFactory<ServiceRequest, Config = (), Error = actix_web::Error, InitError = ()>,
{
    app.service(
        scope("/v1/recurring-invoices")
            .wrap(from_fn(idempotency::replay_retries))
            .wrap(from_fn(auth::require_api_key))
            .service(ledger.check(routes::recurring::list_recurring_invoices))
            .service(ledger.check(routes::recurring::create_recurring_invoice))
            .service(ledger.check(routes::recurring::get_recurring_invoice))
            .service(ledger.check(routes::recurring::update_recurring_invoice))
            .service(ledger.check(routes::recurring::delete_recurring_invoice))
            .service(ledger.check(routes::recurring::pause_recurring_invoice))
            .service(ledger.check(routes::recurring::resume_recurring_invoice))
            .service(ledger.check(routes::recurring::preview_recurring_invoice))
            .service(ledger.check(routes::recurring::list_recurring_runs)),
    )
}

/// The time-tracking routes, `/v1/track/*`.
fn tracking_routes<T>(app: UtoipaApp<T>, ledger: &Rc<SchemaLedger>) -> UtoipaApp<T>
where
    T: ServiceFactory<ServiceRequest, Config = (), Error = actix_web::Error, InitError = ()>,
{
    app.service(
        scope("/v1/track/time")
            .wrap(from_fn(idempotency::replay_retries))
            .wrap(from_fn(auth::require_api_key))
            .service(ledger.check(routes::track::time::list_time))
            .service(ledger.check(routes::track::time::create_time))
            .service(ledger.check(routes::track::time::get_time))
            .service(ledger.check(routes::track::time::update_time))
            .service(ledger.check(routes::track::time::delete_time)),
    )
    .service(
        scope("/v1/track/timer")
            .wrap(from_fn(idempotency::replay_retries))
            .wrap(from_fn(auth::require_api_key))
            .service(ledger.check(routes::track::timer::get_timer))
            .service(ledger.check(routes::track::timer::start_timer))
            .service(ledger.check(routes::track::timer::stop_timer))
            .service(ledger.check(routes::track::timer::discard_timer)),
    )
    .service(
        scope("/v1/track/reports")
            .wrap(from_fn(auth::require_api_key))
            .service(ledger.check(routes::track::reports::get_report)),
    )
    .service(
        scope("/v1/track/tags")
            .wrap(from_fn(idempotency::replay_retries))
            .wrap(from_fn(auth::require_api_key))
            .service(ledger.check(routes::track::tags::list_tags))
            .service(ledger.check(routes::track::tags::get_tag))
            .service(ledger.check(routes::track::tags::create_tag))
            .service(ledger.check(routes::track::tags::rename_tag))
            .service(ledger.check(routes::track::tags::delete_tag)),
    )
    .service(
        scope("/v1/track/projects")
            .wrap(from_fn(idempotency::replay_retries))
            .wrap(from_fn(auth::require_api_key))
            .service(ledger.check(routes::track::projects::list_projects))
            .service(ledger.check(routes::track::projects::get_project))
            .service(ledger.check(routes::track::projects::create_project))
            .service(ledger.check(routes::track::projects::update_project))
            .service(ledger.check(routes::track::projects::delete_project)),
    )
    .service(
        scope("/v1/track/sections")
            .wrap(from_fn(idempotency::replay_retries))
            .wrap(from_fn(auth::require_api_key))
            .service(ledger.check(routes::track::sections::list_sections))
            .service(ledger.check(routes::track::sections::get_section))
            .service(ledger.check(routes::track::sections::create_section))
            .service(ledger.check(routes::track::sections::update_section))
            .service(ledger.check(routes::track::sections::delete_section)),
    )
    .service(
        scope("/v1/agent/runs")
            .wrap(from_fn(idempotency::replay_retries))
            .wrap(from_fn(auth::require_api_key))
            .service(ledger.check(routes::agent::list_runs))
            .service(ledger.check(routes::agent::get_run)),
    )
    .service(
        scope("/v1/agent/deliveries")
            .wrap(from_fn(idempotency::replay_retries))
            .wrap(from_fn(auth::require_api_key))
            .service(ledger.check(routes::agent::list_deliveries)),
    )
}

/// The routes and their OpenAPI description, built by the same calls.
pub(crate) fn build<T>(app: UtoipaApp<T>) -> (App<T>, Value, Vec<String>)
where
    T: ServiceFactory<ServiceRequest, Config = (), Error = actix_web::Error, InitError = ()>,
{
    let ledger = Rc::new(SchemaLedger::default());
    let (app, doc) = register(app, &ledger).split_for_parts();
    let mut doc = serde_json::to_value(doc).unwrap_or_default();
    let two_faced = openapi::finish(&mut doc);
    let clashes = ledger.clashes().into_iter().chain(
        two_faced
            .into_iter()
            .map(|name| format!("{name} (a request may leave out what a response always holds)")),
    );
    (app, doc, clashes.collect())
}

/// The OpenAPI description, generated from the routes themselves.
pub fn openapi() -> Value {
    build(App::new().into_utoipa_app()).1
}

/// Component names that two different schemas claimed while the description was built
/// (each a type whose schema the description lost), and schemas that both a request and a
/// response reach while a request may leave some property out (the description marks
/// every property of a response required). Empty when the description is sound.
pub fn schema_name_clashes() -> Vec<String> {
    build(App::new().into_utoipa_app()).2
}

/// Every documented `(path, method)`.
pub fn documented_routes(doc: &Value) -> Vec<(String, Method)> {
    documented_operations(doc).into_iter().map(|(path, method, _)| (path, method)).collect()
}

/// Every documented `(path, method, names of its query parameters)`.
pub(crate) fn documented_operations(doc: &Value) -> Vec<(String, Method, Vec<String>)> {
    let Some(paths) = doc["paths"].as_object() else { return Vec::new() };
    paths
        .iter()
        .flat_map(|(path, item)| {
            openapi::METHODS.iter().filter_map(move |method| {
                let operation = item.get(*method)?;
                let parameters =
                    item["parameters"].as_array().into_iter().chain(operation["parameters"].as_array());
                let query = parameters
                    .flatten()
                    .filter(|parameter| parameter["in"] == "query")
                    .filter_map(|parameter| parameter["name"].as_str().map(str::to_owned))
                    .collect();
                let method = Method::from_bytes(method.to_uppercase().as_bytes()).ok()?;
                Some((path.clone(), method, query))
            })
        })
        .collect()
}
