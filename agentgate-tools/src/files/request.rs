//! [`ToolRequest`]: a permission request a file tool will make, computed
//! before it is asked, so hosts and tests can see what a call would ask
//! without running it.

use agentgate_core::ToolContext;
use std::sync::Arc;

use agentgate_permission::{PermissionError, Rule, Ruleset};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One permission request a tool makes (the fields of `ctx.ask`, §7.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolRequest {
    /// The permission name (`read`, `edit`, `external_directory` ...).
    pub permission: String,
    /// The patterns that need approval.
    pub patterns: Vec<String>,
    /// The patterns an "always" answer approves.
    pub always: Vec<String>,
    /// Data shown to the approver.
    pub metadata: Value,
}

impl ToolRequest {
    /// A request for `permission` on one `pattern`, approving `always` on
    /// an "always" answer, with empty metadata.
    pub fn new(permission: &str, pattern: impl Into<String>, always: &str) -> Self {
        ToolRequest {
            permission: permission.to_string(),
            patterns: vec![pattern.into()],
            always: vec![always.to_string()],
            metadata: Value::Object(Default::default()),
        }
    }

    /// Replaces the metadata.
    pub fn with_metadata(mut self, metadata: Value) -> Self {
        self.metadata = metadata;
        self
    }

    /// Asks it through the context's permission gate, judged only by the
    /// rules that name this permission exactly: a rule for every permission
    /// (`"*": "allow"`, as in the agent defaults) does not answer it, so it
    /// is asked unless the host configured it by name. Used for
    /// [`BASH_OPAQUE`](crate::shell::bash_scan::BASH_OPAQUE), which must be an ask
    /// by default.
    pub async fn ask_by_name(&self, ctx: &ToolContext) -> Result<(), PermissionError> {
        self.ask(&self.named_context(ctx)).await
    }

    /// `ctx` with only the rules that name this permission exactly (see
    /// [`ask_by_name`](Self::ask_by_name)).
    pub(crate) fn named_context(&self, ctx: &ToolContext) -> ToolContext {
        let named: Vec<Rule> = ctx
            .ruleset()
            .0
            .iter()
            .filter(|rule| rule.permission == self.permission)
            .cloned()
            .collect();
        ctx.clone().with_ruleset(Arc::new(Ruleset(named)))
    }

    /// Asks it through the context's permission gate.
    pub async fn ask(&self, ctx: &ToolContext) -> Result<(), PermissionError> {
        ctx.ask(
            &self.permission,
            self.patterns.iter().cloned(),
            self.always.iter().cloned(),
            self.metadata.clone(),
        )
        .await
    }
}
