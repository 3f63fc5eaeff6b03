//! The OpenAPI description. Each operation comes from its handler's annotation and its
//! request and response types; [`finish`] then adds what holds for many operations at
//! once, so that no handler can forget it: the key requirement of every keyed operation,
//! the headers responses carry, links from a create or a listing to what it holds, and that every
//! response field is present. [`SchemaLedger`] catches two types that claim one
//! component name, which would otherwise overwrite each other without a word.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::collections::btree_map::Entry;
use std::rc::Rc;

use actix_web::dev::{AppService, HttpServiceFactory};
use kernel::Words;
use serde_json::{Map, Value, json};
use utoipa::openapi::RefOr;
use utoipa::openapi::path::Paths;
use utoipa::openapi::schema::{AnyOfBuilder, KnownFormat, ObjectBuilder, Schema, SchemaFormat, Type};
use utoipa::{OpenApi, PartialSchema, ToSchema};
use utoipa_actix_web::OpenApiFactory;

/// Version of the API description.
pub const API_VERSION: &str = "2026.6.2";

/// The extension a route's operation carries when it needs no key under `/v1` (the PDF
/// links, whose unguessable id is the credential): `extensions(("x-billable-public" =
/// json!(true)))`. [`finish`] reads it and takes it out.
const PUBLIC: &str = "x-billable-public";

/// Name of the key's security scheme.
const KEY_SCHEME: &str = "api_key";

/// The HTTP methods an OpenAPI path item may hold operations under, lowercase.
pub(crate) const METHODS: [&str; 5] = ["get", "post", "put", "patch", "delete"];

#[derive(OpenApi)]
#[openapi(
    info(
        title = "billable",
        version = "2026.6.2",
        description = "Team-scoped REST API for clients, invoices and time tracking. Every `/v1` \
            endpoint but the invoice PDF needs an `X-API-Key` header; all data belongs to the key's \
            team, and another team's resources are reported as not found. Errors are \
            `{\"error\": \"...\"}`; a 400 names the offending field first. Requests are \
            rate-limited per key (429 with `Retry-After`), and keyed responses carry \
            `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`. Every response \
            carries `x-request-id`. `HEAD` is answered wherever `GET` is."
    ),
    // Schemas only query parameters refer to: parameters do not bring their schemas along.
    components(schemas(
        Frequency, Verdict, InstantInput, EventPattern, ReportGroupBy, PaymentMethod, MessageStatus, DeliveryStatus,
        EInvoiceFormat, PdfFormat
    )),
    tags(
        (name = "Clients", description = "Who invoices are billed to"),
        (name = "Invoices", description = "Invoices with line items and exact money; PDFs by public link"),
        (name = "Payments", description = "The books of each invoice: payments, refunds, write-offs and voids, \
            and what each client owes. Recording money needs `payments:write` (which `invoices:write` implies)"),
        (name = "Card payments", description = "A team's Stripe account, and the webhook Stripe books \
            card payments and refunds through"),
        (name = "Quotes", description = "What the work will cost, before the invoice: numbered in a series of \
            their own once sent, accepted or declined by the client on its page, and converted into invoices \
            (deposits, then the final invoice). Needs `quotes:read` or `quotes:write`, which `invoices:read` and \
            `invoices:write` imply"),
        (name = "Banking", description = "Bank statements (camt.053, camt.054, MT940, CSV) imported once, \
            and their transactions matched to open invoices by payment reference or serial, or booked by hand. \
            Needs `banking:read` or `banking:write`"),
        (name = "Credit notes", description = "Corrections of issued invoices, in a numbered series of their own; \
            never changed or deleted; PDFs by public link"),
        (name = "Recurring invoices", description = "Invoices that bill themselves once per period \
            (retainers, hosting, maintenance): a template, a schedule of RFC 5545 days, and optionally \
            the period's unbilled time; made by the job pass, once per period across replicas"),
        (name = "Messages", description = "E-mail: invoices, reminders and credit notes sent to clients \
            through the server's SMTP server, queued and retried, with a log of each message"),
        (name = "Reminders", description = "The team's payment reminders: on which days around the due date, \
            and what they say"),
        (name = "Webhooks", description = "Endpoints that receive the team's events, signed per Standard \
            Webhooks, with their deliveries. Needs `webhooks:read` or `webhooks:write`"),
        (name = "Time entries", description = "Time spent on tasks. Members log and see their own; owners and \
            admins log and see anyone's in the team"),
        (name = "Timer", description = "The key user's running timer: started, stopped into a time entry, \
            or discarded; one per user"),
        (name = "Tags", description = "Labels on time entries"),
        (name = "Projects", description = "What time is logged against"),
        (name = "Sections", description = "Parts of a project"),
        (name = "Reports", description = "Where tracked time went: summed per project, task, user, tag or day"),
        (name = "Agent runs", description = "The agent runtime's run history: every call of its triggers, \
            with status, steps and tokens; and the repository trigger's delivery log: every verified \
            delivery with its verdict and what became of it. Needs `agent:read`"),
        (name = "Team", description = "The team itself: its name, and its currency until its first invoice. \
            Owners and admins change it"),
        (name = "Operations", description = "Health and metrics"),
    )
)]
pub(crate) struct ApiDoc;

/// A component schema for each domain enum that requests and responses carry as a word:
/// its `enum` is the domain type's own list ([`Words::ALL`]), the one that parses it.
macro_rules! word_schemas {
    ($($(#[doc = $doc:literal])+ $name:ident => $words:ty;)+) => {$(
        $(#[doc = $doc])+
        #[derive(Debug)]
        pub(crate) struct $name;

        impl PartialSchema for $name {
            fn schema() -> RefOr<Schema> {
                words_schema::<$words>(&[$($doc),+])
            }
        }

        impl ToSchema for $name {}
    )+};
}

word_schemas! {
    /// An invoice's status, which follows its books: nothing recorded, `PENDING`
    /// (`OVERDUE` past its `dueDate`); paid in part, `PAID_PARTIAL`; nothing left due by
    /// payment, `PAID`; written off or credited in full, `EXPIRED`.
    InvoiceStatus => billing::InvoiceStatus;
    /// A quote's status: `DRAFT` until numbered, `SENT` before its client (`EXPIRED` past
    /// its `validUntil`, undecided), then `ACCEPTED` or `DECLINED`, and `CONVERTED` once its
    /// full or final invoice is made.
    QuoteStatus => billing::quote::QuoteStatus;
    /// A bank statement file's format.
    StatementFormat => billing::banking::StatementFormat;
    /// Where a bank transaction stands: `unmatched` (money in nothing settled),
    /// `suggested` (one open invoice probably is for it; waits for a person), `matched`
    /// (booked as payments), `ignored` (money out).
    TransactionStatus => billing::banking::TransactionStatus;
    /// What matching did (or would do) with a transaction: `book` (payments made as its
    /// allocations say) or `suggest` (the invoice it probably pays, booked by nobody until
    /// confirmed).
    Placement => billing::banking::Placement;
    /// What a ledger entry records: money received, money given back, or what is due
    /// forgiven.
    EntryKind => billing::ledger::EntryKind;
    /// How a payment was made.
    PaymentMethod => billing::ledger::PaymentMethod;
    /// A project's status. `ACTIVE` when created; no time can be logged on an `ARCHIVED` project.
    ProjectStatus => tracking::ProjectStatus;
    /// The period a time listing covers around its date, in UTC: the day, the ISO week
    /// (Monday to Sunday) or the calendar month.
    Frequency => tracking::Frequency;
    /// What makes one line of billed time: a `project`, a `task` name (and rate), or each
    /// `entry`.
    GroupBy => tracking::invoicing::GroupBy;
    /// Which way an entry's duration goes to a whole step: `nearest` takes a halfway
    /// duration up.
    RoundingMode => tracking::invoicing::RoundingMode;
    /// What a report's groups are: projects, task names, users, tags (an entry with two
    /// counts under both) or UTC days.
    ReportGroupBy => tracking::ReportGroupBy;
    /// How a run ended: `rejected` when its conversation's queue was full.
    RunStatus => triggers::RunStatus;
    /// The trigger that started a run.
    TriggerKind => triggers::TriggerKind;
    /// What the repository trigger made of a verified delivery: `ignored` for a ping or an
    /// event its filter leaves out, `duplicate` for one accepted before.
    Verdict => triggers::Verdict;
    /// Where an accepted delivery stands.
    DeliveryState => triggers::DeliveryState;
    /// What a message is about: the invoice itself, a reminder of it, a credit note, or a quote.
    MessageKind => notify::MessageKind;
    /// Where a message stands: `queued` (waiting for its next attempt), `sending`, `sent`
    /// (the SMTP server took it), `failed` (refused for good, or every attempt failed).
    MessageStatus => notify::MessageStatus;
    /// Where a webhook delivery stands: `pending` (waiting for its next attempt),
    /// `succeeded` (a 2xx answer), `failed` (every attempt failed, the receiver answered 410,
    /// or the endpoint was disabled).
    DeliveryStatus => notify::DeliveryStatus;
    /// An event's type.
    EventType => notify::EventType;
    /// How often a recurring invoice bills: every `interval`-th week, month or year.
    RecurringFrequency => recurring::Frequency;
    /// A day of the week.
    Weekday => recurring::Weekday;
    /// What each period of a recurring invoice does: `issue` makes the invoice;
    /// `issue_and_send` e-mails it too.
    RecurringMode => recurring::Mode;
    /// Where a recurring invoice stands: `active`, `paused` or `completed` (its schedule has
    /// no day left).
    RecurringStatus => recurring::RecurringStatus;
    /// What became of a period of a recurring invoice.
    RecurringRunStatus => recurring::RunStatus;
    /// An invoice's VAT category (EN 16931 BT-151, UNTDID 5305): `S` standard, `Z` zero
    /// rated, `E` exempt, `AE` reverse charge, `K` intra-community, `G` export, `O`
    /// outside the scope of VAT.
    VatCategory => billing::VatCategory;
}

fn words_schema<W: Words>(doc_lines: &[&str]) -> RefOr<Schema> {
    let description = doc_lines.iter().map(|line| line.trim()).collect::<Vec<_>>().join(" ");
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(W::ALL.iter().map(|value| value.as_str())))
        .description(Some(description))
        .into()
}

/// An instant on input: an RFC 3339 datetime with an offset, or a date `YYYY-MM-DD`,
/// which means 00:00 UTC that day.
#[derive(Debug)]
pub(crate) struct InstantInput;

impl PartialSchema for InstantInput {
    fn schema() -> RefOr<Schema> {
        let string = |format| {
            ObjectBuilder::new().schema_type(Type::String).format(Some(SchemaFormat::KnownFormat(format)))
        };
        AnyOfBuilder::new()
            .item(string(KnownFormat::DateTime).examples(["2026-11-20T09:30:00Z"]))
            .item(string(KnownFormat::Date).examples(["2026-11-20"]))
            .description(Some(
                "An RFC 3339 datetime with an offset, or a date `YYYY-MM-DD` (00:00 UTC that day).",
            ))
            .into()
    }
}

impl ToSchema for InstantInput {}

/// What a webhook subscription names: an event type, a family (`payment.*`), or `*`.
#[derive(Debug)]
pub(crate) struct EventPattern;

impl PartialSchema for EventPattern {
    fn schema() -> RefOr<Schema> {
        let mut families: Vec<String> =
            notify::EventType::subscribable().map(|kind| format!("{}.*", kind.family().as_str())).collect();
        families.dedup();
        let words = std::iter::once("*".to_owned())
            .chain(families)
            .chain(notify::EventType::subscribable().map(|kind| kind.as_str().to_owned()));
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(words))
            .description(Some(
                "Every event (`*`), a family of them (`payment.*`), or one type (GET /v1/webhooks/event-types).",
            ))
            .into()
    }
}

impl ToSchema for EventPattern {}

/// A file's bytes, as a response body.
#[derive(Debug)]
pub(crate) struct Binary;

impl PartialSchema for Binary {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Binary)))
            .into()
    }
}

impl ToSchema for Binary {}

/// Every component schema the handlers bring, by name, and the names two different
/// schemas claimed.
#[derive(Debug, Default)]
pub(crate) struct SchemaLedger {
    seen: RefCell<BTreeMap<String, Value>>,
    clashes: RefCell<Vec<String>>,
}

impl SchemaLedger {
    /// `handler`, registered as it is, with its schemas recorded here as the description
    /// collects them.
    pub(crate) fn check<F>(self: &Rc<Self>, handler: F) -> Checked<F> {
        Checked { handler, ledger: Rc::clone(self) }
    }

    /// Names that two different schemas claimed: one of them is missing from the description.
    pub(crate) fn clashes(&self) -> Vec<String> {
        self.clashes.borrow().clone()
    }

    fn record(&self, schemas: &[(String, RefOr<Schema>)]) {
        let mut seen = self.seen.borrow_mut();
        for (name, schema) in schemas {
            let schema = serde_json::to_value(schema).unwrap_or_default();
            match seen.entry(name.clone()) {
                Entry::Vacant(entry) => {
                    entry.insert(schema);
                }
                Entry::Occupied(entry) if *entry.get() != schema => {
                    self.clashes.borrow_mut().push(name.clone());
                }
                Entry::Occupied(_) => {}
            }
        }
    }
}

/// A handler whose schemas a [`SchemaLedger`] records.
pub(crate) struct Checked<F> {
    handler: F,
    ledger: Rc<SchemaLedger>,
}

impl<F: HttpServiceFactory> HttpServiceFactory for Checked<F> {
    fn register(self, config: &mut AppService) {
        self.handler.register(config);
    }
}

impl<F: OpenApiFactory> OpenApiFactory for Checked<F> {
    fn paths(&self) -> Paths {
        self.handler.paths()
    }

    fn schemas(&self, schemas: &mut Vec<(String, RefOr<Schema>)>) {
        let first = schemas.len();
        self.handler.schemas(schemas);
        self.ledger.record(&schemas[first..]);
    }
}

/// The Model Context Protocol endpoint.
pub(crate) const MCP_PATH: &str = "/mcp";

/// Whether the operation at `path` needs a key: `/mcp`, and every `/v1` one its route does
/// not mark [`PUBLIC`] (the mark is taken out).
fn needs_key(path: &str, operation: &mut Value) -> bool {
    let public = operation.as_object_mut().and_then(|operation| operation.remove(PUBLIC)).is_some();
    path == MCP_PATH || (path.starts_with("/v1/") && !public)
}

/// Adds to the generated description what holds across operations, and answers the
/// schemas it found two-faced ([`require_response_fields`]).
pub(crate) fn finish(doc: &mut Value) -> Vec<String> {
    declare_key_scheme(doc);
    declare_mcp(doc);
    for (path, item) in paths_mut(doc) {
        let methods = item.as_object_mut().into_iter().flat_map(|item| item.iter_mut());
        for (method, operation) in methods.filter(|(method, _)| METHODS.contains(&method.as_str())) {
            let keyed = needs_key(path, operation);
            if keyed {
                operation["security"] = json!([{ KEY_SCHEME: [] }]);
            }
            if let Some(responses) = operation.get_mut("responses").and_then(Value::as_object_mut) {
                for (status, response) in responses {
                    declare_headers(response, status, keyed);
                }
            }
            // `/mcp` takes no Idempotency-Key: a tool call is one JSON-RPC message with its own id.
            if keyed && path != MCP_PATH && method != "get" {
                declare_idempotency(operation);
            }
        }
    }
    exemplify_parameters(doc);
    link_collections(doc);
    let two_faced = require_response_fields(doc);
    optional_bodies(doc);
    two_faced
}

/// The request bodies an operation takes through `OptionalJson`: a request may leave them
/// out. utoipa marks every request body required.
const OPTIONAL_BODIES: [&str; 4] = ["SendInput", "RemindInput", "RotateInput", "MatchInput"];

fn optional_bodies(doc: &mut Value) {
    for (_, item) in paths_mut(doc) {
        for operation in operations_mut(item) {
            let Some(body) = operation.get_mut("requestBody") else { continue };
            let schema = &body["content"]["application/json"]["schema"]["$ref"];
            let optional = schema
                .as_str()
                .and_then(|r| r.strip_prefix("#/components/schemas/"))
                .is_some_and(|name| OPTIONAL_BODIES.contains(&name));
            if optional {
                body["required"] = json!(false);
            }
        }
    }
}

/// The id the examples use: shaped like a real one, and nobody's.
pub(crate) const EXAMPLE_ID: &str = "0193d2c4-5f6a-7b8c-9d0e-1f2a3b4c5d6e";

/// A realistic value of a query or path parameter that means the same wherever it is
/// taken, by name. A parameter whose meaning is its route's (`q`, `status`, `format`) has
/// its example at the route.
fn parameter_example(name: &str) -> Option<Value> {
    Some(match name {
        "id" | "clientId" | "projectId" | "sectionId" | "tagId" | "userId" | "invoiceId" | "quoteId"
        | "deliveryId" => {
            json!(EXAMPLE_ID)
        }
        "limit" => json!(50),
        // The cursor a listing of clients gives after "Acme GmbH": opaque to clients.
        "cursor" => json!("WyJhY21lIGdtYmgiLCIwMTkzZDJjNC01ZjZhLTdiOGMtOWQwZS0xZjJhM2I0YzVkNmUiXQ"),
        "date" => json!("2026-11-20"),
        "frequency" => json!("week"),
        "from" | "issuedFrom" | "paidFrom" => json!("2026-11-01"),
        "to" | "issuedTo" | "paidTo" | "asOf" => json!("2026-11-30"),
        "method" => json!("bank_transfer"),
        "groupBy" => json!("project"),
        "download" => json!(true),
        "conversationId" => json!("github:octo-org/hello-world#42"),
        "verdict" => json!("accepted"),
        "count" => json!(12),
        // Optional, so shown and never filled in: one key sent with every write would
        // replay the first answer.
        "Idempotency-Key" => json!("payment-2026-11-20-7f3a"),
        _ => return None,
    })
}

/// Gives every query and path parameter an example: its route's, else its name's
/// ([`parameter_example`]). A required one gets `example`, which
/// the reference fills in for "Try it out"; an optional one gets its schema's `examples`,
/// which the reference shows without filling in, so that a first "Execute" is not narrowed
/// (or refused: `date` with `from`) by filters the reader did not choose. An example id
/// is nobody's: the parameter says so. `Idempotency-Key`, optional, is shown the same way:
/// filled in, one example sent with every write would replay the first answer.
fn exemplify_parameters(doc: &mut Value) {
    for (_, item) in paths_mut(doc) {
        for operation in operations_mut(item) {
            let parameters = operation.get_mut("parameters").and_then(Value::as_array_mut);
            for parameter in parameters.into_iter().flatten() {
                let Some(name) = parameter["name"].as_str().map(str::to_owned) else { continue };
                let routes_own = parameter.as_object_mut().and_then(|p| p.remove("example"));
                let Some(example) = routes_own.or_else(|| parameter_example(&name)) else { continue };
                if example == json!(EXAMPLE_ID) {
                    let said = parameter["description"].as_str().unwrap_or_default().trim_end().to_owned();
                    let note = "The example is nobody's id: use one from a listing or a create.";
                    parameter["description"] =
                        json!(if said.is_empty() { note.to_owned() } else { format!("{said} {note}") });
                }
                if parameter["required"] == true {
                    parameter["example"] = example;
                } else {
                    parameter["schema"]["examples"] = json!([example]);
                }
            }
        }
    }
}

/// `/mcp`, the Model Context Protocol endpoint: one JSON-RPC message a request, over MCP's
/// streamable HTTP transport (answers are JSON, never an event stream).
fn declare_mcp(doc: &mut Value) {
    let jsonrpc = json!({"type": "string", "enum": ["2.0"]});
    let id =
        json!({"type": ["string", "integer"], "description": "Echoed in the answer; MCP forbids `null`."});
    let rpc = json!({
        "description": "One JSON-RPC 2.0 message: a request (`method` and `id`), a notification \
            (`method`, no `id`), or a response (an `id` with `result` or `error`), which is accepted \
            and dropped: this server sends no requests.",
        "anyOf": [
            {
                "type": "object",
                "properties": {
                    "jsonrpc": jsonrpc,
                    "id": id,
                    "method": {"type": "string", "description": "`initialize`, `ping`, `tools/list`, `tools/call`, or a notification such as `notifications/initialized`."},
                    "params": {"type": "object", "description": "`tools/call`: `{\"name\": …, \"arguments\": {…}}`."},
                },
                "required": ["jsonrpc", "method"],
            },
            {"type": "object", "properties": {"jsonrpc": jsonrpc, "id": id, "result": {}}, "required": ["jsonrpc", "id", "result"]},
            {"type": "object", "properties": {"jsonrpc": jsonrpc, "id": id, "error": {"type": "object"}}, "required": ["jsonrpc", "id", "error"]},
        ],
        "example": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
    });
    let answer = json!({
        "type": "object",
        "description": "The JSON-RPC answer: `result`, or `error` (`-32601` an unknown method, `-32602` bad params).",
        "properties": {
            "jsonrpc": {"type": "string", "enum": ["2.0"]},
            "id": {"type": ["string", "integer", "null"]},
            "result": {"type": "object"},
            "error": {
                "type": "object",
                "properties": {"code": {"type": "integer"}, "message": {"type": "string"}},
                "required": ["code", "message"],
            },
        },
        "required": ["jsonrpc", "id"],
    });
    let json_of = |schema: &Value| json!({"application/json": {"schema": schema}});
    let error = json!({"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}});
    doc["paths"][MCP_PATH] = json!({"post": {
        "tags": ["MCP"],
        "summary": "Call the built-in tools over MCP",
        "description": "The Model Context Protocol's streamable HTTP transport: each request is one JSON-RPC \
            message; `tools/list` names the tools the key's scopes allow (those of the agent: clients, \
            invoices, time, reports), and `tools/call` runs one with the REST API's body as its \
            `arguments`. The key goes in `X-API-Key` or `Authorization: Bearer`. A browser's request \
            must come from an origin listed in `BILLABLE_MCP_ALLOWED_ORIGINS` (403 otherwise): the \
            reference's own included. See docs/api.md, \"MCP\".",
        "operationId": "mcp",
        "requestBody": {"required": true, "content": json_of(&rpc)},
        "responses": {
            "200": {"description": "The answer to a request (a JSON-RPC error too is a 200).", "content": json_of(&answer)},
            "202": {"description": "A notification or a response: accepted, no body."},
            "400": {"description": "Not one JSON-RPC 2.0 message as MCP takes them (a batch, malformed JSON, an `id` \
                that is neither a string nor an integer, `params` that are not an object).", "content": json_of(&answer)},
            "401": {"description": "Missing or invalid key.", "content": error},
            "403": {"description": "A browser origin that is not allowed.", "content": error},
            "405": {"description": "Not a POST (no server-sent event stream is offered).", "content": error},
            "429": {"description": "Rate limit exceeded.", "content": error},
        },
    }});
    if let Some(tags) = doc["tags"].as_array_mut() {
        tags.push(json!({"name": "MCP", "description": "The agent's tools for any MCP client: Claude, IDEs, the MCP SDKs"}));
    }
}

/// The `Idempotency-Key` header of a keyed write, and the answers it adds.
fn declare_idempotency(operation: &mut Value) {
    let parameter = json!({
        "name": "Idempotency-Key",
        "in": "header",
        "required": false,
        "description": "Makes a retry safe: the first request with a key is carried out and its \
            answer kept (24 h by default, per team); a retry with the same key, method, path, body \
            and API key gets that answer again, with `Idempotent-Replayed: true`, and changes \
            nothing. The same key for another request is 422; while the first is still running, 409.",
        "schema": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[!-~]+$"},
    });
    let parameters = operation.as_object_mut().map(|o| o.entry("parameters").or_insert_with(|| json!([])));
    if let Some(parameters) = parameters.and_then(Value::as_array_mut) {
        parameters.push(parameter);
    }
    let Some(responses) = operation.get_mut("responses").and_then(Value::as_object_mut) else { return };
    let error = json!({"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}});
    for (status, description) in [
        ("400", "A malformed `Idempotency-Key`."),
        ("409", "A request with this `Idempotency-Key` is still being processed; retry after `Retry-After`."),
        ("422", "This `Idempotency-Key` was used for a different request."),
    ] {
        let response = match responses.entry(status) {
            serde_json::map::Entry::Vacant(vacant) => {
                vacant.insert(json!({"description": description, "content": error, "headers": {}}))
            }
            serde_json::map::Entry::Occupied(occupied) => {
                let response = occupied.into_mut();
                let both = format!("{} {description}", response["description"].as_str().unwrap_or_default());
                response["description"] = json!(both);
                response
            }
        };
        response["headers"]["Retry-After"] = json!({
            "description": "Whole seconds to wait before a retry (sent while the key is in flight).",
            "required": false,
            "schema": {"type": "integer", "minimum": 0},
        });
    }
    for (status, response) in responses.iter_mut() {
        if status.starts_with('2') {
            response["headers"]["Idempotent-Replayed"] = json!({
                "description": "`true` when this is the kept answer of an earlier request with the same `Idempotency-Key`.",
                "required": false,
                "schema": {"type": "string", "enum": ["true"]},
            });
        }
    }
}

fn declare_key_scheme(doc: &mut Value) {
    doc["components"]["securitySchemes"][KEY_SCHEME] = json!({
        "type": "apiKey",
        "in": "header",
        "name": "X-API-Key",
        "description": "A key made by `billable keys create` (or printed at first start).",
    });
}

fn paths_mut(doc: &mut Value) -> impl Iterator<Item = (&String, &mut Value)> {
    doc.get_mut("paths").and_then(Value::as_object_mut).into_iter().flat_map(|paths| paths.iter_mut())
}

fn operations_mut(item: &mut Value) -> impl Iterator<Item = &mut Value> {
    item.as_object_mut()
        .into_iter()
        .flat_map(|item| item.iter_mut())
        .filter(|(method, _)| METHODS.contains(&method.as_str()))
        .map(|(_, operation)| operation)
}

/// The headers a response carries: `x-request-id` always; the key's `RateLimit-*` on a
/// keyed operation once the key is known (every status but 401). Headers a handler
/// declared (`Location`, `Retry-After`, `Content-Disposition`) are always sent with their
/// status, except on a server error, where nothing is promised.
fn declare_headers(response: &mut Value, status: &str, keyed: bool) {
    let promised = !status.starts_with('5');
    let headers = response.as_object_mut().map(|r| r.entry("headers").or_insert_with(|| json!({})));
    let Some(headers) = headers.and_then(Value::as_object_mut) else { return };
    for (name, header) in headers.iter_mut() {
        // `Link` comes only on a page with more after it.
        header["required"] = json!(promised && name != "Link");
    }
    headers.insert(
        "x-request-id".to_owned(),
        json!({
            "description": "The request's id: the one the caller sent when usable (1 to 128 visible \
                ASCII characters), else a new one. Logged with the request.",
            "required": true,
            "schema": {"type": "string"},
        }),
    );
    if keyed && status != "401" {
        for (name, description) in [
            ("RateLimit-Limit", "The key's burst: how many requests it may make at once."),
            ("RateLimit-Remaining", "How many requests the key may make now."),
            ("RateLimit-Reset", "Whole seconds until the key's allowance is full again."),
        ] {
            headers.insert(
                name.to_owned(),
                json!({
                    "description": description,
                    "required": promised,
                    "schema": {"type": "integer", "minimum": 0},
                }),
            );
        }
    }
}

/// What a response answers: the component its JSON schema names, seen through an
/// extension (`allOf` with a component first: billed time's answer is an invoice), and
/// whether it is a list of them.
fn answers(doc: &Value, response: &Value) -> Option<(String, bool)> {
    let schema = &response["content"]["application/json"]["schema"];
    let (schema, many) = if schema["type"] == "array" { (&schema["items"], true) } else { (schema, false) };
    let mut name = schema["$ref"].as_str()?.strip_prefix("#/components/schemas/")?;
    while let Some(base) = doc["components"]["schemas"][name]["allOf"][0]["$ref"].as_str() {
        name = base.strip_prefix("#/components/schemas/")?;
    }
    Some((name.to_owned(), many))
}

/// Links to the operations on one resource of a collection (every operation under the
/// collection's path that takes an `id`, unless a nearer collection holds it): from its
/// create's 201, on the new resource's id, and from its listing's 200, on the first one's.
fn link_collections(doc: &mut Value) {
    let Some(paths) = doc.get("paths").and_then(Value::as_object) else { return };
    // (collection, where the response is, method, status, pointer to the id)
    let mut sources: Vec<(String, String, &str, &str, &str)> = paths
        .iter()
        .flat_map(|(path, item)| {
            let create = item["post"]["responses"]
                .get("201")
                .map(|_| (path.clone(), path.clone(), "post", "201", "/id"));
            // A listing under a resource (`/v1/webhooks/{id}/deliveries`) holds items whose
            // own id is not the `id` of the paths below it.
            let list = (item["get"]["responses"]["200"]["content"]["application/json"]["schema"]["type"]
                == "array"
                && !path.contains('{'))
            .then(|| (path.clone(), path.clone(), "get", "200", "/0/id"));
            create.into_iter().chain(list)
        })
        .collect();
    // A create whose 201 answers what another collection lists (a stopped timer is a time
    // entry, a payment of an invoice is in `/v1/payments`) links to that collection's
    // operations; one whose 201 answers what a path without an id shows alone (the running
    // timer) links to every operation there.
    let listed: BTreeMap<String, &String> = paths
        .iter()
        .filter(|(path, _)| !path.contains('{'))
        .filter_map(|(path, item)| match answers(doc, &item["get"]["responses"]["200"])? {
            (kind, true) => Some((kind, path)),
            (_, false) => None,
        })
        .collect();
    let mut singletons = Vec::new();
    for (create, item) in paths {
        let Some((kind, false)) = answers(doc, &item["post"]["responses"]["201"]) else { continue };
        if let Some(collection) = listed.get(&kind).filter(|collection| **collection != create) {
            sources.push(((*collection).clone(), create.clone(), "post", "201", "/id"));
        }
        let alone = paths.iter().find(|(path, shown)| {
            *path != create
                && !path.contains('{')
                && answers(doc, &shown["get"]["responses"]["200"])
                    .is_some_and(|(shown, many)| !many && shown == kind)
        });
        if let Some((singleton, _)) = alone {
            singletons.push((create.clone(), singleton.clone()));
        }
    }
    let collection_of = |path: &str| {
        sources.iter().map(|(c, ..)| c).filter(|c| path.starts_with(&format!("{c}/"))).max_by_key(|c| c.len())
    };
    let mut targets: BTreeMap<&String, Vec<(String, &str, &String)>> = BTreeMap::new();
    for (path, item) in paths {
        let Some(collection) = collection_of(path) else { continue };
        for method in METHODS {
            let operation = &item[method];
            let takes_id = operation["parameters"]
                .as_array()
                .is_some_and(|params| params.iter().any(|p| p["name"] == "id" && p["required"] == true));
            if let Some(operation_id) = operation["operationId"].as_str().filter(|_| takes_id) {
                targets.entry(collection).or_default().push((operation_id.to_owned(), method, path));
            }
        }
    }
    let mut links = Vec::new();
    for (collection, at, method, status, pointer) in &sources {
        let Some(targets) = targets.get(collection) else { continue };
        let response_links: Map<String, Value> = targets
            .iter()
            .map(|(operation_id, target_method, target_path)| {
                let link = json!({
                    "operationId": operation_id,
                    "parameters": {"id": format!("$response.body#{pointer}")},
                    "description": format!("`{} {target_path}` on `{pointer}` of this response.", target_method.to_uppercase()),
                });
                (operation_id.clone(), link)
            })
            .collect();
        links.push((at.clone(), *method, *status, response_links));
    }
    for (create, singleton) in singletons {
        let response_links: Map<String, Value> = METHODS
            .iter()
            .filter_map(|method| {
                let operation_id = paths.get(&singleton)?[method]["operationId"].as_str()?.to_owned();
                let description =
                    format!("`{} {singleton}`: what this response started.", method.to_uppercase());
                Some((operation_id.clone(), json!({"operationId": operation_id, "description": description})))
            })
            .collect();
        if !response_links.is_empty() {
            links.push((create, "post", "201", response_links));
        }
    }
    for (at, method, status, response_links) in links {
        doc["paths"][&at][method]["responses"][status]["links"] = Value::Object(response_links);
    }
}

/// Every field of a response is always present (`null` where it has no value), so every
/// property of every schema a response reaches is required. Answers the schemas a request
/// body reaches too while it may leave some property out: one schema cannot say both, so
/// each of them needs a response type of its own.
fn require_response_fields(doc: &mut Value) -> Vec<String> {
    let reached_by = |part: &str| {
        let mut pending: Vec<String> = Vec::new();
        for item in doc["paths"].as_object().into_iter().flat_map(|p| p.values()) {
            for method in METHODS {
                collect_refs(&item[method][part], &mut pending);
            }
        }
        let mut reached: Vec<String> = Vec::new();
        while let Some(name) = pending.pop() {
            if !reached.contains(&name) {
                collect_refs(&doc["components"]["schemas"][&name], &mut pending);
                reached.push(name);
            }
        }
        reached
    };
    let requested = reached_by("requestBody");
    let mut two_faced = Vec::new();
    for name in reached_by("responses") {
        let schema = &mut doc["components"]["schemas"][&name];
        let Some(properties) = schema.get("properties").and_then(Value::as_object) else { continue };
        let required: Vec<Value> = properties.keys().map(|key| json!(key)).collect();
        let optional_before = schema["required"].as_array().map_or(0, Vec::len) < required.len();
        if optional_before && requested.contains(&name) {
            two_faced.push(name);
        }
        schema["required"] = Value::Array(required);
    }
    two_faced
}

/// The names of the component schemas `value` refers to, anywhere inside it.
pub(crate) fn collect_refs(value: &Value, names: &mut Vec<String>) {
    match value {
        Value::Object(object) => {
            if let Some(name) = object
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix("#/components/schemas/"))
            {
                names.push(name.to_owned());
            }
            object.values().for_each(|v| collect_refs(v, names));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_refs(v, names)),
        _ => {}
    }
}

/// An e-invoice format, as the description shows it: [`billing::einvoice::Format`]'s names.
#[derive(Debug)]
pub(crate) struct EInvoiceFormat;

impl PartialSchema for EInvoiceFormat {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(
                <billing::einvoice::Format as kernel::Words>::ALL.iter().map(|format| format.as_str()),
            ))
            .description(Some(
                "`xrechnung-ubl` (XRechnung 3.0, UBL 2.1), `xrechnung-cii` (XRechnung 3.0, CII D16B) or \
                 `facturx` (Factur-X / ZUGFeRD, EN 16931 profile).",
            ))
            .into()
    }
}

impl ToSchema for EInvoiceFormat {}

/// The one format a PDF link takes besides the plain PDF: the e-invoice format a PDF
/// carries.
#[derive(Debug)]
pub(crate) struct PdfFormat;

impl utoipa::PartialSchema for PdfFormat {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        let all = <billing::einvoice::Format as kernel::Words>::ALL.iter().copied();
        let carried = all.filter(|format| format.travels_in_pdf()).map(billing::einvoice::Format::as_str);
        utoipa::openapi::schema::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .enum_values(Some(carried))
            .into()
    }
}

impl utoipa::ToSchema for PdfFormat {}

#[cfg(test)]
mod tests {
    use utoipa::openapi::RefOr;
    use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};

    use serde_json::json;

    use super::{SchemaLedger, require_response_fields};

    #[test]
    fn the_ledger_reports_two_schemas_under_one_name() {
        let text: RefOr<Schema> = ObjectBuilder::new().schema_type(Type::String).into();
        let number: RefOr<Schema> = ObjectBuilder::new().schema_type(Type::Integer).into();
        let ledger = SchemaLedger::default();
        ledger.record(&[("Same".into(), text.clone()), ("Other".into(), number.clone())]);
        ledger.record(&[("Same".into(), text)]);
        assert!(ledger.clashes().is_empty(), "the same schema twice is no clash");
        ledger.record(&[("Same".into(), number)]);
        assert_eq!(ledger.clashes(), ["Same"]);
    }

    #[test]
    fn a_schema_a_request_may_leave_short_is_no_response_schema() {
        let body = |name: &str| json!({"content": {"application/json": {"schema": {"$ref": format!("#/components/schemas/{name}")}}}});
        let mut doc = json!({
            "paths": {"/v1/things": {"put": {"requestBody": body("Both"), "responses": {"200": body("Both")}},
                                    "post": {"requestBody": body("Input"), "responses": {"201": body("Thing")}}}},
            "components": {"schemas": {
                "Both": {"type": "object", "properties": {"a": {}, "b": {}}, "required": ["a"]},
                "Input": {"type": "object", "properties": {"a": {}, "b": {}}, "required": ["a"]},
                "Thing": {"type": "object", "properties": {"a": {}, "b": {}}, "required": ["a"]},
            }},
        });
        assert_eq!(require_response_fields(&mut doc), ["Both"]);
        assert_eq!(doc["components"]["schemas"]["Thing"]["required"], json!(["a", "b"]));
        assert_eq!(doc["components"]["schemas"]["Input"]["required"], json!(["a"]));
    }
}
