//! Fetching web pages: the webfetch tool, and the HTML conversion it uses
//! (public as `agentgate_tools::html`).

pub mod html;

pub(crate) mod webfetch;
