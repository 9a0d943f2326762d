//! A request's tool list encoded once per turn, not once per step.
//!
//! The engine offers the same tool list (one `Arc<Vec<ToolSpec>>`) at every
//! step of a turn, and its schemas are most of the bytes of a request's
//! head. [`ToolsEncoding`] keeps the last list's wire encoding, holding the
//! list's `Arc`: the list cannot change while it is held, nor its address
//! be reused, so the same `Arc` (`Arc::ptr_eq`) means the same tools, as
//! in [`crate::encode_cache`]. A new list (a new turn, another agent)
//! replaces the entry.
//!
//! The encoding depends only on the list and on the client's API (each
//! client has its own [`ToolsEncoding`]). It is written into the body as
//! it is ([`crate::http::body_bytes_with_history`]), and sent without a
//! copy when it is large (see [`crate::request_body`]).

use std::sync::{Arc, Mutex};

use agentgate_core::ToolSpec;
use serde::Serialize;
use serde_json::value::RawValue;

/// One encoded tool list: the raw JSON array, as a kept encoding a body
/// may reference.
pub(crate) type EncodedTools = Arc<Vec<Box<RawValue>>>;

/// The last tool list a client encoded, and its encoding. Cloning a
/// client gives its clone an empty one.
#[derive(Default)]
pub(crate) struct ToolsEncoding {
    last: Mutex<Option<(Arc<Vec<ToolSpec>>, EncodedTools)>>,
}

impl Clone for ToolsEncoding {
    fn clone(&self) -> Self {
        ToolsEncoding::default()
    }
}

impl std::fmt::Debug for ToolsEncoding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolsEncoding").finish_non_exhaustive()
    }
}

impl ToolsEncoding {
    /// The encoding of `tools`: the kept one when it is of this very list,
    /// else `wire` (the API's tool objects) serialised now and kept.
    /// `None` when that fails.
    pub(crate) fn of<W: Serialize>(
        &self,
        tools: &Arc<Vec<ToolSpec>>,
        wire: impl FnOnce() -> W,
    ) -> Option<EncodedTools> {
        // A panic while holding the lock leaves consistent data (the entry
        // is replaced in one assignment): keep using it.
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((known, encoded)) = last.as_ref()
            && Arc::ptr_eq(known, tools)
        {
            return Some(Arc::clone(encoded));
        }
        let encoded: EncodedTools = Arc::new(vec![serde_json::value::to_raw_value(&wire()).ok()?]);
        *last = Some((Arc::clone(tools), Arc::clone(&encoded)));
        Some(encoded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str) -> ToolSpec {
        ToolSpec {
            name: name.to_string(),
            description: format!("{name} things"),
            parameters: Arc::new(serde_json::json!({"type": "object"})),
        }
    }

    #[test]
    fn the_same_list_is_encoded_once_and_another_list_anew() {
        let cache = ToolsEncoding::default();
        let tools = Arc::new(vec![spec("read")]);
        let mut encoded = 0;
        let mut encode = |tools: &Arc<Vec<ToolSpec>>| {
            cache
                .of(tools, || {
                    encoded += 1;
                    tools.iter().map(|t| &t.name).collect::<Vec<_>>()
                })
                .unwrap()[0]
                .get()
                .to_string()
        };
        assert_eq!(encode(&tools), r#"["read"]"#);
        assert_eq!(encode(&Arc::clone(&tools)), r#"["read"]"#);
        // Equal contents in another `Arc`: encoded again, not assumed equal.
        let other = Arc::new(vec![spec("read"), spec("write")]);
        assert_eq!(encode(&other), r#"["read","write"]"#);
        assert_eq!(encode(&tools), r#"["read"]"#);
        assert_eq!(encoded, 3);
    }
}
