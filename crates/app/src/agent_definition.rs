//! The agent definition (`agent.yaml`): what the agent is, which model it calls, what it
//! remembers, its limits, its tools, and the triggers that wake it. Parsed once at startup into
//! typed settings with every default filled in: the runtime's (`triggers::AgentSettings`),
//! the model's and the MCP servers' (the `agent` adapter's), the built-in tools' and the
//! listeners'. A bad file stops startup with a message naming the file, the field and what
//! is wrong.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::time::Duration;

use accounts::{Permission, Scope};
use agent::mcp::{MCP_SEPARATOR, McpConnection, McpServerSettings, mcp_server_of};
use agent::{ModelSettings, OpenAiSettings};
use http_api::tools::{BuiltinTool, builtin_tool};
use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};
use triggers::{
    AgentSettings, EventFilter, GithubRules, Limits, MemoryScope, MemorySettings, RepoPatterns, ToolChoice,
};

/// A refused definition: `FILE: FIELD: MESSAGE`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}: {field}: {message}")]
pub struct DefinitionError {
    pub file: String,
    /// The field as a path, e.g. `triggers[0].port`; `(document)` for the file as a whole.
    pub field: String,
    pub message: String,
}

/// A valid agent definition, defaults applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentDefinition {
    pub name: String,
    /// The team whose data the agent's runs belong to, by id or name; `None` means the
    /// only team there is.
    pub team: Option<String>,
    /// The system prompt.
    pub instructions: String,
    pub model: ModelSettings,
    pub memory: MemorySettings,
    pub limits: Limits,
    /// The built-in tools over the team's data (`tools.billable`); `None`: none of them.
    pub billable_tools: Option<BillableTools>,
    /// MCP servers whose tools the agent is offered (`tools.mcp`).
    pub mcp_servers: Vec<McpServerSettings>,
    pub triggers: Vec<TriggerSettings>,
}

impl AgentDefinition {
    /// What the runtime needs of the definition.
    pub fn settings(&self) -> AgentSettings {
        AgentSettings { instructions: self.instructions.clone(), memory: self.memory, limits: self.limits }
    }
}

/// The definition's `tools.billable`: the built-in tools act as `user` of the agent's
/// team, with a restricted key's `permissions`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BillableTools {
    /// The user's id or email, as written; resolved at startup.
    pub user: String,
    pub permissions: std::collections::BTreeSet<Permission>,
}

impl BillableTools {
    /// The permissions as a restricted key's scope.
    pub fn scope(&self) -> Scope {
        Scope::Restricted(self.permissions.clone())
    }

    /// The built-in tools these permissions allow, in catalogue order (a write
    /// permission allows its read, as for keys).
    pub fn allowed(&self) -> Vec<&'static BuiltinTool> {
        let scope = self.scope();
        http_api::tools::CATALOGUE.iter().filter(|tool| tool.lacking(|p| scope.allows(p)).is_none()).collect()
    }
}

/// One entry of `triggers`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TriggerSettings {
    Webhook(WebhookTrigger),
    Github(GithubTrigger),
    Events(EventsTrigger),
}

/// The events of the team's books that wake the agent: no listener, runs through the job
/// queue, one at a time per invoice (or client, time entry, timer), in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventsTrigger {
    /// The team whose events wake the agent, by id or name, as written: it must be the
    /// agent's own (checked at startup); `None`, the agent's.
    pub team: Option<String>,
    pub events: notify::EventFilter,
    /// The agent's tools its runs may call.
    pub tools: ToolChoice,
}

/// The bearer-token webhook: POST an input, get the reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookTrigger {
    pub path: String,
    pub port: u16,
    /// The environment variable holding the bearer token (two, comma-separated, during a
    /// rotation).
    pub token_env: String,
    /// The agent's tools its runs may call.
    pub tools: ToolChoice,
}

/// The signed repository-event webhook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GithubTrigger {
    pub path: String,
    pub port: u16,
    /// The environment variable holding the signing secret (two, comma-separated,
    /// during a rotation).
    pub secret_env: String,
    /// Largest delivery body, in bytes.
    pub body_limit: usize,
    /// Which deliveries it takes, and how long it remembers them.
    pub rules: GithubRules,
    /// The agent's tools its runs may call.
    pub tools: ToolChoice,
}

impl TriggerSettings {
    /// The agent's tools this trigger's runs may call.
    pub fn tools(&self) -> &ToolChoice {
        match self {
            Self::Webhook(t) => &t.tools,
            Self::Github(t) => &t.tools,
            Self::Events(t) => &t.tools,
        }
    }

    /// The port and path a listener serves the trigger on; `None` for the events trigger,
    /// which has no listener.
    pub fn route(&self) -> Option<(u16, &str)> {
        match self {
            Self::Webhook(t) => Some((t.port, &t.path)),
            Self::Github(t) => Some((t.port, &t.path)),
            Self::Events(_) => None,
        }
    }

    /// The field that names the secret and the environment variable whose value
    /// authenticates callers; `None` for the events trigger, which has no callers.
    pub fn secret_env(&self) -> Option<(&'static str, &str)> {
        match self {
            Self::Webhook(t) => Some(("token_env", &t.token_env)),
            Self::Github(t) => Some(("secret_env", &t.secret_env)),
            Self::Events(_) => None,
        }
    }
}

pub const DEFAULT_PORT: u16 = 8080;
pub const DEFAULT_QUEUE_DEPTH: u32 = 8;
pub const DEFAULT_MAX_STEPS: u32 = 8;
pub const DEFAULT_MAX_CONCURRENT_RUNS: u32 = 16;
pub const DEFAULT_RUN_TIMEOUT: Duration = Duration::from_mins(2);
pub const DEFAULT_MAX_MESSAGES: u32 = 50;
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_mins(1);
pub const DEFAULT_MAX_RETRIES: u32 = 3;
pub const DEFAULT_GITHUB_SECRET_ENV: &str = "GITHUB_WEBHOOK_SECRET";
/// GitHub caps deliveries at 25 MB.
pub const DEFAULT_GITHUB_BODY_LIMIT: usize = 25 * 1024 * 1024;
pub const DEFAULT_GITHUB_TEXT_LIMIT: usize = triggers::github::render::DEFAULT_TEXT_LIMIT;
/// GitHub lets a delivery be redelivered for 3 days; a week covers that with room.
/// How long one call of an MCP server's tool may take by default.
pub const DEFAULT_MCP_TIMEOUT: Duration = Duration::from_mins(1);
pub const DEFAULT_DEDUPE_WINDOW: Duration = Duration::from_hours(7 * 24);

// ---- The file as written: every field optional where a default exists. ----

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDefinition {
    name: String,
    team: Option<String>,
    #[serde(default)]
    instructions: String,
    model: RawModel,
    #[serde(default)]
    memory: RawMemory,
    #[serde(default)]
    limits: RawLimits,
    #[serde(default)]
    tools: RawTools,
    triggers: Vec<RawTrigger>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawTools {
    billable: Option<RawBillableTools>,
    #[serde(default)]
    mcp: Vec<RawMcpServer>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMcpServer {
    name: String,
    command: Option<Vec<String>>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    url: Option<String>,
    #[serde(default)]
    headers_env: BTreeMap<String, String>,
    #[serde(default, deserialize_with = "duration")]
    timeout: Option<Duration>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBillableTools {
    user: String,
    permissions: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawModel {
    provider: RawProvider,
    base_url: Option<String>,
    model: Option<String>,
    api_key_env: Option<String>,
    #[serde(default, deserialize_with = "duration")]
    request_timeout: Option<Duration>,
    max_retries: Option<u32>,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum RawProvider {
    Openai,
    Echo,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawMemory {
    scope: Option<RawScope>,
    max_messages: Option<u32>,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum RawScope {
    Thread,
    None,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawLimits {
    queue_depth: Option<u32>,
    max_steps: Option<u32>,
    max_concurrent_runs: Option<u32>,
    #[serde(default, deserialize_with = "duration")]
    run_timeout: Option<Duration>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTrigger {
    #[serde(rename = "type")]
    kind: RawTriggerKind,
    path: Option<String>,
    port: Option<u16>,
    token_env: Option<String>,
    secret_env: Option<String>,
    events: Option<Vec<String>>,
    /// The events trigger's team.
    team: Option<String>,
    repos: Option<Vec<String>>,
    body_limit: Option<usize>,
    text_limit: Option<usize>,
    #[serde(default, deserialize_with = "duration")]
    dedupe_window: Option<Duration>,
    tools: Option<Vec<String>>,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum RawTriggerKind {
    Webhook,
    Github,
    Events,
}

/// A duration written `90s`, `2m`, `1h 30m`, or a bare number of seconds.
fn duration<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Duration>, D::Error> {
    struct DurationVisitor;
    impl Visitor<'_> for DurationVisitor {
        type Value = Duration;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a duration such as 30s, 2m or 1h, or a number of seconds")
        }
        fn visit_u64<E: de::Error>(self, seconds: u64) -> Result<Duration, E> {
            Ok(Duration::from_secs(seconds))
        }
        fn visit_i64<E: de::Error>(self, seconds: i64) -> Result<Duration, E> {
            u64::try_from(seconds).map(Duration::from_secs).map_err(|_| E::custom("must not be negative"))
        }
        fn visit_str<E: de::Error>(self, text: &str) -> Result<Duration, E> {
            humantime::parse_duration(text).map_err(|e| E::custom(format!("{text:?}: {e}")))
        }
    }
    deserializer.deserialize_any(DurationVisitor).map(Some)
}

// ---- Validation. ----

impl AgentDefinition {
    /// Parses the YAML text of the file named `file` (the name only appears in errors).
    pub fn parse(file: &str, yaml: &str) -> Result<Self, DefinitionError> {
        let error = |field: &str, message: String| DefinitionError {
            file: file.to_owned(),
            field: if field.is_empty() { "(document)".to_owned() } else { field.to_owned() },
            message,
        };
        let deserializer = serde_yaml_ng::Deserializer::from_str(yaml);
        let raw: RawDefinition = serde_path_to_error::deserialize(deserializer).map_err(|e| {
            let field = e.path().to_string();
            // `?` is where the YAML itself is malformed, `.` the document as a whole.
            let field = if field == "." || field == "?" { String::new() } else { field };
            // The YAML parser names the field itself, where it knows it; once is enough.
            let message = e.into_inner().to_string();
            let message = match message.split_once(": ") {
                Some((named, rest)) if !named.is_empty() && field.starts_with(named) => rest.to_owned(),
                _ => message,
            };
            error(&field, message)
        })?;
        raw.validate().map_err(|(field, message)| error(&field, message))
    }
}

type Invalid = (String, String);

fn invalid(field: impl Into<String>, message: impl Into<String>) -> Invalid {
    (field.into(), message.into())
}

fn bounded(field: &str, value: Option<u32>, default: u32, min: u32, max: u32) -> Result<u32, Invalid> {
    let value = value.unwrap_or(default);
    if (min..=max).contains(&value) {
        Ok(value)
    } else {
        Err(invalid(field, format!("must be between {min} and {max}, got {value}")))
    }
}

fn env_name(field: &str, name: &str) -> Result<String, Invalid> {
    let valid = !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if valid {
        Ok(name.to_owned())
    } else {
        Err(invalid(field, format!("{name:?} is not an environment variable name (letters, digits, _)")))
    }
}

fn route_path(field: &str, path: Option<String>, default: &str) -> Result<String, Invalid> {
    let path = path.unwrap_or_else(|| default.to_owned());
    let valid = path.starts_with('/')
        && path.len() <= 200
        && !path.contains("//")
        && path.chars().all(|c| c.is_ascii_alphanumeric() || "/-_.~".contains(c));
    if valid {
        Ok(path)
    } else {
        Err(invalid(field, format!("{path:?} must start with / and hold only letters, digits and / - _ . ~")))
    }
}

fn required_text(field: &str, value: Option<String>) -> Result<String, Invalid> {
    match value {
        Some(text) if !text.trim().is_empty() => Ok(text.trim().to_owned()),
        Some(_) => Err(invalid(field, "must not be empty")),
        None => Err(invalid(field, "is required")),
    }
}

impl RawDefinition {
    fn validate(self) -> Result<AgentDefinition, Invalid> {
        let name = required_text("name", Some(self.name))?;
        if name.chars().count() > 100 {
            return Err(invalid("name", "must be at most 100 characters"));
        }
        let team = match self.team {
            Some(team) => Some(required_text("team", Some(team))?),
            None => None,
        };
        if self.triggers.is_empty() {
            return Err(invalid("triggers", "must name at least one trigger"));
        }
        let billable_tools = self.tools.billable.map(RawBillableTools::validate).transpose()?;
        let mut mcp_servers: Vec<McpServerSettings> = Vec::new();
        for (i, server) in self.tools.mcp.into_iter().enumerate() {
            let server = server.validate(&format!("tools.mcp[{i}]"))?;
            if mcp_servers.iter().any(|s| s.name == server.name) {
                return Err(invalid(
                    format!("tools.mcp[{i}].name"),
                    format!("{:?} is listed twice", server.name),
                ));
            }
            mcp_servers.push(server);
        }
        let tools = AgentTools { billable: billable_tools.as_ref(), mcp: &mcp_servers };
        let triggers = self
            .triggers
            .into_iter()
            .enumerate()
            .map(|(i, trigger)| trigger.validate(&format!("triggers[{i}]"), &tools))
            .collect::<Result<Vec<_>, _>>()?;
        // Deliveries are queued without the trigger that took them: one list for all.
        let mut github = triggers.iter().enumerate().filter(|(_, t)| matches!(t, TriggerSettings::Github(_)));
        if let Some((_, first)) = github.next()
            && let Some((i, _)) = github.find(|(_, t)| t.tools() != first.tools())
        {
            return Err(invalid(format!("triggers[{i}].tools"), "must be the same for every github trigger"));
        }
        let mut routes = HashMap::new();
        for (i, trigger) in triggers.iter().enumerate() {
            let Some((port, path)) = trigger.route() else { continue };
            if let Some(first) = routes.insert((port, path.to_owned()), i) {
                return Err(invalid(
                    format!("triggers[{i}].path"),
                    format!("port {port} and path {path} are already taken by triggers[{first}]"),
                ));
            }
        }
        let mut events = triggers.iter().enumerate().filter(|(_, t)| matches!(t, TriggerSettings::Events(_)));
        if let (Some(_), Some((i, _))) = (events.next(), events.next()) {
            return Err(invalid(format!("triggers[{i}].type"), "an agent has at most one events trigger"));
        }
        Ok(AgentDefinition {
            name,
            team,
            instructions: self.instructions,
            model: self.model.validate()?,
            memory: MemorySettings {
                scope: match self.memory.scope {
                    Some(RawScope::Thread) => MemoryScope::Thread,
                    Some(RawScope::None) | None => MemoryScope::None,
                },
                max_messages: bounded(
                    "memory.max_messages",
                    self.memory.max_messages,
                    DEFAULT_MAX_MESSAGES,
                    1,
                    10_000,
                )?,
            },
            limits: self.limits.validate()?,
            billable_tools,
            mcp_servers,
            triggers,
        })
    }
}

impl RawModel {
    fn validate(self) -> Result<ModelSettings, Invalid> {
        match self.provider {
            RawProvider::Echo => {
                let stray = [
                    ("base_url", self.base_url.is_some()),
                    ("model", self.model.is_some()),
                    ("api_key_env", self.api_key_env.is_some()),
                    ("request_timeout", self.request_timeout.is_some()),
                    ("max_retries", self.max_retries.is_some()),
                ];
                if let Some((field, _)) = stray.iter().find(|(_, given)| *given) {
                    return Err(invalid(format!("model.{field}"), "is not used by provider echo"));
                }
                Ok(ModelSettings::Echo)
            }
            RawProvider::Openai => {
                let base_url = required_text("model.base_url", self.base_url)?;
                let scheme_ok = base_url.starts_with("http://") || base_url.starts_with("https://");
                if !scheme_ok || base_url.contains(char::is_whitespace) {
                    return Err(invalid(
                        "model.base_url",
                        format!("{base_url:?} must be an http:// or https:// URL"),
                    ));
                }
                let request_timeout = self.request_timeout.unwrap_or(DEFAULT_REQUEST_TIMEOUT);
                if request_timeout.is_zero() {
                    return Err(invalid("model.request_timeout", "must be longer than zero"));
                }
                Ok(ModelSettings::OpenAi(OpenAiSettings {
                    base_url: base_url.trim_end_matches('/').to_owned(),
                    model: required_text("model.model", self.model)?,
                    api_key_env: self
                        .api_key_env
                        .map(|name| env_name("model.api_key_env", &name))
                        .transpose()?,
                    request_timeout,
                    max_retries: bounded("model.max_retries", self.max_retries, DEFAULT_MAX_RETRIES, 0, 10)?,
                }))
            }
        }
    }
}

impl RawLimits {
    fn validate(self) -> Result<Limits, Invalid> {
        let run_timeout = self.run_timeout.unwrap_or(DEFAULT_RUN_TIMEOUT);
        if run_timeout.is_zero() || run_timeout > Duration::from_hours(24) {
            return Err(invalid("limits.run_timeout", "must be longer than zero and at most 24h"));
        }
        Ok(Limits {
            queue_depth: bounded("limits.queue_depth", self.queue_depth, DEFAULT_QUEUE_DEPTH, 0, 10_000)?,
            max_steps: bounded("limits.max_steps", self.max_steps, DEFAULT_MAX_STEPS, 1, 100)?,
            max_concurrent_runs: bounded(
                "limits.max_concurrent_runs",
                self.max_concurrent_runs,
                DEFAULT_MAX_CONCURRENT_RUNS,
                1,
                10_000,
            )?,
            run_timeout,
        })
    }
}

impl RawMcpServer {
    fn validate(self, at: &str) -> Result<McpServerSettings, Invalid> {
        let field = |name: &str| format!("{at}.{name}");
        let name = required_text(&field("name"), Some(self.name))?;
        let valid = name.len() <= 32
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            && !name.contains(MCP_SEPARATOR);
        if !valid {
            return Err(invalid(field("name"), "must be 1–32 letters, digits, - or _, without __"));
        }
        let connection = match (self.command, self.url) {
            (Some(command), None) => {
                if !self.headers_env.is_empty() {
                    return Err(invalid(field("headers_env"), "is for a server given by url"));
                }
                if command.first().is_none_or(|program| program.trim().is_empty()) {
                    return Err(invalid(field("command"), "must name a program"));
                }
                McpConnection::Stdio { command, env: self.env }
            }
            (None, Some(url)) => {
                if !self.env.is_empty() {
                    return Err(invalid(field("env"), "is for a server given by command"));
                }
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Err(invalid(field("url"), "must start with http:// or https://"));
                }
                for (header, variable) in &self.headers_env {
                    env_name(&format!("{at}.headers_env.{header}"), variable)?;
                }
                McpConnection::Http { url, headers_env: self.headers_env }
            }
            _ => return Err(invalid(at, "needs exactly one of command and url")),
        };
        let timeout = self.timeout.unwrap_or(DEFAULT_MCP_TIMEOUT);
        if timeout < Duration::from_secs(1) || timeout > Duration::from_mins(10) {
            return Err(invalid(field("timeout"), "must be between 1s and 10m"));
        }
        Ok(McpServerSettings { name, connection, timeout })
    }
}

impl RawBillableTools {
    fn validate(self) -> Result<BillableTools, Invalid> {
        let user = required_text("tools.billable.user", Some(self.user))?;
        if self.permissions.is_empty() {
            return Err(invalid("tools.billable.permissions", "must list at least one permission"));
        }
        let permissions = self
            .permissions
            .iter()
            .enumerate()
            .map(|(i, p)| {
                Permission::parse(p)
                    .map_err(|e| invalid(format!("tools.billable.permissions[{i}]"), e.to_string()))
            })
            .collect::<Result<_, _>>()?;
        Ok(BillableTools { user, permissions })
    }
}

/// The tools a definition gives its agent, as its triggers' lists are checked against.
struct AgentTools<'a> {
    billable: Option<&'a BillableTools>,
    mcp: &'a [McpServerSettings],
}

/// A trigger's `tools`: names of built-in tools the agent's permissions allow, and of
/// tools of its MCP servers (`<server>__<tool>`; the server lists its tools at startup).
fn tool_choice(at: &str, names: Option<Vec<String>>, agent: &AgentTools<'_>) -> Result<ToolChoice, Invalid> {
    let Some(names) = names else { return Ok(ToolChoice::All) };
    let tools = agent.billable;
    let allowed = tools.map(BillableTools::allowed).unwrap_or_default();
    for (i, name) in names.iter().enumerate() {
        let at = format!("{at}.tools[{i}]");
        if let Some(server) = mcp_server_of(name) {
            if !agent.mcp.iter().any(|s| s.name == server) {
                return Err(invalid(at, format!("{name:?} names no MCP server of tools.mcp")));
            }
            continue;
        }
        let Some(tool) = builtin_tool(name) else {
            return Err(invalid(at, format!("there is no built-in tool named {name:?}")));
        };
        if tools.is_none() {
            return Err(invalid(at, "names a tool, but the agent has none (tools.billable is not set)"));
        }
        if !allowed.iter().any(|allowed| allowed.name == tool.name) {
            let scope = tools.map(BillableTools::scope);
            let lacking = tool.lacking(|p| scope.as_ref().is_some_and(|s| s.allows(p)));
            let lacking = lacking.map_or("a permission", accounts::Permission::as_str);
            return Err(invalid(
                at,
                format!("{name} needs {lacking}, which tools.billable.permissions does not grant"),
            ));
        }
    }
    Ok(ToolChoice::Only(names.into_iter().collect()))
}

impl RawTrigger {
    /// The events trigger: no listener, so none of a listener's settings.
    fn events_trigger(self, at: &str, tools: ToolChoice) -> Result<TriggerSettings, Invalid> {
        let field = |name: &str| format!("{at}.{name}");
        for (name, given) in [
            ("path", self.path.is_some()),
            ("port", self.port.is_some()),
            ("token_env", self.token_env.is_some()),
            ("secret_env", self.secret_env.is_some()),
            ("repos", self.repos.is_some()),
            ("body_limit", self.body_limit.is_some()),
            ("text_limit", self.text_limit.is_some()),
            ("dedupe_window", self.dedupe_window.is_some()),
        ] {
            if given {
                return Err(invalid(
                    field(name),
                    "is not a setting of an events trigger (it has no listener)",
                ));
            }
        }
        let events = self.events.ok_or_else(|| invalid(field("events"), "is required"))?;
        let events = notify::EventFilter::parse(&events).map_err(|rule| match rule {
            notify::EventRule::Unknown { index, pattern } => invalid(
                format!("{at}.events[{index}]"),
                format!("{pattern:?} names no event type (invoice.overdue, payment.*, *, …)"),
            ),
            other => invalid(field("events"), other.to_string()),
        })?;
        Ok(TriggerSettings::Events(EventsTrigger { team: self.team, events, tools }))
    }

    fn validate(mut self, at: &str, agent_tools: &AgentTools<'_>) -> Result<TriggerSettings, Invalid> {
        let field = |name: &str| format!("{at}.{name}");
        let port = self.port.unwrap_or(DEFAULT_PORT);
        let tools = tool_choice(at, self.tools.take(), agent_tools)?;
        if !matches!(self.kind, RawTriggerKind::Events) && self.team.is_some() {
            return Err(invalid(
                field("team"),
                "is a setting of the events trigger only (the agent's team is the top-level team)",
            ));
        }
        match self.kind {
            RawTriggerKind::Events => self.events_trigger(at, tools),
            RawTriggerKind::Webhook => {
                for (name, given) in [
                    ("secret_env", self.secret_env.is_some()),
                    ("events", self.events.is_some()),
                    ("repos", self.repos.is_some()),
                    ("body_limit", self.body_limit.is_some()),
                    ("text_limit", self.text_limit.is_some()),
                    ("dedupe_window", self.dedupe_window.is_some()),
                ] {
                    if given {
                        return Err(invalid(field(name), "is not a setting of a webhook trigger"));
                    }
                }
                let token_env = required_text(&field("token_env"), self.token_env)?;
                Ok(TriggerSettings::Webhook(WebhookTrigger {
                    path: route_path(&field("path"), self.path, "/")?,
                    port,
                    token_env: env_name(&field("token_env"), &token_env)?,
                    tools,
                }))
            }
            RawTriggerKind::Github => {
                if self.token_env.is_some() {
                    return Err(invalid(
                        field("token_env"),
                        "is not a setting of a github trigger (use secret_env)",
                    ));
                }
                let events = self.events.ok_or_else(|| invalid(field("events"), "is required"))?;
                let events = EventFilter::parse(&events).map_err(|(i, message)| {
                    let at = if events.is_empty() { field("events") } else { format!("{at}.events[{i}]") };
                    invalid(at, message)
                })?;
                let repos = RepoPatterns::parse(&self.repos.unwrap_or_default())
                    .map_err(|(i, message)| invalid(format!("{at}.repos[{i}]"), message))?;
                let size = |name: &str, value: Option<usize>, default: usize, min: usize, max: usize| {
                    let value = value.unwrap_or(default);
                    if (min..=max).contains(&value) {
                        Ok(value)
                    } else {
                        Err(invalid(
                            field(name),
                            format!("must be between {min} and {max} bytes, got {value}"),
                        ))
                    }
                };
                let body_limit =
                    size("body_limit", self.body_limit, DEFAULT_GITHUB_BODY_LIMIT, 1024, 100 << 20)?;
                let text_limit =
                    size("text_limit", self.text_limit, DEFAULT_GITHUB_TEXT_LIMIT, 1024, 1 << 20)?;
                let dedupe_window = self.dedupe_window.unwrap_or(DEFAULT_DEDUPE_WINDOW);
                if dedupe_window < Duration::from_hours(1) || dedupe_window > Duration::from_hours(90 * 24) {
                    return Err(invalid(field("dedupe_window"), "must be between 1h and 90 days"));
                }
                let secret_env = self.secret_env.unwrap_or_else(|| DEFAULT_GITHUB_SECRET_ENV.to_owned());
                Ok(TriggerSettings::Github(GithubTrigger {
                    path: route_path(&field("path"), self.path, "/github")?,
                    port,
                    secret_env: env_name(&field("secret_env"), &secret_env)?,
                    body_limit,
                    rules: GithubRules { events, repos, text_limit, dedupe_window },
                    tools,
                }))
            }
        }
    }
}
