//! The agent definition parser: every field, every default, every error.

#![expect(clippy::unwrap_used, reason = "tests")]

use std::time::Duration;

use accounts::Permission;
use agent::mcp::McpConnection;
use agent::{ModelSettings, OpenAiSettings};
use app::agent_definition::{AgentDefinition, BillableTools, GithubTrigger, TriggerSettings, WebhookTrigger};
use triggers::{EventFilter, GithubRules, Limits, MemoryScope, MemorySettings, RepoPatterns, ToolChoice};

const MINIMAL: &str = "
name: helper
model:
  provider: echo
triggers:
  - type: webhook
    token_env: WEBHOOK_TOKEN
";

fn parse(yaml: &str) -> AgentDefinition {
    AgentDefinition::parse("agent.yaml", yaml).unwrap_or_else(|e| panic!("{e}"))
}

/// Each case `(from, to, expected)`: `base` with `from` replaced by `to` is refused with a
/// message starting with `expected`.
fn assert_refused(base: &str, cases: &[(&str, &str, &str)]) {
    for (from, to, expected) in cases {
        let message = refused(&base.replacen(from, to, 1));
        assert!(message.starts_with(expected), "{from} -> {to}: {message}");
    }
}

/// The error message for `yaml`.
fn refused(yaml: &str) -> String {
    AgentDefinition::parse("agent.yaml", yaml).unwrap_err().to_string()
}

#[test]
fn a_minimal_definition_gets_every_default() {
    let definition = parse(MINIMAL);
    assert_eq!(definition.name, "helper");
    assert_eq!(definition.team, None);
    assert_eq!(definition.instructions, "");
    assert_eq!(definition.model, ModelSettings::Echo);
    assert_eq!(definition.memory, MemorySettings { scope: MemoryScope::None, max_messages: 50 });
    assert_eq!(
        definition.limits,
        Limits { queue_depth: 8, max_steps: 8, max_concurrent_runs: 16, run_timeout: Duration::from_mins(2) }
    );
    assert_eq!(
        definition.triggers,
        [TriggerSettings::Webhook(WebhookTrigger {
            path: "/".into(),
            port: 8080,
            token_env: "WEBHOOK_TOKEN".into(),
            tools: ToolChoice::All,
        })]
    );
    assert_eq!(definition.billable_tools, None, "no tools unless the definition gives them");
    assert_eq!(definition.triggers[0].secret_env(), Some(("token_env", "WEBHOOK_TOKEN")));
}

#[test]
fn every_field_is_read() {
    let definition = parse(
        "
name: support
team: Acme
instructions: |
  Be brief.
model:
  provider: openai
  base_url: http://127.0.0.1:11434/v1/
  model: llama3.2
  api_key_env: OLLAMA_KEY
  request_timeout: 30s
  max_retries: 5
memory:
  scope: thread
  max_messages: 20
limits:
  queue_depth: 2
  max_steps: 4
  max_concurrent_runs: 3
  run_timeout: 90
triggers:
  - type: webhook
    path: /hooks/support
    port: 9000
    token_env: SUPPORT_TOKEN
  - type: github
    port: 9000
    events: [pull_request, issue_comment.created]
    repos: [acme/api, acme/web-*]
",
    );
    assert_eq!(definition.team.as_deref(), Some("Acme"));
    assert_eq!(definition.instructions, "Be brief.\n");
    assert_eq!(
        definition.model,
        ModelSettings::OpenAi(OpenAiSettings {
            base_url: "http://127.0.0.1:11434/v1".into(),
            model: "llama3.2".into(),
            api_key_env: Some("OLLAMA_KEY".into()),
            request_timeout: Duration::from_secs(30),
            max_retries: 5,
        })
    );
    assert_eq!(definition.memory, MemorySettings { scope: MemoryScope::Thread, max_messages: 20 });
    assert_eq!(
        definition.limits,
        Limits { queue_depth: 2, max_steps: 4, max_concurrent_runs: 3, run_timeout: Duration::from_secs(90) }
    );
    assert_eq!(
        definition.triggers[1],
        TriggerSettings::Github(GithubTrigger {
            path: "/github".into(),
            port: 9000,
            secret_env: "GITHUB_WEBHOOK_SECRET".into(),
            body_limit: 25 * 1024 * 1024,
            rules: GithubRules {
                events: EventFilter::parse(&["pull_request".into(), "issue_comment.created".into()]).unwrap(),
                repos: RepoPatterns::parse(&["acme/api".into(), "acme/web-*".into()]).unwrap(),
                text_limit: 16 * 1024,
                dedupe_window: Duration::from_hours(7 * 24),
            },
            tools: ToolChoice::All,
        })
    );
    let secrets: Vec<_> = definition.triggers.iter().filter_map(TriggerSettings::secret_env).collect();
    assert_eq!(secrets, [("token_env", "SUPPORT_TOKEN"), ("secret_env", "GITHUB_WEBHOOK_SECRET")]);
}

#[test]
fn openai_defaults() {
    let definition = parse(&MINIMAL.replace(
        "provider: echo",
        "provider: openai\n  base_url: https://api.openai.com/v1\n  model: gpt-4o-mini",
    ));
    let ModelSettings::OpenAi(settings) = definition.model else { panic!("openai expected") };
    assert_eq!(settings.api_key_env, None);
    assert_eq!(settings.request_timeout, Duration::from_mins(1));
    assert_eq!(settings.max_retries, 3);
}

#[test]
fn errors_name_the_file_the_field_and_the_problem() {
    let cases: &[(&str, &str, &str)] = &[
        ("name: helper\n", "name: ''\n", "agent.yaml: name: must not be empty"),
        ("name: helper\n", "name: x\nnmae: y\n", "agent.yaml: nmae"),
        (
            "triggers:\n  - type: webhook\n    token_env: WEBHOOK_TOKEN\n",
            "triggers: []\n",
            "agent.yaml: triggers: must name at least one trigger",
        ),
        ("token_env: WEBHOOK_TOKEN", "token_env: 1WEBHOOK", "agent.yaml: triggers[0].token_env:"),
        ("    token_env: WEBHOOK_TOKEN", "    path: /x", "agent.yaml: triggers[0].token_env: is required"),
        ("type: webhook", "type: smtp", "agent.yaml: triggers[0].type: unknown variant `smtp`"),
        ("token_env: WEBHOOK_TOKEN", "token_env: T\n    port: 70000", "agent.yaml: triggers[0].port:"),
        ("token_env: WEBHOOK_TOKEN", "token_env: T\n    path: no-slash", "agent.yaml: triggers[0].path:"),
        (
            "token_env: WEBHOOK_TOKEN",
            "token_env: T\n    events: [push]",
            "agent.yaml: triggers[0].events: is not a setting",
        ),
        ("provider: echo", "provider: claude", "agent.yaml: model.provider: unknown variant `claude`"),
        (
            "provider: echo",
            "provider: echo\n  model: x",
            "agent.yaml: model.model: is not used by provider echo",
        ),
        ("provider: echo", "provider: openai\n  model: m", "agent.yaml: model.base_url: is required"),
        (
            "provider: echo",
            "provider: openai\n  base_url: ftp://x\n  model: m",
            "agent.yaml: model.base_url:",
        ),
        (
            "provider: echo",
            "provider: openai\n  base_url: http://x/v1",
            "agent.yaml: model.model: is required",
        ),
        (
            "provider: echo",
            "provider: openai\n  base_url: http://x\n  model: m\n  max_retries: 11",
            "model.max_retries: must be between 0 and 10",
        ),
        (
            "provider: echo",
            "provider: echo\nmemory:\n  scope: forever",
            "agent.yaml: memory.scope: unknown variant",
        ),
        (
            "provider: echo",
            "provider: echo\nmemory:\n  max_messages: 0",
            "memory.max_messages: must be between 1 and 10000",
        ),
        (
            "provider: echo",
            "provider: echo\nlimits:\n  max_steps: 0",
            "agent.yaml: limits.max_steps: must be between 1 and 100",
        ),
        ("provider: echo", "provider: echo\nlimits:\n  queue_depth: -1", "agent.yaml: limits.queue_depth:"),
        (
            "provider: echo",
            "provider: echo\nlimits:\n  max_concurrent_runs: 0",
            "limits.max_concurrent_runs: must be between",
        ),
        ("provider: echo", "provider: echo\nlimits:\n  run_timeout: soon", "agent.yaml: limits.run_timeout:"),
        (
            "provider: echo",
            "provider: echo\nlimits:\n  run_timeout: 0s",
            "limits.run_timeout: must be longer than zero",
        ),
        ("provider: echo", "provider: echo\nlimits:\n  burst: 3", "agent.yaml: limits.burst: unknown field"),
    ];
    for (from, to, expected) in cases {
        assert!(MINIMAL.contains(from), "{from:?} is not in the minimal definition");
        let message = refused(&MINIMAL.replace(from, to));
        assert!(
            message.starts_with(expected) || message.contains(expected),
            "{to:?}: got {message:?}, expected {expected:?}"
        );
    }
}

#[test]
fn missing_required_sections_are_named() {
    assert!(refused("name: x\ntriggers: []\n").contains("model"), "{}", refused("name: x\ntriggers: []\n"));
    assert!(refused("model:\n  provider: echo\ntriggers: []\n").contains("name"));
    assert!(refused("name: x\nmodel:\n  provider: echo\n").contains("triggers"));
    assert!(refused("").starts_with("agent.yaml: "));
    assert!(refused("name: [unclosed").starts_with("agent.yaml: "));
    assert!(refused("name: a\n  bad: indentation\n: x").starts_with("agent.yaml: "));
}

#[test]
fn github_triggers_have_their_own_rules() {
    let github = |extra: &str| {
        MINIMAL.replace("type: webhook\n    token_env: WEBHOOK_TOKEN", &format!("type: github\n{extra}"))
    };
    assert!(refused(&github("    repos: [a/b]")).contains("triggers[0].events: is required"));
    assert!(refused(&github("    events: []")).contains("triggers[0].events: must name at least one event"));
    assert!(refused(&github("    events: ['pull request']")).contains("triggers[0].events[0]"));
    assert!(refused(&github("    events: ['*']\n    repos: [justaname]")).contains("triggers[0].repos[0]"));
    assert!(refused(&github("    events: ['*']\n    token_env: X")).contains("use secret_env"));
    let definition = parse(&github("    events: ['*']\n    secret_env: HOOK_SECRET"));
    assert_eq!(definition.triggers[0].secret_env(), Some(("secret_env", "HOOK_SECRET")));
    assert_eq!(definition.triggers[0].route(), Some((8080, "/github")));
    assert!(
        refused(&github("    events: ['*']\n    body_limit: 10"))
            .contains("triggers[0].body_limit: must be between")
    );
    assert!(
        refused(&github("    events: ['*']\n    dedupe_window: 1m")).contains("triggers[0].dedupe_window")
    );
    let TriggerSettings::Github(tuned) =
        &parse(&github("    events: ['*']\n    text_limit: 4096\n    dedupe_window: 3d")).triggers[0]
    else {
        panic!("a github trigger");
    };
    assert_eq!((tuned.rules.text_limit, tuned.rules.dedupe_window), (4096, Duration::from_hours(72)));
    let webhook =
        MINIMAL.replace("token_env: WEBHOOK_TOKEN", "token_env: WEBHOOK_TOKEN\n    body_limit: 5000");
    assert!(refused(&webhook).contains("triggers[0].body_limit: is not a setting of a webhook trigger"));
}

#[test]
fn two_triggers_on_one_port_and_path_are_refused() {
    let yaml = format!("{MINIMAL}  - type: webhook\n    token_env: OTHER\n");
    assert_eq!(
        refused(&yaml),
        "agent.yaml: triggers[1].path: port 8080 and path / are already taken by triggers[0]"
    );
    // Another path on the same port shares the listener.
    let definition = parse(&format!("{MINIMAL}  - type: webhook\n    path: /other\n    token_env: OTHER\n"));
    assert_eq!(definition.triggers.len(), 2);
}

const WITH_TOOLS: &str = "
name: timekeeper
model:
  provider: echo
tools:
  billable:
    user: owner@example.com
    permissions: [track:write, invoices:read]
triggers:
  - type: webhook
    token_env: WEBHOOK_TOKEN
  - type: github
    events: [pull_request]
    tools: [list_projects, create_time_entry]
";

#[test]
fn tools_act_as_a_user_with_listed_permissions_narrowed_per_trigger() {
    let definition = parse(WITH_TOOLS);
    assert_eq!(
        definition.billable_tools,
        Some(BillableTools {
            user: "owner@example.com".into(),
            permissions: [Permission::TrackWrite, Permission::InvoicesRead].into(),
        })
    );
    assert_eq!(definition.triggers[0].tools(), &ToolChoice::All);
    assert_eq!(
        definition.triggers[1].tools(),
        &ToolChoice::Only(["create_time_entry".to_owned(), "list_projects".to_owned()].into())
    );
}

#[test]
fn tool_errors_name_the_field() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "[track:write, invoices:read]",
            "[track:all]",
            "agent.yaml: tools.billable.permissions[0]: must be one of",
        ),
        (
            "[track:write, invoices:read]",
            "[]",
            "agent.yaml: tools.billable.permissions: must list at least one",
        ),
        ("user: owner@example.com", "user: ''", "agent.yaml: tools.billable.user: must not be empty"),
        (
            "[list_projects, create_time_entry]",
            "[list_projects, drop_tables]",
            "agent.yaml: triggers[1].tools[1]: there is no built-in tool named \"drop_tables\"",
        ),
        (
            "[list_projects, create_time_entry]",
            "[mark_invoice_paid]",
            "agent.yaml: triggers[1].tools[0]: mark_invoice_paid needs invoices:write, which tools.billable.permissions does not grant",
        ),
        (
            "billable:\n    user",
            "billable_tools:\n    user",
            "agent.yaml: tools.billable_tools: unknown field `billable_tools`",
        ),
    ];
    assert_refused(WITH_TOOLS, cases);
    let without = "name: x\nmodel:\n  provider: echo\ntriggers:\n  - type: webhook\n    token_env: T\n    tools: [list_tags]\n";
    assert_eq!(
        refused(without),
        "agent.yaml: triggers[0].tools[0]: names a tool, but the agent has none (tools.billable is not set)"
    );
    let differing = format!("{WITH_TOOLS}  - type: github\n    path: /gh2\n    events: [push]\n");
    assert_eq!(
        refused(&differing),
        "agent.yaml: triggers[2].tools: must be the same for every github trigger"
    );
}

#[test]
fn mcp_servers_are_a_command_or_a_url_with_named_errors() {
    let definition = parse(
        "
name: x
model:
  provider: echo
tools:
  mcp:
    - name: everything
      command: [npx, -y, '@modelcontextprotocol/server-everything']
      env: {LOG: quiet}
    - name: books
      url: https://books.example.com/mcp
      headers_env: {Authorization: BOOKS_AUTH}
      timeout: 5s
triggers:
  - type: webhook
    token_env: T
    tools: [everything__echo, books__list_clients]
",
    );
    assert_eq!(definition.mcp_servers.len(), 2);
    assert_eq!(definition.mcp_servers[0].timeout, Duration::from_mins(1), "the default call timeout");
    assert_eq!(
        definition.mcp_servers[1].connection,
        McpConnection::Http {
            url: "https://books.example.com/mcp".into(),
            headers_env: [("Authorization".to_owned(), "BOOKS_AUTH".to_owned())].into(),
        }
    );
    let base = "name: x\nmodel:\n  provider: echo\ntools:\n  mcp:\n    - name: s\n      command: [run]\ntriggers:\n  - type: webhook\n    token_env: T\n";
    let cases: &[(&str, &str, &str)] = &[
        ("    - name: s\n", "    - name: a__b\n", "agent.yaml: tools.mcp[0].name: must be 1–32 letters"),
        (
            "      command: [run]\n",
            "      command: []\n",
            "agent.yaml: tools.mcp[0].command: must name a program",
        ),
        (
            "      command: [run]\n",
            "      command: [run]\n      url: http://x\n",
            "agent.yaml: tools.mcp[0]: needs exactly one of command and url",
        ),
        (
            "      command: [run]\n",
            "      url: ftp://x\n",
            "agent.yaml: tools.mcp[0].url: must start with http:// or https://",
        ),
        (
            "      command: [run]\n",
            "      url: http://x\n      headers_env: {A: 1BAD}\n",
            "agent.yaml: tools.mcp[0].headers_env.A:",
        ),
        (
            "      command: [run]\n",
            "      command: [run]\n      timeout: 0s\n",
            "agent.yaml: tools.mcp[0].timeout: must be between 1s and 10m",
        ),
        (
            "    token_env: T\n",
            "    token_env: T\n    tools: [other__x]\n",
            "agent.yaml: triggers[0].tools[0]: \"other__x\" names no MCP server of tools.mcp",
        ),
    ];
    assert_refused(base, cases);
    let twice =
        base.replace("      command: [run]\n", "      command: [run]\n    - name: s\n      command: [run]\n");
    assert_eq!(refused(&twice), "agent.yaml: tools.mcp[1].name: \"s\" is listed twice");
}

#[test]
fn a_write_permission_allows_its_reads_and_nothing_else() {
    let tools = BillableTools { user: "u".into(), permissions: [Permission::TrackWrite].into() };
    let allowed: Vec<_> = tools.allowed().iter().map(|t| t.name).collect();
    assert!(allowed.contains(&"create_time_entry") && allowed.contains(&"list_projects"));
    assert!(!allowed.iter().any(|name| name.contains("invoice") || name.contains("client")));
}

#[test]
fn the_events_trigger_names_events_and_has_no_listener() {
    let base = "
name: collections
model:
  provider: echo
tools:
  billable:
    user: owner@billable.localhost
    permissions: [invoices:write]
triggers:
  - type: events
    events: [invoice.overdue, payment.*]
    tools: [send_reminder]
";
    let definition = parse(base);
    let [TriggerSettings::Events(events)] = definition.triggers.as_slice() else {
        panic!("{:?}", definition.triggers)
    };
    assert_eq!(events.events.words(), ["invoice.overdue", "payment.*"]);
    assert_eq!(events.team, None);
    assert_eq!(definition.triggers[0].route(), None, "no listener");
    assert_eq!(definition.triggers[0].secret_env(), None, "no caller to authenticate");
    assert_eq!(parse(&base.replace("    events: [", "    team: Default\n    events: [")).triggers.len(), 1);
    assert_refused(
        base,
        &[
            (
                "invoice.overdue",
                "invoice.late",
                "agent.yaml: triggers[0].events[0]: \"invoice.late\" names no event type",
            ),
            ("    events: [invoice.overdue, payment.*]\n", "", "agent.yaml: triggers[0].events: is required"),
            ("[invoice.overdue, payment.*]", "[]", "agent.yaml: triggers[0].events: at least one"),
            (
                "    tools: [send_reminder]",
                "    port: 8080",
                "agent.yaml: triggers[0].port: is not a setting of an events trigger",
            ),
            (
                "    tools: [send_reminder]",
                "    path: /x",
                "agent.yaml: triggers[0].path: is not a setting of an events trigger",
            ),
        ],
    );
    let twice = format!("{base}  - type: events\n    events: ['*']\n");
    assert!(
        refused(&twice).starts_with("agent.yaml: triggers[1].type: an agent has at most one events trigger")
    );
    let team_on_webhook =
        MINIMAL.replace("    token_env: WEBHOOK_TOKEN", "    token_env: WEBHOOK_TOKEN\n    team: Default");
    assert!(
        refused(&team_on_webhook)
            .starts_with("agent.yaml: triggers[0].team: is a setting of the events trigger only")
    );
}
