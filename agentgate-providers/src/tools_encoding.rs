//! A request's tool list encoded once per turn, not once per step.
//!
//! The engine offers the same tool list (one `Arc<Vec<ToolSpec>>`) at every
//! step of a turn, and its schemas are most of the bytes of a request's
//! head. [`ToolsEncoding`] keeps the wire encoding of the last few lists,
//! holding each list's `Arc`: a list cannot change while it is held, nor
//! its address be reused, so the same `Arc` (`Arc::ptr_eq`) means the same
//! tools, as in [`crate::encode_cache`]. A new list (a new turn, another
//! agent, another session's turn on a server) takes the oldest one's
//! place.
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

/// How many tool lists a client keeps encodings of: a server runs turns
/// of many sessions at once, each with its own list.
const KEPT: usize = 8;

/// The last tool lists a client encoded (most recent first), and their
/// encodings. Cloning a client gives its clone an empty one.
#[derive(Default)]
pub(crate) struct ToolsEncoding {
    kept: Mutex<Vec<(Arc<Vec<ToolSpec>>, EncodedTools)>>,
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
        if let Some(encoded) = self
            .lock()
            .iter()
            .find_map(|(known, encoded)| Arc::ptr_eq(known, tools).then(|| Arc::clone(encoded)))
        {
            return Some(encoded);
        }
        // Encoded without the lock: concurrent requests of other lists do
        // not wait for it.
        let encoded: EncodedTools = Arc::new(vec![serde_json::value::to_raw_value(&wire()).ok()?]);
        let mut kept = self.lock();
        kept.retain(|(known, _)| !Arc::ptr_eq(known, tools));
        kept.insert(0, (Arc::clone(tools), Arc::clone(&encoded)));
        kept.truncate(KEPT);
        Some(encoded)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(Arc<Vec<ToolSpec>>, EncodedTools)>> {
        // A panic while holding the lock leaves consistent data (each
        // change is made whole before the guard drops): keep using it.
        self.kept.lock().unwrap_or_else(|e| e.into_inner())
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
        let count = std::cell::Cell::new(0);
        let encode = |tools: &Arc<Vec<ToolSpec>>| {
            cache
                .of(tools, || {
                    count.set(count.get() + 1);
                    tools.iter().map(|t| &t.name).collect::<Vec<_>>()
                })
                .unwrap()[0]
                .get()
                .to_string()
        };
        assert_eq!(encode(&tools), r#"["read"]"#);
        assert_eq!(encode(&Arc::clone(&tools)), r#"["read"]"#);
        // Equal contents in another `Arc`: encoded again, not assumed equal;
        // the first list is still kept.
        let other = Arc::new(vec![spec("read"), spec("write")]);
        assert_eq!(encode(&other), r#"["read","write"]"#);
        assert_eq!(encode(&tools), r#"["read"]"#);
        assert_eq!(count.get(), 2);
        // Lists of many turns at once: the oldest beyond `KEPT` goes.
        let lists: Vec<_> = (0..KEPT)
            .map(|i| Arc::new(vec![spec(&format!("t{i}"))]))
            .collect();
        for list in &lists {
            encode(list);
        }
        assert_eq!(count.get(), 2 + KEPT);
        encode(&lists[KEPT - 1]);
        encode(&lists[1]);
        assert_eq!(count.get(), 2 + KEPT);
        encode(&tools);
        assert_eq!(count.get(), 3 + KEPT);
    }
}
