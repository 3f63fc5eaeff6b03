//! MCP servers as tools: each server the definition lists (`tools.mcp`) is connected at
//! startup, over stdio (a command) or streamable HTTP (a URL), with the official Rust SDK
//! (`rmcp`); its tools are offered to the model as `<server>__<tool>`. A call that finds
//! the connection broken connects again once; every call has the server's timeout.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use tokio::sync::Mutex;
use triggers::{Tool, ToolRegistry, ToolSpec};

/// An MCP server whose tools the agent is offered as `<name>__<tool>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServerSettings {
    /// Letters, digits, `-` and `_`; no `__`.
    pub name: String,
    pub connection: McpConnection,
    /// How long one tool call may take.
    pub timeout: Duration,
}

/// How to reach an MCP server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpConnection {
    /// A command spoken to over its stdin and stdout: the program, then its arguments.
    /// `env` is added to the environment it inherits.
    Stdio { command: Vec<String>, env: BTreeMap<String, String> },
    /// A streamable-HTTP endpoint; each header's value is read from the environment
    /// variable named beside it.
    Http { url: String, headers_env: BTreeMap<String, String> },
}

/// What separates an MCP server's name from its tool's in the names the model sees.
pub const MCP_SEPARATOR: &str = "__";

/// The server part of an MCP tool's name (`github__create_issue` → `github`).
pub fn mcp_server_of(tool: &str) -> Option<&str> {
    tool.split_once(MCP_SEPARATOR).map(|(server, _)| server)
}

/// How long connecting to a server (and its `initialize`) may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

type Session = RunningService<RoleClient, ()>;

/// One MCP server: how to reach it, and the session, connected again when it breaks.
pub struct McpServer {
    name: String,
    connection: McpConnection,
    /// Header values for an HTTP server, read from the environment at startup.
    headers: HashMap<String, String>,
    timeout: Duration,
    session: Mutex<Option<Arc<Session>>>,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer").field("name", &self.name).finish_non_exhaustive()
    }
}

impl McpServer {
    /// Connects to the server `settings` describes and registers its tools in `registry`;
    /// `headers` are the values of `headers_env`. The error says what failed.
    pub async fn register(
        settings: &McpServerSettings,
        headers: HashMap<String, String>,
        registry: &mut ToolRegistry,
    ) -> Result<Arc<Self>, String> {
        let server = Arc::new(Self {
            name: settings.name.clone(),
            connection: settings.connection.clone(),
            headers,
            timeout: settings.timeout,
            session: Mutex::new(None),
        });
        let session = server.session().await?;
        let listed = tokio::time::timeout(server.timeout, session.list_all_tools()).await;
        let tools = listed
            .map_err(|_| format!("listing its tools took longer than {:?}", server.timeout))?
            .map_err(|e| format!("cannot list its tools: {e}"))?;
        for tool in tools {
            let spec = ToolSpec {
                name: format!("{}{MCP_SEPARATOR}{}", server.name, tool.name),
                description: tool.description.as_deref().unwrap_or_default().to_owned(),
                parameters: serde_json::Value::Object((*tool.input_schema).clone()),
            };
            registry.register(Arc::new(McpTool {
                server: server.clone(),
                tool: tool.name.to_string(),
                spec,
            }));
        }
        Ok(server)
    }

    /// The session, connecting first when there is none.
    async fn session(&self) -> Result<Arc<Session>, String> {
        let mut session = self.session.lock().await;
        if let Some(session) = session.as_ref().filter(|s| !s.is_transport_closed()) {
            return Ok(session.clone());
        }
        let connected = tokio::time::timeout(CONNECT_TIMEOUT, self.connect())
            .await
            .map_err(|_| format!("connecting took longer than {CONNECT_TIMEOUT:?}"))??;
        let connected = Arc::new(connected);
        *session = Some(connected.clone());
        Ok(connected)
    }

    async fn connect(&self) -> Result<Session, String> {
        match &self.connection {
            McpConnection::Stdio { command, env } => {
                let mut process = tokio::process::Command::new(&command[0]);
                process.args(&command[1..]).envs(env).kill_on_drop(true);
                let transport = TokioChildProcess::new(process)
                    .map_err(|e| format!("cannot start {:?}: {e}", command[0]))?;
                ().serve(transport).await.map_err(|e| e.to_string())
            }
            McpConnection::Http { url, .. } => {
                // reqwest's rustls needs a crypto provider: ring, as every TLS of the process.
                let _ = rustls::crypto::ring::default_provider().install_default();
                let headers = self
                    .headers
                    .iter()
                    .map(|(name, value)| Ok((name.parse()?, value.parse()?)))
                    .collect::<Result<HashMap<_, _>, Box<dyn std::error::Error>>>()
                    .map_err(|e| format!("a header of headers_env is not valid in HTTP: {e}"))?;
                let mut config =
                    StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(headers);
                config.allow_stateless = true;
                let transport = StreamableHttpClientTransport::from_config(config);
                ().serve(transport).await.map_err(|e| e.to_string())
            }
        }
    }

    /// Calls `tool`; connects again and retries once when the session was broken.
    async fn call(&self, tool: &str, arguments: serde_json::Value) -> Result<String, String> {
        let serde_json::Value::Object(arguments) = arguments else {
            return Err("the arguments must be a JSON object".to_owned());
        };
        for attempt in 0..2 {
            let session = self.session().await?;
            let request = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments.clone());
            match tokio::time::timeout(self.timeout, session.call_tool(request)).await {
                Err(_) => return Err(format!("the tool took longer than {:?}", self.timeout)),
                Ok(Ok(result)) => return answer(&result),
                Ok(Err(error)) if attempt == 0 && session.is_transport_closed() => {
                    tracing::warn!(server = %self.name, %error, "the MCP server's connection broke; connecting again");
                    *self.session.lock().await = None;
                }
                Ok(Err(error)) => return Err(error.to_string()),
            }
        }
        Err("the MCP server's connection broke twice".to_owned())
    }
}

/// The text of a tool's result (its text contents, joined), as the model reads it.
fn answer(result: &CallToolResult) -> Result<String, String> {
    let texts: Vec<&str> =
        result.content.iter().filter_map(|c| c.as_text()).map(|t| t.text.as_str()).collect();
    let text = if texts.is_empty() {
        result.structured_content.as_ref().map(ToString::to_string).unwrap_or_default()
    } else {
        texts.join("\n")
    };
    if result.is_error == Some(true) { Err(text) } else { Ok(text) }
}

/// One tool of an MCP server, as the runtime calls it.
struct McpTool {
    server: Arc<McpServer>,
    tool: String,
    spec: ToolSpec,
}

#[async_trait]
impl Tool for McpTool {
    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }

    async fn call(&self, arguments: serde_json::Value) -> Result<String, String> {
        self.server.call(&self.tool, arguments).await
    }
}

/// The values of a server's `headers_env`, read through `env`; the missing variable's name
/// when one is not set.
pub fn resolve_headers(
    headers_env: &BTreeMap<String, String>,
    env: impl Fn(&str) -> Option<String>,
) -> Result<HashMap<String, String>, (String, String)> {
    headers_env
        .iter()
        .map(|(header, variable)| {
            env(variable)
                .filter(|v| !v.is_empty())
                .map(|v| (header.clone(), v))
                .ok_or((header.clone(), variable.clone()))
        })
        .collect()
}
