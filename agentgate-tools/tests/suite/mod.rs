//! The integration tests of agentgate-tools, one module per area.

mod always_shown_is_stored;
mod apply_patch;
mod bash_differential;
mod bash_in_loop;
mod bash_read_rules;
mod bash_runtime_eval;
mod bash_scan_limits;
mod bash_scan_props;
mod bash_scan_survivors;
mod bash_tool;
mod bash_vectors;
mod bypass_corpus;
mod bypass_effects;
mod checkpoint_props;
mod checkpoint_tools;
mod checkpoint_watch;
mod checkpoints;
mod conformance;
mod file_tools;
mod file_tools_in_loop;
mod git_config_differential;
mod listing_read_rules;
mod move_is_read;
mod ordinary_commands;
mod read_images;
mod replace_props;
mod sandbox;
mod sandbox_clone;
mod sandbox_git_protected;
mod sandbox_kernel;
mod sandbox_limits;
mod sandbox_nested;
mod sandbox_roots;
mod search_differential;
mod search_tools;
mod spill_read;
mod support;
mod swapped_folders;
mod todo_tools;
mod tool_limits;
mod webfetch_hosts;
mod webfetch_tool;

// MCP (feature `mcp`): shared helpers, then one module per area.
#[cfg(feature = "mcp")]
mod mcp_common;
#[cfg(feature = "mcp")]
mod mcp_failures;
#[cfg(feature = "mcp")]
mod mcp_http;
#[cfg(feature = "mcp")]
mod mcp_lifecycle;
#[cfg(feature = "mcp")]
mod mcp_sse;
#[cfg(feature = "mcp")]
mod mcp_stdio;
