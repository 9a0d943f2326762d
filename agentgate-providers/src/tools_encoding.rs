//! A request's tool list encoded once, not once per step.
//!
//! The engine offers the same tool list (one `Arc<Vec<ToolSpec>>`) at every
//! step of a turn, and its schemas are most of the bytes of a request's
//! head. [`ToolsEncoding`] keeps the wire encoding of the last few lists,
//! holding each list's `Arc` (a list cannot change while it is held). A
//! request's list reuses a kept encoding when it is the same `Arc` (the
//! steps of one turn) or holds the same tools (the turns of every session
//! of one agent on a server, see [`same_tools`]); another list takes the
//! oldest one's place.
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

/// How many tool lists a client keeps encodings of: the agents whose
/// turns a server runs at once (the sessions of one agent share one).
const KEPT: usize = 4;

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
    /// The encoding of `tools`: a kept one when it is of the same tools,
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
            .find_map(|(known, encoded)| same_tools(known, tools).then(|| Arc::clone(encoded)))
        {
            return Some(encoded);
        }
        // Encoded without the lock: concurrent requests of other lists do
        // not wait for it.
        let encoded: EncodedTools = Arc::new(vec![serde_json::value::to_raw_value(&wire()).ok()?]);
        let mut kept = self.lock();
        kept.retain(|(known, _)| !same_tools(known, tools));
        kept.insert(0, (Arc::clone(tools), Arc::clone(&encoded)));
        kept.truncate(KEPT);
        Some(encoded)
    }

    /// The request head `encode` builds, with its tool objects (`list`)
    /// taken out and their encoding ([`of`](Self::of)) beside it; the
    /// head with its own list and `None` when it has none or they cannot
    /// be encoded.
    pub(crate) fn split<H, W: Serialize>(
        &self,
        tools: &Arc<Vec<ToolSpec>>,
        encode: impl Fn() -> H,
        list: impl Fn(&mut H) -> &mut Vec<W>,
    ) -> (H, Option<EncodedTools>) {
        let mut head = encode();
        if list(&mut head).is_empty() {
            return (head, None);
        }
        match self.of(tools, || std::mem::take(list(&mut head))) {
            Some(encoded) => {
                list(&mut head).clear();
                (head, Some(encoded))
            }
            // Taken, then not encoded: the head keeps its own list.
            None => (encode(), None),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(Arc<Vec<ToolSpec>>, EncodedTools)>> {
        // A panic while holding the lock leaves consistent data (each
        // change is made whole before the guard drops): keep using it.
        self.kept.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Whether two lists encode alike: the same `Arc`, or the same names and
/// descriptions with the very same schemas (the registry's `Arc`s, which
/// every turn's list shares), in the same order. Schemas are compared by
/// address only: two equal `Value`s may still order their keys
/// differently, and the body must be what this list encodes to, byte for
/// byte. The encoding depends on nothing else.
fn same_tools(known: &Arc<Vec<ToolSpec>>, tools: &Arc<Vec<ToolSpec>>) -> bool {
    Arc::ptr_eq(known, tools)
        || (known.len() == tools.len()
            && known.iter().zip(tools.iter()).all(|(a, b)| {
                a.name == b.name
                    && a.description == b.description
                    && Arc::ptr_eq(&a.parameters, &b.parameters)
            }))
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
    fn a_list_is_encoded_once_for_all_lists_of_the_same_tools() {
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
        // The same tools in another `Arc` (another turn, the same schema
        // `Arc`s): reused. An equal schema in another `Arc` is not assumed
        // to encode alike.
        assert_eq!(encode(&Arc::new((*tools).clone())), r#"["read"]"#);
        assert_eq!(count.get(), 1);
        assert_eq!(encode(&Arc::new(vec![spec("read")])), r#"["read"]"#);
        assert_eq!(count.get(), 2);
        // Lists that differ from `tools` in one name or description (the
        // same schema `Arc`), and another list: each encoded anew.
        let mut renamed = tools[0].clone();
        renamed.name = "reed".into();
        assert_eq!(encode(&Arc::new(vec![renamed])), r#"["reed"]"#);
        let mut described = tools[0].clone();
        described.description = "other".into();
        encode(&Arc::new(vec![described]));
        assert_eq!(count.get(), 4);
        // Four kept: `tools` was the oldest, and goes with the fifth.
        let other = Arc::new(vec![spec("read"), spec("write")]);
        assert_eq!(encode(&other), r#"["read","write"]"#);
        assert_eq!(count.get(), 5);
        encode(&other);
        assert_eq!(count.get(), 5);
        encode(&tools);
        assert_eq!(count.get(), 6);
    }
}
