//! The built-in tools: the REST API's operations, called in process by the agent (and by
//! MCP clients) as a caller holding a restricted key would call them over HTTP.
//!
//! A tool's arguments are the operation's request body with its path and query
//! parameters beside the body's fields (`id` for one resource), under the API's JSON names;
//! its JSON Schema is cut from the OpenAPI description, so the two never drift. Its result
//! is the operation's response body. It runs the same code as the handler, so every rule,
//! 400 message and 404 holds; a refusal comes back as the API's error text.

pub(crate) mod mcp;

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};

use accounts::{Permission, Principal, Scope};
use actix_web::http::StatusCode;
use async_trait::async_trait;
use kernel::Id;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use triggers::{Tool, ToolRegistry, ToolSpec};

use crate::conventions::error::ApiError;
use crate::rest::collection;
use crate::rest::paging::{self, Page};
use crate::rest::routes::track::{projects, reports, sections, tags, time};
use crate::rest::routes::{
    banking, billed_time, cards, clients, credit_notes, einvoices, invoices, messages, payments, quotes,
    recurring, vat_report,
};
use crate::rest::state::ApiState;

/// A built-in tool: its name (part of the agent definition's contract), the permissions it
/// needs, the operation of the OpenAPI description it is cut from, and the call of that
/// operation's code.
pub struct BuiltinTool {
    pub name: &'static str,
    /// All of them (one, but for billing time, which reads time and writes an invoice).
    pub permissions: &'static [Permission],
    method: &'static str,
    path: &'static str,
    call: Operation,
}

impl std::fmt::Debug for BuiltinTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BuiltinTool").field("name", &self.name).finish_non_exhaustive()
    }
}

impl BuiltinTool {
    /// The first permission the tool needs that `granted` does not say yes to; `None` when
    /// it may be called.
    pub fn lacking(&self, granted: impl Fn(Permission) -> bool) -> Option<Permission> {
        self.permissions.iter().copied().find(|permission| !granted(*permission))
    }
}

/// A tool's arguments: `id` (where the operation's path has one), and the rest, read as
/// the operation's body or query.
struct Arguments {
    id: Option<Value>,
    rest: Map<String, Value>,
}

type Call<'a> = Pin<Box<dyn Future<Output = Result<Value, ApiError>> + Send + 'a>>;
type Operation = for<'a> fn(&'a ApiState, &'a Principal, Arguments) -> Call<'a>;

const fn tool(
    name: &'static str,
    permissions: &'static [Permission],
    (method, path): (&'static str, &'static str),
    call: Operation,
) -> BuiltinTool {
    BuiltinTool { name, permissions, method, path, call }
}

use Permission::{
    BankingRead, BankingWrite, ClientsRead, ClientsWrite, InvoicesRead, InvoicesWrite, PaymentsWrite,
    QuotesRead, QuotesWrite, TrackRead, TrackWrite,
};

/// Every built-in tool, one row each: adding a tool is adding a row.
pub static CATALOGUE: [BuiltinTool; 41] = [
    tool("list_clients", &[ClientsRead], ("get", "/v1/invoices/clients"), |state, who, a| {
        paged(collection::page::<clients::Clients>(state, who, a.rest))
    }),
    tool("get_client", &[ClientsRead], ("get", "/v1/invoices/clients/{id}"), |state, who, a| {
        answer(async move { clients::get(state, who, &id_of(a.id)?).await })
    }),
    tool("client_credit", &[ClientsRead], ("get", "/v1/invoices/clients/{id}/credit"), |state, who, a| {
        answer(async move { cards::credit(state, who, &id_of(a.id)?).await })
    }),
    tool("create_client", &[ClientsWrite], ("post", "/v1/invoices/clients"), |state, who, a| {
        answer(async move { clients::create(state, who, body(a.rest)?).await })
    }),
    tool("list_invoices", &[InvoicesRead], ("get", "/v1/invoices"), |state, who, a| {
        paged(invoices::list(state, who, a.rest))
    }),
    tool("get_invoice", &[InvoicesRead], ("get", "/v1/invoices/{id}"), |state, who, a| {
        answer(async move { invoices::get(state, who, &id_of(a.id)?).await })
    }),
    tool("create_invoice", &[InvoicesWrite], ("post", "/v1/invoices"), |state, who, a| {
        answer(async move { invoices::create(state, who, body(a.rest)?).await })
    }),
    tool("update_invoice", &[InvoicesWrite], ("patch", "/v1/invoices/{id}"), |state, who, a| {
        answer(async move { invoices::update(state, who, &id_of(a.id)?, body(a.rest)?).await })
    }),
    tool("mark_invoice_paid", &[InvoicesWrite], ("patch", "/v1/invoices/{id}/mark"), |state, who, a| {
        answer(async move { invoices::mark_paid(state, who, &id_of(a.id)?).await })
    }),
    tool("payment_link", &[InvoicesRead], ("get", "/v1/invoices/{id}/payment-link"), |state, who, a| {
        answer(async move { cards::link(state, who, &id_of(a.id)?).await })
    }),
    tool("record_payment", &[PaymentsWrite], ("post", "/v1/invoices/{id}/payments"), |state, who, a| {
        answer(async move { payments::pay(state, who, &id_of(a.id)?, body(a.rest)?).await })
    }),
    tool("list_payments", &[InvoicesRead], ("get", "/v1/payments"), |state, who, a| {
        paged(payments::list(state, who, a.rest))
    }),
    tool(
        "create_credit_note",
        &[InvoicesWrite],
        ("post", "/v1/invoices/{id}/credit-notes"),
        |state, who, a| {
            answer(async move { credit_notes::issue(state, who, &id_of(a.id)?, body(a.rest)?).await })
        },
    ),
    tool("e_invoice", &[InvoicesRead], ("get", "/v1/invoices/{id}/e-invoice"), |state, who, a| {
        answer(async move {
            let file = einvoices::invoice_xml(state, who, &id_of(a.id)?, body(a.rest)?).await?;
            String::from_utf8(file.bytes).map_err(|error| ApiError::internal(error.into()))
        })
    }),
    tool("receivables", &[InvoicesRead], ("get", "/v1/invoices/receivables"), |state, who, a| {
        answer(async move { payments::receivables(state, who, a.rest).await })
    }),
    tool("vat_return", &[InvoicesRead], ("get", "/v1/reports/vat"), |state, who, a| {
        answer(async move { vat_report::vat_lines(state, who, a.rest).await })
    }),
    tool("list_quotes", &[QuotesRead], ("get", "/v1/quotes"), |state, who, a| {
        paged(quotes::list(state, who, a.rest))
    }),
    tool("create_quote", &[QuotesWrite], ("post", "/v1/quotes"), |state, who, a| {
        answer(async move { quotes::create(state, who, body(a.rest)?).await })
    }),
    tool("finalize_quote", &[QuotesWrite], ("post", "/v1/quotes/{id}/finalize"), |state, who, a| {
        answer(async move { quotes::finalize(state, who, &id_of(a.id)?).await })
    }),
    tool("send_quote", &[QuotesWrite], ("post", "/v1/quotes/{id}/send"), |state, who, a| {
        answer(async move { messages::mail_quote(state, who.team_id, &id_of(a.id)?, body(a.rest)?).await })
    }),
    tool(
        "convert_quote",
        &[QuotesWrite, InvoicesWrite],
        ("post", "/v1/quotes/{id}/convert"),
        |state, who, a| {
            answer(async move { quotes::convert(state, who, &id_of(a.id)?, body(a.rest)?).await })
        },
    ),
    tool(
        "list_unmatched_transactions",
        &[BankingRead],
        ("get", "/v1/bank-transactions"),
        |state, who, mut a| {
            // Money in that waits for a person, unless another status is asked for.
            a.rest.entry("status").or_insert_with(|| json!(["unmatched", "suggested"]));
            paged(banking::list(state, who, a.rest))
        },
    ),
    tool(
        "match_transaction",
        &[BankingWrite],
        ("post", "/v1/bank-transactions/{id}/match"),
        |state, who, a| {
            answer(async move { banking::match_by_hand(state, who, &id_of(a.id)?, body(a.rest)?).await })
        },
    ),
    tool("send_invoice", &[InvoicesWrite], ("post", "/v1/invoices/{id}/send"), |state, who, a| {
        answer(async move {
            let id: billing::InvoiceId = crate::rest::routes::path_id(&id_of(a.id)?, "invoice")?;
            messages::send(state, who.team_id, id, body(a.rest)?).await
        })
    }),
    tool("send_reminder", &[InvoicesWrite], ("post", "/v1/invoices/{id}/remind"), |state, who, a| {
        answer(async move { messages::remind(state, who, &id_of(a.id)?, body(a.rest)?).await })
    }),
    tool("list_recurring_invoices", &[InvoicesRead], ("get", "/v1/recurring-invoices"), |state, who, a| {
        paged(recurring::list(state, who, a.rest))
    }),
    tool(
        "pause_recurring_invoice",
        &[InvoicesWrite],
        ("post", "/v1/recurring-invoices/{id}/pause"),
        |state, who, a| answer(async move { recurring::pause(state, who, &id_of(a.id)?).await }),
    ),
    tool(
        "resume_recurring_invoice",
        &[InvoicesWrite],
        ("post", "/v1/recurring-invoices/{id}/resume"),
        |state, who, a| answer(async move { recurring::resume(state, who, &id_of(a.id)?).await }),
    ),
    tool("list_messages", &[InvoicesRead], ("get", "/v1/messages"), |state, who, a| {
        paged(messages::list(state, who, None, a.rest))
    }),
    tool("list_time_entries", &[TrackRead], ("get", "/v1/track/time"), |state, who, a| {
        Box::pin(async move {
            let listing = time::listing(state, who, paging::read_query(a.rest)?).await?;
            let items: Vec<Value> =
                serde_json::from_slice(&listing.body()).map_err(|e| ApiError::internal(e.into()))?;
            Page { items, next: listing.next().map(time::cursor_of) }.into_tool_result()
        })
    }),
    tool("get_time_entry", &[TrackRead], ("get", "/v1/track/time/{id}"), |state, who, a| {
        answer(async move { time::get(state, who, &id_of(a.id)?).await })
    }),
    tool("create_time_entry", &[TrackWrite], ("post", "/v1/track/time"), |state, who, a| {
        answer(async move { time::create(state, who, body(a.rest)?).await })
    }),
    tool("update_time_entry", &[TrackWrite], ("patch", "/v1/track/time/{id}"), |state, who, a| {
        answer(async move { time::update(state, who, &id_of(a.id)?, body(a.rest)?).await })
    }),
    tool("delete_time_entry", &[TrackWrite], ("delete", "/v1/track/time/{id}"), |state, who, a| {
        answer(async move { time::delete(state, who, &id_of(a.id)?).await })
    }),
    tool("list_projects", &[TrackRead], ("get", "/v1/track/projects"), |state, who, a| {
        paged(collection::page::<projects::Projects>(state, who, a.rest))
    }),
    tool("create_project", &[TrackWrite], ("post", "/v1/track/projects"), |state, who, a| {
        answer(async move { projects::create(state, who, body(a.rest)?).await })
    }),
    tool("list_tags", &[TrackRead], ("get", "/v1/track/tags"), |state, who, a| {
        paged(collection::page::<tags::Tags>(state, who, a.rest))
    }),
    tool("create_tag", &[TrackWrite], ("post", "/v1/track/tags"), |state, who, a| {
        answer(async move { tags::create(state, who, body(a.rest)?).await })
    }),
    tool("list_sections", &[TrackRead], ("get", "/v1/track/sections"), |state, who, a| {
        paged(collection::page::<sections::Sections>(state, who, a.rest))
    }),
    tool("bill_time", &[InvoicesWrite, TrackRead], ("post", "/v1/invoices/from-time"), |state, who, a| {
        answer(async move { billed_time::bill(state, who, body(a.rest)?).await })
    }),
    tool("time_report", &[TrackRead], ("get", "/v1/track/reports"), |state, who, a| {
        answer(async move { reports::report(state, who, a.rest).await })
    }),
];

/// The built-in tool named `name`.
pub fn builtin_tool(name: &str) -> Option<&'static BuiltinTool> {
    CATALOGUE.iter().find(|tool| tool.name == name)
}

/// How a built-in tool is shown to a model or an MCP client.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDescription {
    pub name: &'static str,
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: Value,
    /// All of them.
    pub permissions: &'static [Permission],
}

/// Every built-in tool's description, cut once from the OpenAPI description.
pub fn descriptions() -> &'static [ToolDescription] {
    static DESCRIPTIONS: OnceLock<Vec<ToolDescription>> = OnceLock::new();
    DESCRIPTIONS.get_or_init(|| {
        let doc = crate::rest::openapi();
        CATALOGUE.iter().map(|tool| describe(&doc, tool)).collect()
    })
}

fn describe(doc: &Value, tool: &BuiltinTool) -> ToolDescription {
    let operation = &doc["paths"][tool.path][tool.method];
    let summary = operation["summary"].as_str().unwrap_or_default();
    let details = operation["description"].as_str().unwrap_or_default();
    let description = [summary, details].iter().filter(|t| !t.is_empty()).copied().collect::<Vec<_>>();
    ToolDescription {
        name: tool.name,
        description: description.join(". "),
        parameters: parameters(doc, operation),
        permissions: tool.permissions,
    }
}

/// The arguments object of `operation`: its path and query parameters, then its JSON
/// body's fields, with every `$ref` resolved.
fn parameters(doc: &Value, operation: &Value) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    // Headers (`Idempotency-Key`) belong to HTTP requests; a tool call is none.
    let arguments = operation["parameters"].as_array().into_iter().flatten().filter(|p| p["in"] != "header");
    for parameter in arguments {
        let Some(name) = parameter["name"].as_str() else { continue };
        let mut schema = inline(doc, &parameter["schema"], 0);
        if let (Some(text), Some(object)) = (parameter["description"].as_str(), schema.as_object_mut()) {
            object.entry("description").or_insert_with(|| text.into());
        }
        properties.insert(name.to_owned(), schema);
        if parameter["required"].as_bool() == Some(true) {
            required.push(Value::from(name));
        }
    }
    let body = inline(doc, &operation["requestBody"]["content"]["application/json"]["schema"], 0);
    if let Some(fields) = body["properties"].as_object() {
        properties.extend(fields.clone());
        required.extend(body["required"].as_array().into_iter().flatten().cloned());
    }
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

/// `schema` with each `$ref` to a component replaced by the component itself.
fn inline(doc: &Value, schema: &Value, depth: usize) -> Value {
    // The API's schemas nest a few levels; a cycle would stop here.
    const DEEPEST: usize = 16;
    match schema {
        Value::Object(object) => {
            if let Some(name) = object.get("$ref").and_then(Value::as_str).and_then(|r| r.rsplit('/').next())
                && depth < DEEPEST
            {
                return inline(doc, &doc["components"]["schemas"][name], depth + 1);
            }
            Value::Object(object.iter().map(|(k, v)| (k.clone(), inline(doc, v, depth + 1))).collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| inline(doc, v, depth + 1)).collect()),
        other => other.clone(),
    }
}

/// The built-in tools of one caller: what it may call, and the calls.
#[derive(Clone)]
pub struct BuiltinTools {
    state: Arc<ApiState>,
    caller: Principal,
}

impl std::fmt::Debug for BuiltinTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BuiltinTools").field("team", &self.caller.team_id).finish_non_exhaustive()
    }
}

impl BuiltinTools {
    /// The tools `caller` (a key's principal, or the agent's user with its permissions)
    /// may call over `state`'s stores.
    pub fn new(state: Arc<ApiState>, caller: Principal) -> Self {
        Self { state, caller }
    }

    /// The tools the caller's permissions allow.
    pub fn allowed(&self) -> impl Iterator<Item = &'static ToolDescription> + '_ {
        descriptions().iter().filter(|tool| self.lacking(tool).is_none())
    }

    /// Calls tool `name` with `arguments`; the result is the operation's response body.
    /// A tool the caller may not use is refused as its key would be (403), and does
    /// nothing.
    pub async fn call(&self, name: &str, arguments: Value) -> Result<Value, ApiError> {
        let Some((row, tool)) = CATALOGUE.iter().zip(descriptions()).find(|(row, _)| row.name == name) else {
            return Err(ApiError::new(StatusCode::NOT_FOUND, format!("there is no tool named {name:?}")));
        };
        if let Some(lacking) = self.lacking(tool) {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                format!("this caller lacks the {} permission", lacking.as_str()),
            ));
        }
        let Value::Object(mut arguments) = arguments else {
            return Err(ApiError::new(StatusCode::BAD_REQUEST, "arguments: must be a JSON object"));
        };
        // What the schema does not name is refused, as an unknown body field is: query
        // parameters and `id` would otherwise be passed over in silence.
        let properties = tool.parameters["properties"].as_object();
        let accepted: Vec<&str> = properties.into_iter().flat_map(|p| p.keys().map(String::as_str)).collect();
        if let Some(field) = arguments.keys().find(|field| !accepted.contains(&field.as_str())) {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                crate::conventions::body::not_accepted(field, field, &accepted),
            ));
        }
        let arguments = Arguments { id: arguments.remove("id"), rest: arguments };
        (row.call)(&self.state, &self.caller, arguments).await
    }

    /// The first permission `tool` needs that the caller lacks.
    fn lacking(&self, tool: &ToolDescription) -> Option<Permission> {
        tool.permissions.iter().copied().find(|permission| !self.caller.may(*permission))
    }
}

impl BuiltinTools {
    /// The tools the caller may call, as the agent's registry holds them.
    pub fn registry(&self) -> ToolRegistry {
        let mut registry = ToolRegistry::default();
        for description in self.allowed() {
            registry.register(Arc::new(AgentTool { tools: self.clone(), description }));
        }
        registry
    }
}

/// One built-in tool, as the agent's runtime calls it.
struct AgentTool {
    tools: BuiltinTools,
    description: &'static ToolDescription,
}

#[async_trait]
impl Tool for AgentTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.description.name.to_owned(),
            description: self.description.description.clone(),
            parameters: self.description.parameters.clone(),
        }
    }

    async fn call(&self, arguments: Value) -> Result<String, String> {
        match self.tools.call(self.description.name, arguments).await {
            Ok(result) => Ok(result.to_string()),
            // The API's own message, naming the field: what the model needs to try again.
            Err(error) => Err(error.message().to_owned()),
        }
    }
}

/// A call whose result is a response body, as JSON.
fn answer<'a, T: Serialize>(call: impl Future<Output = Result<T, ApiError>> + Send + 'a) -> Call<'a> {
    Box::pin(async move {
        let result = call.await?;
        serde_json::to_value(result).map_err(|e| ApiError::internal(e.into()))
    })
}

/// A call whose result is a page of a listing: see [`Page::into_tool_result`].
fn paged<'a, T: Serialize>(call: impl Future<Output = Result<Page<T>, ApiError>> + Send + 'a) -> Call<'a> {
    Box::pin(async move { call.await?.into_tool_result() })
}

/// The arguments besides `id`, read as the operation's body type, with the API's error
/// messages naming the field.
fn body<T: DeserializeOwned>(arguments: Map<String, Value>) -> Result<T, ApiError> {
    crate::conventions::body::from_value(Value::Object(arguments))
}

/// The `id` argument, as a path would carry it.
fn id_of(id: Option<Value>) -> Result<String, ApiError> {
    match id {
        Some(Value::String(id)) => Ok(id),
        Some(_) => Err(ApiError::new(StatusCode::BAD_REQUEST, "id: must be a string")),
        None => Err(ApiError::new(StatusCode::BAD_REQUEST, "id: is required")),
    }
}

/// The principal of a caller acting as `user` of `team` with a restricted key's
/// `permissions`: the agent's built-in tools act so.
pub fn acting_as(user: &accounts::User, permissions: std::collections::BTreeSet<Permission>) -> Principal {
    Principal {
        // No key is used: the agent's calls are its own, and have no key to rate-limit.
        key_id: accounts::ApiKeyId::from_uuid(uuid::Uuid::nil()),
        team_id: user.team_id,
        user_id: user.id,
        role: user.role,
        scope: Scope::Restricted(permissions),
    }
}

#[cfg(test)]
mod tests {
    use accounts::Permission;

    use super::{CATALOGUE, builtin_tool, descriptions};

    #[test]
    fn names_are_unique_and_found() {
        let mut names: Vec<_> = CATALOGUE.iter().map(|t| t.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), CATALOGUE.len());
        assert_eq!(
            builtin_tool("mark_invoice_paid").map(|t| t.permissions),
            Some(&[Permission::InvoicesWrite][..])
        );
        assert!(builtin_tool("drop_database").is_none());
    }

    #[test]
    fn every_tool_is_cut_from_its_operation_in_the_description() {
        let doc = crate::rest::openapi();
        for row in &CATALOGUE {
            assert!(
                doc["paths"][row.path][row.method].is_object(),
                "{}: {} {}",
                row.name,
                row.method,
                row.path
            );
        }
        for tool in descriptions() {
            assert!(!tool.description.is_empty(), "{} has a description", tool.name);
            let schema = tool.parameters.to_string();
            assert!(!schema.contains("$ref"), "{} inlines its schemas: {schema}", tool.name);
            let required: Vec<&str> =
                tool.parameters["required"].as_array().unwrap().iter().filter_map(|v| v.as_str()).collect();
            let takes_id = builtin_tool(tool.name).is_some_and(|row| row.path.contains("{id}"));
            assert_eq!(required.contains(&"id"), takes_id, "{}: {required:?}", tool.name);
        }
        let create = descriptions().iter().find(|t| t.name == "create_client").unwrap();
        assert!(create.parameters["properties"].get("Idempotency-Key").is_none(), "headers are no arguments");
        for field in ["name", "email"] {
            assert!(create.parameters["required"].as_array().unwrap().contains(&field.into()), "{field}");
        }
        let listing = descriptions().iter().find(|t| t.name == "list_time_entries").unwrap();
        assert!(listing.parameters["properties"]["frequency"].is_object(), "query parameters are arguments");
    }
}
