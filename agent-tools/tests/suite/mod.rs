//! Integration test modules.

#[cfg(feature = "mcp")]
mod mcp_common;
#[cfg(feature = "mcp")]
mod mcp_failures;
#[cfg(feature = "mcp")]
mod mcp_http;
#[cfg(feature = "mcp")]
mod mcp_sse;
#[cfg(feature = "mcp")]
mod mcp_stdio;
