//! What the agent may do besides talking: the tool port, the registry of the tools an
//! agent has (what its setup gives it), and each trigger's choice among them. A call to an
//! unknown or disallowed tool, or a tool's failure, goes back to the model as text so it
//! can recover.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use async_trait::async_trait;

/// A tool call the model asked for; `arguments` is JSON text as the model wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// How a tool is described to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: serde_json::Value,
}

#[async_trait]
pub trait Tool: Send + Sync {
    fn spec(&self) -> ToolSpec;
    /// Runs the tool; the `Err` text is shown to the model as the tool's answer.
    async fn call(&self, arguments: serde_json::Value) -> Result<String, String>;
}

/// What a call gave the model, and whether the tool did what was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolAnswer {
    pub content: String,
    pub ok: bool,
}

impl ToolAnswer {
    /// A refusal or a failure, told to the model as `error: …`.
    fn refused(error: impl std::fmt::Display) -> Self {
        Self { content: format!("error: {error}"), ok: false }
    }
}

#[derive(Default, Clone)]
pub struct ToolRegistry {
    tools: BTreeMap<String, Arc<dyn Tool>>,
    specs: Vec<ToolSpec>,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.tools.keys()).finish()
    }
}

impl ToolRegistry {
    /// Adds a tool; a later one of the same name replaces it.
    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        let spec = tool.spec();
        self.specs.retain(|existing| existing.name != spec.name);
        self.tools.insert(spec.name.clone(), tool);
        self.specs.push(spec);
    }

    pub fn specs(&self) -> &[ToolSpec] {
        &self.specs
    }

    /// The specs of the tools `choice` allows: what a run of that trigger is offered.
    pub fn specs_for(&self, choice: &ToolChoice) -> Cow<'_, [ToolSpec]> {
        match choice {
            ToolChoice::All => Cow::Borrowed(&self.specs),
            ToolChoice::Only(_) => {
                Cow::Owned(self.specs.iter().filter(|spec| choice.allows(&spec.name)).cloned().collect())
            }
        }
    }

    /// Runs the call if `choice` allows it; a tool outside the choice is refused and does
    /// nothing.
    pub async fn call_within(&self, choice: &ToolChoice, call: &ToolCall) -> ToolAnswer {
        if !choice.allows(&call.name) {
            return ToolAnswer::refused(format!("the tool {:?} is not allowed for this trigger", call.name));
        }
        self.call(call).await
    }

    /// Runs the call.
    pub async fn call(&self, call: &ToolCall) -> ToolAnswer {
        let Some(tool) = self.tools.get(&call.name) else {
            return ToolAnswer::refused(format!("there is no tool named {:?}", call.name));
        };
        let arguments = if call.arguments.trim().is_empty() { "{}" } else { &call.arguments };
        let arguments = match serde_json::from_str(arguments) {
            Ok(arguments) => arguments,
            Err(error) => return ToolAnswer::refused(format!("the arguments are not JSON: {error}")),
        };
        match tool.call(arguments).await {
            Ok(content) => ToolAnswer { content, ok: true },
            Err(error) => ToolAnswer::refused(error),
        }
    }
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
    use super::ToolChoice;

    #[test]
    fn a_choice_narrows_or_allows_all() {
        assert!(ToolChoice::All.allows("anything"));
        let only = ToolChoice::Only(["list_projects".to_owned()].into());
        assert!(only.allows("list_projects") && !only.allows("mark_invoice_paid"));
    }
}
