//! Markdown agent files (YAML front matter + prompt) on arbitrary text:
//! `agentgate_core::agent_files::parse_markdown_agent` never panics, for agents and modes.
#![no_main]

use agentgate_core::{agent_files::{MarkdownKind, parse_markdown_agent}};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = parse_markdown_agent("agent/fuzz.md", text, MarkdownKind::Agent);
    let _ = parse_markdown_agent("mode/fuzz.md", text, MarkdownKind::Mode);
});
