//! The built-in tools: the REST API's operations, called in process by the agent (and by
//! MCP clients) as a caller holding a restricted key would call them over HTTP.
//!
//! A tool's arguments are the operation's request body with its path and query
//! parameters beside the body's fields (`id` for one resource), under the API's JSON names;
//! its JSON Schema is cut from the OpenAPI description, so the two never drift. Its result
//! is the operation's response body. It runs the same code as the handler, so every rule,
//! 400 message and 404 holds; a refusal comes back as the API's error text.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};

use accounts::{Permission, Principal, Scope};
use actix_web::http::StatusCode;
use kernel::Id;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use triggers::{BUILTIN_TOOLS, BuiltinTool};

use crate::error::ApiError;
use crate::paging::{self, Page};
use crate::routes::track::{projects, reports, sections, tags, time};
use crate::routes::{billed_time, clients, invoices};
use crate::state::ApiState;

/// Where each built-in tool's operation is in the OpenAPI description.
const OPERATIONS: [(&str, &str, &str); 20] = [
    ("list_clients", "get", "/v1/invoices/clients"),
    ("get_client", "get", "/v1/invoices/clients/{id}"),
    ("create_client", "post", "/v1/invoices/clients"),
    ("list_invoices", "get", "/v1/invoices"),
    ("get_invoice", "get", "/v1/invoices/{id}"),
    ("create_invoice", "post", "/v1/invoices"),
    ("update_invoice", "patch", "/v1/invoices/{id}"),
    ("mark_invoice_paid", "patch", "/v1/invoices/{id}/mark"),
    ("list_time_entries", "get", "/v1/track/time"),
    ("get_time_entry", "get", "/v1/track/time/{id}"),
    ("create_time_entry", "post", "/v1/track/time"),
    ("update_time_entry", "patch", "/v1/track/time/{id}"),
    ("delete_time_entry", "delete", "/v1/track/time/{id}"),
    ("list_projects", "get", "/v1/track/projects"),
    ("create_project", "post", "/v1/track/projects"),
    ("list_tags", "get", "/v1/track/tags"),
    ("create_tag", "post", "/v1/track/tags"),
    ("list_sections", "get", "/v1/track/sections"),
    ("bill_time", "post", "/v1/invoices/from-time"),
    ("time_report", "get", "/v1/track/reports"),
];

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
        let doc = crate::openapi();
        BUILTIN_TOOLS.iter().map(|tool| describe(&doc, *tool)).collect()
    })
}

fn describe(doc: &Value, tool: BuiltinTool) -> ToolDescription {
    let (method, path) = OPERATIONS
        .iter()
        .find(|(name, _, _)| *name == tool.name)
        .map(|(_, method, path)| (*method, *path))
        .unwrap_or_default();
    let operation = &doc["paths"][path][method];
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

type Call<'a> = Pin<Box<dyn Future<Output = Result<Value, ApiError>> + Send + 'a>>;

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
        let Some(tool) = descriptions().iter().find(|tool| tool.name == name) else {
            return Err(ApiError::new(StatusCode::NOT_FOUND, format!("there is no tool named {name:?}")));
        };
        if let Some(lacking) = self.lacking(tool) {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                format!("this caller lacks the {} permission", lacking.as_str()),
            ));
        }
        let Value::Object(arguments) = arguments else {
            return Err(ApiError::new(StatusCode::BAD_REQUEST, "arguments: must be a JSON object"));
        };
        // What the schema does not name is refused, as an unknown body field is: query
        // parameters and `id` would otherwise be passed over in silence.
        let properties = tool.parameters["properties"].as_object();
        let accepted: Vec<&str> = properties.into_iter().flat_map(|p| p.keys().map(String::as_str)).collect();
        if let Some(field) = arguments.keys().find(|field| !accepted.contains(&field.as_str())) {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                crate::body::not_accepted(field, field, &accepted),
            ));
        }
        self.run(name, arguments).await
    }

    /// The first permission `tool` needs that the caller lacks.
    fn lacking(&self, tool: &ToolDescription) -> Option<Permission> {
        tool.permissions.iter().copied().find(|permission| !self.caller.may(*permission))
    }

    fn run(&self, name: &str, mut arguments: Map<String, Value>) -> Call<'_> {
        let (state, who) = (&*self.state, &self.caller);
        let id = arguments.remove("id");
        match name {
            "list_clients" => paged(async move { clients::list(state, who, arguments).await }),
            "get_client" => answer(async move { clients::get(state, who, &id_of(id)?).await }),
            "create_client" => answer(async move { clients::create(state, who, body(arguments)?).await }),
            "list_invoices" => paged(async move { invoices::list(state, who, arguments).await }),
            "get_invoice" => answer(async move { invoices::get(state, who, &id_of(id)?).await }),
            "create_invoice" => answer(async move { invoices::create(state, who, body(arguments)?).await }),
            "update_invoice" => {
                answer(async move { invoices::update(state, who, &id_of(id)?, body(arguments)?).await })
            }
            "mark_invoice_paid" => answer(async move { invoices::mark_paid(state, who, &id_of(id)?).await }),
            "list_time_entries" => Box::pin(async move {
                let listing = time::listing(state, who, paging::read_query(arguments)?).await?;
                let items: Vec<Value> =
                    serde_json::from_slice(&listing.body()).map_err(|e| ApiError::internal(e.into()))?;
                Page { items, next: listing.next().map(time::cursor_of) }.into_tool_result()
            }),
            "get_time_entry" => answer(async move { time::get(state, who, &id_of(id)?).await }),
            "create_time_entry" => answer(async move { time::create(state, who, body(arguments)?).await }),
            "update_time_entry" => {
                answer(async move { time::update(state, who, &id_of(id)?, body(arguments)?).await })
            }
            "delete_time_entry" => answer(async move { time::delete(state, who, &id_of(id)?).await }),
            "list_projects" => paged(async move { projects::list(state, who, arguments).await }),
            "create_project" => answer(async move { projects::create(state, who, body(arguments)?).await }),
            "list_tags" => paged(async move { tags::list(state, who, arguments).await }),
            "create_tag" => answer(async move { tags::create(state, who, body(arguments)?).await }),
            "list_sections" => paged(async move { sections::list(state, who, arguments).await }),
            "bill_time" => answer(async move { billed_time::bill(state, who, body(arguments)?).await }),
            "time_report" => answer(async move { reports::report(state, who, arguments).await }),
            _ => {
                let error = ApiError::new(StatusCode::NOT_FOUND, format!("there is no tool named {name:?}"));
                Box::pin(async move { Err(error) })
            }
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

/// The arguments besides `id`, read as the operation's body (or query) type, with the
/// API's error messages naming the field.
fn body<T: DeserializeOwned>(arguments: Map<String, Value>) -> Result<T, ApiError> {
    let bytes = serde_json::to_vec(&Value::Object(arguments)).map_err(|e| ApiError::internal(e.into()))?;
    crate::body::parse(&bytes)
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
    use super::{OPERATIONS, descriptions};

    #[test]
    fn every_tool_is_cut_from_its_operation_in_the_description() {
        let names: Vec<&str> = OPERATIONS.iter().map(|(name, _, _)| *name).collect();
        let tools: Vec<&str> = triggers::BUILTIN_TOOLS.iter().map(|t| t.name).collect();
        assert_eq!(names, tools, "one operation per built-in tool, in the same order");
        for tool in descriptions() {
            assert!(!tool.description.is_empty(), "{} has a description", tool.name);
            let schema = tool.parameters.to_string();
            assert!(!schema.contains("$ref"), "{} inlines its schemas: {schema}", tool.name);
            let required: Vec<&str> =
                tool.parameters["required"].as_array().unwrap().iter().filter_map(|v| v.as_str()).collect();
            let takes_id =
                OPERATIONS.iter().any(|(name, _, path)| *name == tool.name && path.contains("{id}"));
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
