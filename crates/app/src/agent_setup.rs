//! Wiring of the agent runtime: the definition file and the secrets it names, the team its
//! runs belong to, the runtime, and the trigger listeners.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use accounts::{AccountStore, TeamId};
use agent::mcp::{McpConnection, McpServer};
use agent::{AgentRuntime, DeliveryWorker, ModelSettings, OpenAiSettings, WorkerSettings};
use anyhow::{Context, anyhow};
use http_api::triggers::{GithubRoute, TriggerRoute, WebhookRoute};
use kernel::{Clock, Id};
use triggers::{AgentStore, ConversationTurns, Intake, RetryPolicy, Secrets, ToolChoice, ToolRegistry};

use crate::agent_definition::{AgentDefinition, TriggerSettings};

/// A loaded agent definition with every secret it names resolved.
#[derive(Debug)]
pub struct AgentSetup {
    file: String,
    pub definition: AgentDefinition,
    /// The credentials of each trigger, in the order of `triggers` (none for the events
    /// trigger).
    secrets: Vec<Option<Secrets>>,
    api_key: Option<String>,
    /// The header values of each MCP server, in the order of `tools.mcp`.
    mcp_headers: Vec<HashMap<String, String>>,
}

impl AgentSetup {
    /// Reads and checks the definition at `path`, and resolves its secrets through `env`
    /// (the process environment in production). Fails naming the file and the field.
    pub fn load(path: &Path, env: impl Fn(&str) -> Option<String>) -> anyhow::Result<Self> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the agent definition {file}"))?;
        let definition = AgentDefinition::parse(&file, &text)?;
        Self::resolve(file, definition, env)
    }

    /// Resolves the secrets of an already parsed definition.
    pub fn resolve(
        file: String,
        definition: AgentDefinition,
        env: impl Fn(&str) -> Option<String>,
    ) -> anyhow::Result<Self> {
        let missing = |field: &str, variable: &str| {
            anyhow!("{file}: {field}: the environment variable {variable} is not set (or holds no value)")
        };
        let secrets = definition
            .triggers
            .iter()
            .enumerate()
            .map(|(i, trigger)| {
                let Some((field, variable)) = trigger.secret_env() else { return Ok(None) };
                let value = env(variable).and_then(|value| Secrets::parse(&value));
                value.map(Some).ok_or_else(|| missing(&format!("triggers[{i}].{field}"), variable))
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        let api_key = match &definition.model {
            ModelSettings::OpenAi(OpenAiSettings { api_key_env: Some(variable), .. }) => {
                let key = env(variable).filter(|key| !key.trim().is_empty());
                Some(key.ok_or_else(|| missing("model.api_key_env", variable))?.trim().to_owned())
            }
            _ => None,
        };
        let mcp_headers = definition
            .mcp_servers
            .iter()
            .enumerate()
            .map(|(i, server)| match &server.connection {
                McpConnection::Http { headers_env, .. } => agent::mcp::resolve_headers(headers_env, &env)
                    .map_err(|(header, variable)| {
                        missing(&format!("tools.mcp[{i}].headers_env.{header}"), &variable)
                    }),
                McpConnection::Stdio { .. } => Ok(HashMap::new()),
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        Ok(Self { file, definition, secrets, api_key, mcp_headers })
    }

    /// The tools the definition gives the agent: the built-in ones (none without
    /// `tools.billable`), acting in `team` over `state`'s stores, then each MCP server's,
    /// connected now. Fails naming the field when a server or a trigger's tool is missing.
    pub async fn tools(
        &self,
        team: TeamId,
        accounts: &dyn AccountStore,
        state: Arc<http_api::ApiState>,
    ) -> anyhow::Result<ToolRegistry> {
        let mut registry = match &self.definition.billable_tools {
            None => ToolRegistry::default(),
            Some(settings) => {
                crate::agent_tools::builtin_tools(&self.file, settings, team, accounts, state).await?
            }
        };
        for (i, (server, headers)) in self.definition.mcp_servers.iter().zip(&self.mcp_headers).enumerate() {
            McpServer::register(server, headers.clone(), &mut registry)
                .await
                .map_err(|e| anyhow!("{}: tools.mcp[{i}]: MCP server {}: {e}", self.file, server.name))?;
        }
        // A trigger's list may name an MCP server's tool only the server can vouch for.
        let offered: Vec<&str> = registry.specs().iter().map(|s| s.name.as_str()).collect();
        for (i, trigger) in self.definition.triggers.iter().enumerate() {
            if let ToolChoice::Only(names) = trigger.tools()
                && let Some(name) = names.iter().find(|name| !offered.contains(&name.as_str()))
            {
                return Err(anyhow!("{}: triggers[{i}].tools: {name} is not a tool of the agent", self.file));
            }
        }
        Ok(registry)
    }

    /// The team the definition names (by id or name), or the only one there is.
    pub async fn team(&self, accounts: &dyn AccountStore) -> anyhow::Result<TeamId> {
        pick_team(accounts, self.definition.team.as_deref())
            .await?
            .map_err(|problem| anyhow!("{}: team: {problem}", self.file))
    }

    /// The agent ready to serve over `store`, its conversations' lines kept by `turns`:
    /// its runtime, the worker of the repository triggers' queue (when there is one), and
    /// the routes of each trigger port.
    #[expect(clippy::too_many_arguments, reason = "each is one part the wiring chose")]
    pub fn assemble(
        &self,
        team: TeamId,
        store: &Arc<dyn AgentStore>,
        turns: Arc<dyn ConversationTurns>,
        clock: &Arc<dyn Clock>,
        tools: ToolRegistry,
        retry: RetryPolicy,
        lease: Duration,
    ) -> anyhow::Result<AgentService> {
        let model = agent::model_for(&self.definition.model, self.api_key.clone())
            .map_err(|e| anyhow!("{}: model: {e}", self.file))?;
        let runtime = Arc::new(AgentRuntime::new(
            self.definition.settings(),
            team,
            model,
            tools,
            store.clone(),
            turns,
            clock.clone(),
        ));
        let github: Vec<_> = self
            .definition
            .triggers
            .iter()
            .filter_map(|t| if let TriggerSettings::Github(github) = t { Some(github) } else { None })
            .collect();
        let worker = github.iter().map(|t| t.rules.dedupe_window).max().map(|dedupe_window| {
            let settings = WorkerSettings {
                max_running: self.definition.limits.max_concurrent_runs as usize,
                retry,
                dedupe_window,
                lease,
                // The definition refuses github triggers with different lists.
                tools: github.first().map(|t| t.tools.clone()).unwrap_or_default(),
            };
            DeliveryWorker::new(team, store.clone(), runtime.clone(), clock.clone(), settings)
        });
        let mut listeners: BTreeMap<u16, Vec<TriggerRoute>> = BTreeMap::new();
        let mut events = None;
        for (trigger, secrets) in self.definition.triggers.iter().zip(&self.secrets) {
            if let TriggerSettings::Events(trigger) = trigger {
                events = Some(outbound::AgentJobs { agent: runtime.clone(), tools: trigger.tools.clone() });
                continue;
            }
            let Some(secrets) = secrets.clone() else { continue };
            let route = match trigger {
                TriggerSettings::Events(_) => continue,
                TriggerSettings::Webhook(webhook) => TriggerRoute::Webhook(WebhookRoute {
                    path: webhook.path.clone(),
                    tokens: secrets,
                    tools: webhook.tools.clone(),
                }),
                TriggerSettings::Github(github) => {
                    let worker = worker.clone();
                    let on_accept = Box::new(move || worker.iter().for_each(DeliveryWorker::wake));
                    let intake =
                        Intake::new(team, github.rules.clone(), store.clone(), clock.clone(), on_accept);
                    TriggerRoute::Github(GithubRoute {
                        path: github.path.clone(),
                        secrets,
                        body_limit: github.body_limit,
                        intake: Arc::new(intake),
                    })
                }
            };
            if let Some((port, _)) = trigger.route() {
                listeners.entry(port).or_default().push(route);
            }
        }
        Ok(AgentService { runtime, worker, listeners, events })
    }

    /// The events trigger's filter, checked to be of `team` (the agent's): what the
    /// agent's subscription is set to at startup; `None` without such a trigger.
    pub async fn subscription(
        &self,
        team: TeamId,
        accounts: &dyn AccountStore,
    ) -> anyhow::Result<Option<notify::EventFilter>> {
        let trigger = self.definition.triggers.iter().enumerate().find_map(|(i, t)| match t {
            TriggerSettings::Events(events) => Some((i, events)),
            _ => None,
        });
        let Some((i, trigger)) = trigger else { return Ok(None) };
        if let Some(named) = &trigger.team {
            let events_team = pick_team(accounts, Some(named))
                .await?
                .map_err(|problem| anyhow!("{}: triggers[{i}].team: {problem}", self.file))?;
            if events_team != team {
                return Err(anyhow!(
                    "{}: triggers[{i}].team: names another team than the agent's; events of one team wake only its own agent",
                    self.file
                ));
            }
        }
        Ok(Some(trigger.events.clone()))
    }
}

/// The agent's parts, ready to serve.
#[derive(Debug)]
pub struct AgentService {
    pub runtime: Arc<AgentRuntime>,
    /// Runs the repository triggers' deliveries; `None` without such a trigger.
    pub worker: Option<DeliveryWorker>,
    /// The trigger routes of each port, ports in ascending order.
    pub listeners: BTreeMap<u16, Vec<TriggerRoute>>,
    /// What the job runner needs to run the events trigger's runs; `None` without one.
    pub events: Option<outbound::AgentJobs>,
}

/// The team `wanted` names by id or name (in any case), or, when it is `None`, the only team there is;
/// the inner `Err` says why there is no single answer.
pub async fn pick_team(
    accounts: &dyn AccountStore,
    wanted: Option<&str>,
) -> anyhow::Result<Result<TeamId, String>> {
    let teams = accounts.list_teams().await?;
    Ok(match wanted {
        Some(wanted) => {
            let by_id = TeamId::parse(wanted);
            let named = |name: &str| name.to_lowercase() == wanted.to_lowercase();
            let mut matching = teams.iter().filter(|t| Some(t.id) == by_id || named(t.name.as_str()));
            match (matching.next(), matching.next()) {
                (Some(team), None) => Ok(team.id),
                (Some(_), Some(_)) => Err(format!("several teams are named {wanted:?}; give the team id")),
                (None, _) => Err(format!("no team has the id or name {wanted:?}")),
            }
        }
        None => match teams.as_slice() {
            [team] => Ok(team.id),
            [] => Err("there is no team yet".to_owned()),
            _ => Err(format!("there are {} teams; name one (by id or name)", teams.len())),
        },
    })
}
