//! What the agent may do besides talking: the built-in tools over the team's billing and
//! time, each needing its permissions, and the agent definition's choice of them.

use std::collections::BTreeSet;

use accounts::Permission;

/// A built-in tool: one operation of the REST API, by name, and the permissions it needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuiltinTool {
    pub name: &'static str,
    /// All of them (one, but for billing time, which reads time and writes an invoice).
    pub permissions: &'static [Permission],
}

impl BuiltinTool {
    /// The first permission the tool needs that `granted` does not say yes to; `None` when
    /// it may be called.
    pub fn lacking(&self, granted: impl Fn(Permission) -> bool) -> Option<Permission> {
        self.permissions.iter().copied().find(|permission| !granted(*permission))
    }
}

const fn tool(name: &'static str, permissions: &'static [Permission]) -> BuiltinTool {
    BuiltinTool { name, permissions }
}

/// Every built-in tool, by name. The names are part of the agent definition's contract.
pub const BUILTIN_TOOLS: [BuiltinTool; 20] = [
    tool("list_clients", &[Permission::ClientsRead]),
    tool("get_client", &[Permission::ClientsRead]),
    tool("create_client", &[Permission::ClientsWrite]),
    tool("list_invoices", &[Permission::InvoicesRead]),
    tool("get_invoice", &[Permission::InvoicesRead]),
    tool("create_invoice", &[Permission::InvoicesWrite]),
    tool("update_invoice", &[Permission::InvoicesWrite]),
    tool("mark_invoice_paid", &[Permission::InvoicesWrite]),
    tool("list_time_entries", &[Permission::TrackRead]),
    tool("get_time_entry", &[Permission::TrackRead]),
    tool("create_time_entry", &[Permission::TrackWrite]),
    tool("update_time_entry", &[Permission::TrackWrite]),
    tool("delete_time_entry", &[Permission::TrackWrite]),
    tool("list_projects", &[Permission::TrackRead]),
    tool("create_project", &[Permission::TrackWrite]),
    tool("list_tags", &[Permission::TrackRead]),
    tool("create_tag", &[Permission::TrackWrite]),
    tool("list_sections", &[Permission::TrackRead]),
    tool("bill_time", &[Permission::InvoicesWrite, Permission::TrackRead]),
    tool("time_report", &[Permission::TrackRead]),
];

/// The built-in tool named `name`.
pub fn builtin_tool(name: &str) -> Option<BuiltinTool> {
    BUILTIN_TOOLS.iter().copied().find(|tool| tool.name == name)
}

/// The definition's `tools.billable`: the built-in tools act as `user` of the agent's
/// team, with a restricted key's `permissions`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BillableTools {
    /// The user's id or email, as written; resolved at startup.
    pub user: String,
    pub permissions: BTreeSet<Permission>,
}

impl BillableTools {
    /// The permissions as a restricted key's scope.
    pub fn scope(&self) -> accounts::Scope {
        accounts::Scope::Restricted(self.permissions.clone())
    }

    /// The built-in tools these permissions allow, in catalogue order (a write
    /// permission allows its read, as for keys).
    pub fn allowed(&self) -> Vec<BuiltinTool> {
        let scope = self.scope();
        BUILTIN_TOOLS.iter().copied().filter(|tool| tool.lacking(|p| scope.allows(p)).is_none()).collect()
    }
}

/// An MCP server whose tools the agent is offered as `<name>__<tool>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServerSettings {
    /// Letters, digits, `-` and `_`; no `__`.
    pub name: String,
    pub connection: McpConnection,
    /// How long one tool call may take.
    pub timeout: std::time::Duration,
}

/// How to reach an MCP server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpConnection {
    /// A command spoken to over its stdin and stdout: the program, then its arguments.
    /// `env` is added to the environment it inherits.
    Stdio { command: Vec<String>, env: std::collections::BTreeMap<String, String> },
    /// A streamable-HTTP endpoint; each header's value is read from the environment
    /// variable named beside it.
    Http { url: String, headers_env: std::collections::BTreeMap<String, String> },
}

/// What separates an MCP server's name from its tool's in the names the model sees.
pub const MCP_SEPARATOR: &str = "__";

/// The server part of an MCP tool's name (`github__create_issue` → `github`).
pub fn mcp_server_of(tool: &str) -> Option<&str> {
    tool.split_once(MCP_SEPARATOR).map(|(server, _)| server)
}

/// A trigger's choice among the agent's tools.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ToolChoice {
    /// Every tool the agent has.
    #[default]
    All,
    /// Only these, by name.
    Only(BTreeSet<String>),
}

impl ToolChoice {
    pub fn allows(&self, name: &str) -> bool {
        match self {
            Self::All => true,
            Self::Only(names) => names.contains(name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{BUILTIN_TOOLS, BillableTools, ToolChoice, builtin_tool};
    use accounts::Permission;

    #[test]
    fn names_are_unique_and_found() {
        let mut names: Vec<_> = BUILTIN_TOOLS.iter().map(|t| t.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), BUILTIN_TOOLS.len());
        assert_eq!(
            builtin_tool("mark_invoice_paid").map(|t| t.permissions),
            Some(&[Permission::InvoicesWrite][..])
        );
        assert_eq!(builtin_tool("drop_database"), None);
    }

    #[test]
    fn a_write_permission_allows_its_reads_and_nothing_else() {
        let tools = BillableTools { user: "u".into(), permissions: [Permission::TrackWrite].into() };
        let allowed: Vec<_> = tools.allowed().iter().map(|t| t.name).collect();
        assert!(allowed.contains(&"create_time_entry") && allowed.contains(&"list_projects"));
        assert!(!allowed.iter().any(|name| name.contains("invoice") || name.contains("client")));
    }

    #[test]
    fn a_choice_narrows_or_allows_all() {
        assert!(ToolChoice::All.allows("anything"));
        let only = ToolChoice::Only(["list_projects".to_owned()].into());
        assert!(only.allows("list_projects") && !only.allows("mark_invoice_paid"));
    }
}
