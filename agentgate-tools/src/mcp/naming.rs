//! Tool names as opencode builds them for MCP tools: `<server>_<tool>`,
//! each half with every character outside `[a-zA-Z0-9_-]` replaced by `_`
//! (`oc/src/mcp/index.ts`), so rules like `"github_*": "ask"` match.

/// `name` with every character outside `[a-zA-Z0-9_-]` replaced by `_`.
pub fn sanitize_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The registered tool name (and permission) of `tool` on `server`.
pub fn mcp_tool_name(server: &str, tool: &str) -> String {
    format!("{}_{}", sanitize_name(server), sanitize_name(tool))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_sanitised_like_opencode() {
        assert_eq!(
            mcp_tool_name("github", "create_issue"),
            "github_create_issue"
        );
        assert_eq!(mcp_tool_name("my server", "get-sum"), "my_server_get-sum");
        assert_eq!(mcp_tool_name("a.b", "x/y:z"), "a_b_x_y_z");
        // One `_` per character, not per byte.
        assert_eq!(sanitize_name("café"), "caf_");
    }
}
