//! The `<mcp_instructions>` block of the system prompt (§15 item 4).

/// Formats servers' instructions as opencode does: one `<server name>`
/// element per server, in the given order, each line indented.
///
/// ```
/// let block = agentgate_tools::mcp::format_instructions(&[("docs", "Search first.\nThen read.")]);
/// assert_eq!(
///     block,
///     "<mcp_instructions>\n  <server name=\"docs\">\n    Search first.\n    Then read.\n  </server>\n</mcp_instructions>"
/// );
/// ```
pub fn format_instructions<N, T>(servers: &[(N, T)]) -> String
where
    N: AsRef<str>,
    T: AsRef<str>,
{
    let mut lines = vec!["<mcp_instructions>".to_string()];
    for (name, text) in servers {
        lines.push(format!("  <server name=\"{}\">", escape(name.as_ref())));
        for line in text.as_ref().trim_end().lines() {
            lines.push(format!("    {line}"));
        }
        lines.push("  </server>".to_string());
    }
    lines.push("</mcp_instructions>".to_string());
    lines.join("\n")
}

fn escape(name: &str) -> String {
    name.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
}
