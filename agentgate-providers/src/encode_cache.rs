//! Each history message's wire encoding, kept while its `Arc` lives, so a
//! step encodes only the messages it adds (issue 27: a step's cost should
//! not grow with the history).
//!
//! A request's history is a list of `Arc<ModelMessage>`
//! ([`agentgate_core::History`]). A message behind an `Arc` cannot change
//! while another holder keeps it
//! (`Arc::make_mut` copies it first, `Arc::get_mut` refuses), and its
//! address cannot be reused while it is held. The cache holds the `Arc` of
//! every message it encoded, so an entry is reused only for the very same
//! message (`Arc::ptr_eq`): exact by construction, with no hash and no
//! comparison of contents. A history that was changed, compacted or built
//! anew simply misses and is encoded again.
//!
//! APIs with a flat history (Chat Completions, Responses) cache each
//! message's wire elements ([`flat_history_body`]); APIs that merge
//! consecutive messages of one role into one turn (Anthropic Messages,
//! Gemini) cache each message's role and blocks and group them at each
//! request ([`GroupedHistory`]).
//!
//! A few conversations are kept ([`SLOTS`], least recently used evicted),
//! and one no longer held by anyone else (its first message's only owner
//! is the cache) is dropped at the next call, so the cache never keeps a
//! finished conversation's memory for long.

use std::sync::{Arc, Mutex};

use agentgate_core::{ModelMessage, ModelRequest};
use serde::Serialize;
use serde_json::value::RawValue;

use crate::http::{KeptField, SizeHint};
use crate::request_body::{RawParts, RequestBody, shareable};
use crate::tools_encoding::ToolsEncoding;

/// How many conversations a client keeps encodings for.
pub(crate) const SLOTS: usize = 8;

/// A wire element of a request body that is either encoded now or taken
/// from the cache as raw JSON (written as is).
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum Cached<'a, T> {
    /// Encoded for this request.
    Fresh(T),
    /// A cached encoding.
    Raw(&'a RawValue),
}

/// The encodings of one conversation: its messages (held, so they stay
/// immutable) and what each encoded to.
struct Slot<E> {
    id: u64,
    used: u64,
    entries: Vec<(Arc<ModelMessage>, Arc<E>)>,
}

struct Slots<E> {
    slots: Vec<Slot<E>>,
    tick: u64,
}

/// Per-client cache of message encodings of type `E` (what one message
/// becomes on the wire for that client's API), and of the last tool list
/// ([`ToolsEncoding`]). Cloning a client gives its clone an empty cache.
pub(crate) struct EncodeCache<E> {
    inner: Mutex<Slots<E>>,
    tools: ToolsEncoding,
}

impl<E> Default for EncodeCache<E> {
    fn default() -> Self {
        EncodeCache {
            inner: Mutex::new(Slots {
                slots: Vec::new(),
                tick: 0,
            }),
            tools: ToolsEncoding::default(),
        }
    }
}

impl<E> Clone for EncodeCache<E> {
    fn clone(&self) -> Self {
        EncodeCache::default()
    }
}

impl<E> std::fmt::Debug for EncodeCache<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let slots = self.lock().slots.len();
        f.debug_struct("EncodeCache")
            .field("conversations", &slots)
            .finish()
    }
}

impl<E> EncodeCache<E> {
    /// The client's kept tool-list encoding.
    pub(crate) fn tools(&self) -> &ToolsEncoding {
        &self.tools
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Slots<E>> {
        // A panic while holding the lock leaves consistent data (every
        // update is a single assignment): keep using it.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The encoding of each of `messages`, in order: reused for a message
    /// this cache encoded before (the same `Arc`), else `encode`d now and
    /// kept. `None` when `encode` fails for one of them (nothing is kept
    /// then).
    pub(crate) fn encodings(
        &self,
        messages: &[Arc<ModelMessage>],
        mut encode: impl FnMut(&ModelMessage) -> Option<E>,
    ) -> Option<Vec<Arc<E>>> {
        let (id, mut out) = self.reusable_prefix(messages);
        for message in &messages[out.len()..] {
            out.push(Arc::new(encode(message)?));
        }
        self.keep(id, messages, &out);
        Some(out)
    }

    /// The slot sharing the longest prefix with `messages` (its id, or a
    /// new id) and the encodings of that prefix.
    fn reusable_prefix(&self, messages: &[Arc<ModelMessage>]) -> (u64, Vec<Arc<E>>) {
        let mut inner = self.lock();
        // A conversation nobody else holds is over: free it.
        inner.slots.retain(|slot| {
            slot.entries
                .first()
                .is_some_and(|(first, _)| Arc::strong_count(first) > 1)
        });
        inner.tick += 1;
        let tick = inner.tick;
        let best = inner
            .slots
            .iter_mut()
            .map(|slot| {
                let shared = slot
                    .entries
                    .iter()
                    .zip(messages)
                    .take_while(|((kept, _), message)| Arc::ptr_eq(kept, message))
                    .count();
                (shared, slot)
            })
            .filter(|(shared, _)| *shared > 0)
            .max_by_key(|(shared, _)| *shared);
        match best {
            Some((shared, slot)) => {
                slot.used = tick;
                let reused = slot.entries[..shared]
                    .iter()
                    .map(|(_, encoded)| Arc::clone(encoded))
                    .collect();
                (slot.id, reused)
            }
            None => (tick, Vec::with_capacity(messages.len())),
        }
    }

    /// Records `encoded` (one per message of `messages`) as slot `id`,
    /// creating it (and evicting the least recently used) when needed.
    fn keep(&self, id: u64, messages: &[Arc<ModelMessage>], encoded: &[Arc<E>]) {
        let entries: Vec<(Arc<ModelMessage>, Arc<E>)> = messages
            .iter()
            .cloned()
            .zip(encoded.iter().cloned())
            .collect();
        let mut inner = self.lock();
        let tick = inner.tick;
        if let Some(slot) = inner.slots.iter_mut().find(|slot| slot.id == id) {
            slot.entries = entries;
            slot.used = tick;
            return;
        }
        if entries.is_empty() {
            return;
        }
        if inner.slots.len() >= SLOTS
            && let Some(oldest) = inner
                .slots
                .iter()
                .enumerate()
                .min_by_key(|(_, slot)| slot.used)
                .map(|(index, _)| index)
        {
            inner.slots.swap_remove(oldest);
        }
        inner.slots.push(Slot {
            id,
            used: tick,
            entries,
        });
    }

    /// How many conversations are kept (tests).
    #[cfg(test)]
    pub(crate) fn conversations(&self) -> usize {
        self.lock().slots.len()
    }

    /// The encodings kept for the longest kept prefix of `messages`
    /// (tests: an encoding that was reused is the same `Arc`).
    #[cfg(test)]
    pub(crate) fn kept(&self, messages: &[Arc<ModelMessage>]) -> Vec<Arc<E>> {
        self.reusable_prefix(messages).1
    }
}

/// `value` as raw JSON, the bytes it serialises to inline.
pub(crate) fn raw<T: Serialize + ?Sized>(value: &T) -> Option<Box<RawValue>> {
    serde_json::value::to_raw_value(value).ok()
}

/// What one history message becomes on the wire for APIs whose history is
/// a flat list of elements (Chat Completions messages, Responses input
/// items): the raw JSON of each element.
pub(crate) type Elements = Vec<Box<RawValue>>;

/// The raw JSON of each of `wire` (`None` if one does not serialise).
pub(crate) fn elements<W: Serialize>(wire: &[W]) -> Option<Elements> {
    wire.iter().map(raw).collect()
}

/// The request body of an API whose history is the flat list `field` of
/// `head`: the `leading` elements (the system prompt) encoded now, then
/// each message's elements from `cache` or from `encode_one` (see
/// [`elements`]), written in
/// place of `field` (see [`crate::http::body_bytes_with_history`]). `None`
/// when the caller must encode the whole body the plain way.
#[allow(clippy::too_many_arguments)]
pub(crate) fn flat_history_body<W: Serialize, H: Serialize>(
    cache: &EncodeCache<Elements>,
    request: &ModelRequest,
    leading: Vec<W>,
    encode_one: impl FnMut(&ModelMessage) -> Option<Elements>,
    head: &H,
    kept: Option<KeptField<'_>>,
    field: &str,
    key: &str,
    size_hint: &SizeHint,
) -> Option<RequestBody> {
    let encoded = cache.encodings(&request.messages, encode_one)?;
    let shared = shareable(&encoded);
    let history: Vec<Cached<'_, W>> = leading
        .into_iter()
        .map(Cached::Fresh)
        .chain(
            encoded
                .iter()
                .flat_map(|e| e.iter())
                .map(|r| Cached::Raw(r)),
        )
        .collect();
    crate::http::body_bytes_with_history(
        head,
        field,
        &history,
        kept,
        &request.options,
        key,
        size_hint,
        shared,
    )
}

/// What one history message becomes on the wire for APIs that merge
/// consecutive messages of one role into one turn (Messages `messages`,
/// Gemini `contents`): its role and the raw JSON of each of its blocks. A
/// message without blocks is left out of the request.
#[derive(Debug)]
pub(crate) struct Turn<R> {
    role: R,
    blocks: Elements,
}

impl<R: Send + Sync + 'static> RawParts for Turn<R> {
    fn raw_parts(&self) -> &[Box<RawValue>] {
        &self.blocks
    }
}

/// A grouped history, ready to write: each message's role and blocks,
/// taken from the cache or encoded now (see [`GroupedHistory::encode`]).
pub(crate) struct GroupedHistory<R, B> {
    cached: Vec<Arc<Turn<R>>>,
    fresh: Vec<(R, Vec<B>)>,
}

impl<R: Copy + PartialEq, B: Serialize> GroupedHistory<R, B> {
    /// The encodings of `messages`: all but the last `fresh_tail` from
    /// `cache` (or `encode(message, false)`, then kept), the last
    /// `fresh_tail` from `encode(message, true)` now, every time. Those
    /// are the positions whose encoding depends on where the message is
    /// (Anthropic's cache breakpoints on the last two messages), so an
    /// encoding made for one kind of position is never used for the
    /// other. `None` when a block does not serialise.
    pub(crate) fn encode(
        cache: &EncodeCache<Turn<R>>,
        messages: &[Arc<ModelMessage>],
        fresh_tail: usize,
        mut encode: impl FnMut(&ModelMessage, bool) -> (R, Vec<B>),
    ) -> Option<Self> {
        let split = messages.len().saturating_sub(fresh_tail);
        let cached = cache.encodings(&messages[..split], |message| {
            let (role, blocks) = encode(message, false);
            Some(Turn {
                role,
                blocks: elements(&blocks)?,
            })
        })?;
        let fresh = messages[split..]
            .iter()
            .map(|message| encode(message, true))
            .collect();
        Some(GroupedHistory { cached, fresh })
    }

    /// The kept blocks worth sending without a copy (see
    /// [`crate::request_body::shareable`]).
    pub(crate) fn shared(&self) -> Vec<bytes::Bytes>
    where
        R: Send + Sync + 'static,
    {
        shareable(&self.cached)
    }

    /// The wire turns, in order: consecutive messages of one role merged
    /// into one turn, messages without blocks left out, exactly as the
    /// typed encoders group them. Cached blocks are written raw.
    pub(crate) fn turns(&self) -> Vec<(R, Vec<Cached<'_, &B>>)> {
        let mut turns = Vec::new();
        for turn in &self.cached {
            let blocks = turn.blocks.iter().map(|block| Cached::Raw(block));
            push_turn(&mut turns, turn.role, blocks);
        }
        for (role, blocks) in &self.fresh {
            push_turn(&mut turns, *role, blocks.iter().map(Cached::Fresh));
        }
        turns
    }
}

/// Adds one message's `blocks` to `turns`: to the last turn when it has
/// the same role, else as a new turn; nothing when there are none.
fn push_turn<R: PartialEq, T>(
    turns: &mut Vec<(R, Vec<T>)>,
    role: R,
    blocks: impl ExactSizeIterator<Item = T>,
) {
    if blocks.len() == 0 {
        return;
    }
    match turns.last_mut() {
        Some((last, content)) if *last == role => content.extend(blocks),
        _ => turns.push((role, blocks.collect())),
    }
}

/// The message a conversation adds at step `step` (tests): user texts,
/// tool calls and their results (a tool result and the next user text
/// share a wire turn), and an unsigned reasoning turn that no grouped API
/// sends.
#[cfg(test)]
fn step_message(step: usize) -> ModelMessage {
    use agentgate_core::{ContentPart, ModelRole};
    let (role, part) = match step % 4 {
        0 => return ModelMessage::user(format!("ask {step}")),
        1 => (
            ModelRole::Assistant,
            ContentPart::ToolCall {
                id: format!("call_{step}"),
                name: "bash".into(),
                input: serde_json::json!({"command": "ls"}),
                provider_metadata: None,
            },
        ),
        2 => (
            ModelRole::Tool,
            ContentPart::ToolResult {
                call_id: format!("call_{}", step - 1),
                name: "bash".into(),
                output: format!("out {step}"),
                is_error: false,
            },
        ),
        _ => (
            ModelRole::Assistant,
            ContentPart::Reasoning {
                text: "unsigned".into(),
                provider_metadata: None,
            },
        ),
    };
    ModelMessage {
        role,
        content: vec![part],
    }
}

/// Runs a conversation growing by one message a step through `send` (which
/// checks the body it sends), and checks after each step that `cache`
/// keeps every message but the last `fresh_tail`, and that what it kept
/// at the step before is the very same encoding (reused, not encoded
/// again): a step encodes only the message it adds, and the `fresh_tail`.
#[cfg(test)]
pub(crate) fn check_growing_history<R>(
    cache: &EncodeCache<Turn<R>>,
    fresh_tail: usize,
    mut send: impl FnMut(&ModelRequest),
) {
    let mut request = ModelRequest::new(vec![step_message(0)]);
    let mut before: Vec<Arc<Turn<R>>> = Vec::new();
    for step in 1..12 {
        send(&request);
        let kept = cache.kept(&request.messages);
        assert_eq!(
            kept.len(),
            request.messages.len().saturating_sub(fresh_tail),
            "step {step}"
        );
        assert!(before.len() <= kept.len(), "step {step}");
        for (old, new) in before.iter().zip(&kept) {
            assert!(Arc::ptr_eq(old, new), "step {step}: encoded again");
        }
        before = kept;
        Arc::make_mut(&mut request.messages).push(Arc::new(step_message(step)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentgate_core::{History, share_messages};

    fn count_encodes(cache: &EncodeCache<String>, history: &History) -> (Vec<String>, usize) {
        let mut encoded = 0;
        let out = cache
            .encodings(history, |message| {
                encoded += 1;
                Some(format!("{message:?}"))
            })
            .unwrap_or_default();
        (out.iter().map(|e| (**e).clone()).collect(), encoded)
    }

    #[test]
    fn a_growing_history_encodes_only_what_it_adds() {
        let cache = EncodeCache::default();
        let mut history = share_messages(vec![ModelMessage::user("a"), ModelMessage::user("b")]);
        assert_eq!(count_encodes(&cache, &history).1, 2);
        Arc::make_mut(&mut history).push(Arc::new(ModelMessage::user("c")));
        let (out, encoded) = count_encodes(&cache, &history);
        assert_eq!(encoded, 1);
        assert_eq!(out.len(), 3);
        assert!(out[2].contains("\"c\""));
    }

    #[test]
    fn a_changed_message_is_encoded_again_never_reused() {
        let cache = EncodeCache::default();
        let mut history = share_messages(vec![ModelMessage::user("a"), ModelMessage::user("b")]);
        count_encodes(&cache, &history);
        // The cache holds the message: changing it copies it first.
        let list = Arc::make_mut(&mut history);
        Arc::make_mut(&mut list[1]).content = ModelMessage::user("changed").content;
        let (out, encoded) = count_encodes(&cache, &history);
        assert_eq!(encoded, 1);
        assert!(out[1].contains("changed"));
        assert!(out[0].contains("\"a\""));
    }

    #[test]
    fn finished_conversations_are_dropped_and_slots_are_bounded() {
        let cache = EncodeCache::default();
        {
            let history = share_messages(vec![ModelMessage::user("gone")]);
            count_encodes(&cache, &history);
        }
        let kept: Vec<History> = (0..SLOTS + 3)
            .map(|i| share_messages(vec![ModelMessage::user(format!("m{i}"))]))
            .collect();
        for history in &kept {
            count_encodes(&cache, history);
        }
        assert_eq!(cache.conversations(), SLOTS);
        // The most recent conversations are the ones kept.
        assert_eq!(count_encodes(&cache, &kept[SLOTS + 2]).1, 0);
        drop(kept);
        count_encodes(&cache, &share_messages(vec![ModelMessage::user("new")]));
        assert_eq!(cache.conversations(), 1);
    }

    #[test]
    fn a_failed_encoding_keeps_nothing() {
        let cache: EncodeCache<String> = EncodeCache::default();
        let history = share_messages(vec![ModelMessage::user("a")]);
        assert!(cache.encodings(&history, |_| None).is_none());
        assert_eq!(cache.conversations(), 0);
    }
}
