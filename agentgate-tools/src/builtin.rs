//! The built-in tool set in one call.

use agentgate_core::ToolRegistry;

use crate::{
    ApplyPatchTool, BashTool, EditTool, GlobTool, GrepTool, ListTool, ReadTool, TodoReadTool,
    TodoStore, TodoWriteTool, WebFetchError, WebFetchTool, WriteTool,
};

/// A registry with every built-in tool: `read`, `write`, `edit`,
/// `apply_patch`, `bash`, `grep`, `glob`, `list`, `webfetch`, `todowrite`
/// and `todoread` (the two todo tools share one [`TodoStore`]).
///
/// Which of them a model sees is decided per agent by the permission rules
/// (`disabled`, §5) and, for the file-changing tools, by the model family
/// (GPT and codex models see `apply_patch` instead of `edit` and `write`,
/// as in opencode), so register them all and let the engine choose. Add the
/// `task` tool through agentgate-core's engine builder.
///
/// Fails only when the HTTP client of `webfetch` cannot be built (the TLS
/// roots could not be loaded).
///
/// ```
/// let tools = agentgate_tools::builtin()?;
/// assert!(tools.get("bash").is_some() && tools.get("read").is_some());
/// assert_eq!(tools.len(), 11);
/// # Ok::<(), agentgate_tools::WebFetchError>(())
/// ```
pub fn builtin() -> Result<ToolRegistry, WebFetchError> {
    let todos = TodoStore::default();
    let mut tools = ToolRegistry::new();
    tools
        .register(ReadTool::default())
        .register(WriteTool)
        .register(EditTool)
        .register(ApplyPatchTool)
        .register(BashTool::new())
        .register(GrepTool::default())
        .register(GlobTool::default())
        .register(ListTool::default())
        .register(WebFetchTool::new()?)
        .register(TodoWriteTool::new(todos.clone()))
        .register(TodoReadTool::new(todos));
    Ok(tools)
}
