//! The `todowrite` and `todoread` tools: a per-session todo list the model
//! keeps to plan multi-step work, held in a [`TodoStore`] that both tools
//! (and the host, for display) share.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use agentgate_core::{ToolContext, ToolError, ToolOutput, TypedTool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::files::request::ToolRequest;

/// The `todowrite` tool id and permission name.
pub const TODOWRITE: &str = "todowrite";
/// The `todoread` tool id.
pub const TODOREAD: &str = "todoread";

/// Where a todo stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    /// Not started.
    Pending,
    /// Being worked on (keep at most one).
    InProgress,
    /// Done.
    Completed,
    /// No longer needed.
    Cancelled,
}

/// How important a todo is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TodoPriority {
    /// Do first.
    High,
    /// Normal.
    Medium,
    /// When time allows.
    Low,
}

/// One item of a todo list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Todo {
    /// A short description of the task.
    pub content: String,
    /// Where it stands.
    pub status: TodoStatus,
    /// How important it is.
    pub priority: TodoPriority,
    /// A stable id, if the model gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

/// The todo lists of all sessions. Cheap to clone; clones share the lists.
#[derive(Debug, Clone, Default)]
pub struct TodoStore {
    lists: Arc<Mutex<HashMap<String, Vec<Todo>>>>,
}

impl TodoStore {
    /// An empty store.
    pub fn new() -> Self {
        TodoStore::default()
    }

    /// The list of `session_id` (empty if it never wrote one).
    pub fn get(&self, session_id: &str) -> Vec<Todo> {
        self.lists
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(session_id)
            .cloned()
            .unwrap_or_default()
    }

    /// Replaces the list of `session_id`.
    pub fn set(&self, session_id: &str, todos: Vec<Todo>) {
        self.lists
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(session_id.to_string(), todos);
    }
}

fn render(todos: &[Todo]) -> (String, String) {
    let open = todos
        .iter()
        .filter(|todo| todo.status != TodoStatus::Completed)
        .count();
    let output = serde_json::to_string_pretty(todos).unwrap_or_else(|_| "[]".to_string());
    (format!("{open} todos"), output)
}

/// The arguments of `todowrite`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct TodoWriteArgs {
    /// The whole updated todo list (it replaces the previous one).
    pub todos: Vec<Todo>,
}

/// The `todowrite` tool: asks `todowrite` with `["*"]`, then replaces the
/// session's list.
#[derive(Debug, Clone, Default)]
pub struct TodoWriteTool {
    store: TodoStore,
}

impl TodoWriteTool {
    /// The permission requests a call makes before changing the list:
    /// `todowrite` with `*`, "always" approving `*`.
    pub fn requests(_args: &TodoWriteArgs) -> Vec<ToolRequest> {
        vec![ToolRequest::new(TODOWRITE, "*", "*").with_metadata(json!({}))]
    }

    /// A `todowrite` tool writing to `store`.
    pub fn new(store: TodoStore) -> Self {
        TodoWriteTool { store }
    }
}

#[async_trait::async_trait]
impl TypedTool for TodoWriteTool {
    type Args = TodoWriteArgs;

    fn effects(&self) -> agentgate_core::ToolEffects {
        // Reads only, or reports its writes to the checkpoints itself.
        agentgate_core::ToolEffects::Declared
    }

    fn id(&self) -> &str {
        TODOWRITE
    }

    fn description(&self) -> &str {
        "Replaces the session's todo list. Use it to plan and track multi-step work: \
         give every task with its status (pending, in_progress, completed, cancelled) \
         and priority (high, medium, low); keep at most one in_progress."
    }

    async fn run(&self, args: TodoWriteArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        for request in Self::requests(&args) {
            request.ask(ctx).await?;
        }
        let (title, output) = render(&args.todos);
        let metadata = json!({ "todos": args.todos });
        self.store.set(&ctx.session_id, args.todos);
        Ok(ToolOutput::text(output)
            .with_title(title)
            .with_metadata(metadata))
    }
}

/// The arguments of `todoread` (none).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct TodoReadArgs {}

/// The `todoread` tool: returns the session's list (no permission asked:
/// it has no side effect).
#[derive(Debug, Clone, Default)]
pub struct TodoReadTool {
    store: TodoStore,
}

impl TodoReadTool {
    /// A `todoread` tool reading from `store`.
    pub fn new(store: TodoStore) -> Self {
        TodoReadTool { store }
    }
}

#[async_trait::async_trait]
impl TypedTool for TodoReadTool {
    type Args = TodoReadArgs;

    fn effects(&self) -> agentgate_core::ToolEffects {
        // Reads only, or reports its writes to the checkpoints itself.
        agentgate_core::ToolEffects::Declared
    }

    fn id(&self) -> &str {
        TODOREAD
    }

    fn description(&self) -> &str {
        "Returns the session's current todo list."
    }

    async fn run(&self, _args: TodoReadArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let todos = self.store.get(&ctx.session_id);
        let (title, output) = render(&todos);
        Ok(ToolOutput::text(output)
            .with_title(title)
            .with_metadata(json!({ "todos": todos })))
    }
}
