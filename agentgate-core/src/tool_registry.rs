//! [`ToolRegistry`]: the tools a session can use, and which of them the
//! model may see (§5).

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use agentgate_permission::{Ruleset, is_disabled};

use crate::model::ToolSpec;
use crate::tool::Tool;

/// The registered tools, with their specs computed once.
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: Vec<(Arc<dyn Tool>, ToolSpec)>,
    index: HashMap<String, usize>,
}

impl fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.ids()).finish()
    }
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a tool (replacing one with the same id).
    pub fn register(&mut self, tool: impl Tool + 'static) -> &mut Self {
        self.register_arc(Arc::new(tool))
    }

    /// Adds a shared tool (replacing one with the same id).
    pub fn register_arc(&mut self, tool: Arc<dyn Tool>) -> &mut Self {
        let spec = ToolSpec {
            name: tool.id().to_string(),
            description: tool.description().to_string(),
            parameters: Arc::new(tool.parameters()),
        };
        match self.index.get(&spec.name) {
            Some(&i) => self.tools[i] = (tool, spec),
            None => {
                self.index.insert(spec.name.clone(), self.tools.len());
                self.tools.push((tool, spec));
            }
        }
        self
    }

    /// Builder-style [`register`](Self::register).
    pub fn with(mut self, tool: impl Tool + 'static) -> Self {
        self.register(tool);
        self
    }

    /// A tool by id.
    pub fn get(&self, id: &str) -> Option<&Arc<dyn Tool>> {
        self.index.get(id).map(|&i| &self.tools[i].0)
    }

    /// The registered ids, in registration order.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(|(_, spec)| spec.name.as_str())
    }

    /// The number of tools.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether no tool is registered.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The specs of the tools the model may see under `ruleset` (normally
    /// `merge(agent.permission, session.permission)`): every tool that
    /// [`is_disabled`] does not hide.
    pub fn visible(&self, ruleset: &Ruleset) -> Vec<ToolSpec> {
        self.tools
            .iter()
            .filter(|(_, spec)| !is_disabled(&spec.name, ruleset))
            .map(|(_, spec)| spec.clone())
            .collect()
    }

    /// The tool a model's call named, if visible under `ruleset`: the exact
    /// name, else its lower-case form (opencode repairs `Read` to `read`).
    pub fn resolve(&self, name: &str, ruleset: &Ruleset) -> Option<Arc<dyn Tool>> {
        let found = self.get(name).or_else(|| {
            let lower = name.to_lowercase();
            self.get(&lower)
        })?;
        (!is_disabled(found.id(), ruleset)).then(|| Arc::clone(found))
    }
}
