//! [`ScriptedModel`], a [`LanguageModel`] that replays scripted responses
//! and records every request.
//!
//! Delays use `tokio::time::sleep`, so tests under a paused clock
//! (`#[tokio::test(start_paused = true)]`) run instantly and deterministically.

use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::error::{ApiError, ModelError};
use crate::model::{EventStream, LanguageModel, ModelInfo, ModelRequest};
use crate::stream::{FinishReason, ProviderMetadata, StreamEvent, ToolCall};
use crate::usage::Usage;

/// One step of a [`Script`].
#[derive(Debug, Clone, PartialEq)]
pub enum ScriptItem {
    /// Yield this event.
    Event(StreamEvent),
    /// Wait (tokio time).
    Delay(Duration),
    /// Yield this error and end the stream.
    Error(ModelError),
    /// End the stream here, without a finish event (a cut connection).
    Cut,
    /// Never yield anything more (until the call is cancelled).
    Hang,
}

/// One scripted model response: either a failure of the call itself or a
/// stream of [`ScriptItem`]s.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Script {
    fail: Option<ModelError>,
    items: Vec<ScriptItem>,
    blocks: u32,
}

impl Script {
    /// An empty script (add items, then usually [`finish`](Self::finish)).
    pub fn new() -> Self {
        Self::default()
    }

    /// A response whose call fails before streaming (e.g. an HTTP 429).
    pub fn fail(error: impl Into<ModelError>) -> Self {
        Script {
            fail: Some(error.into()),
            ..Default::default()
        }
    }

    /// An HTTP 429 with a `retry-after` header of `seconds`.
    pub fn rate_limited(seconds: &str) -> Self {
        Script::fail(ApiError::new(429, "Rate limit reached").with_header("retry-after", seconds))
    }

    /// A text answer that finishes with `stop`.
    pub fn reply(text: &str) -> Self {
        Script::new().text(text).finish(FinishReason::Stop)
    }

    /// Tool calls `(id, name, input)` finishing with `tool-calls`.
    pub fn calls<'a>(calls: impl IntoIterator<Item = (&'a str, &'a str, Value)>) -> Self {
        let mut script = Script::new();
        for (id, name, input) in calls {
            script = script.tool_call(id, name, input);
        }
        script.finish(FinishReason::ToolCalls)
    }

    fn next_block(&mut self, prefix: &str) -> String {
        self.blocks += 1;
        format!("{prefix}{}", self.blocks)
    }

    /// Adds a raw item.
    pub fn item(mut self, item: ScriptItem) -> Self {
        self.items.push(item);
        self
    }

    /// Adds a raw event.
    pub fn event(self, event: StreamEvent) -> Self {
        self.item(ScriptItem::Event(event))
    }

    /// A text block streamed as one delta.
    pub fn text(self, text: &str) -> Self {
        self.text_chunks(&[text])
    }

    /// A text block streamed as these deltas.
    pub fn text_chunks(mut self, chunks: &[&str]) -> Self {
        let id = self.next_block("t");
        let mut script = self.event(StreamEvent::TextStart { id: id.clone() });
        for chunk in chunks {
            script = script.event(StreamEvent::TextDelta {
                id: id.clone(),
                delta: (*chunk).to_string(),
            });
        }
        script.event(StreamEvent::TextEnd {
            id,
            provider_metadata: None,
        })
    }

    /// A reasoning block; `metadata` (e.g. `{"anthropic":{"signature":…}}`)
    /// arrives on its end event.
    pub fn reasoning(mut self, text: &str, metadata: Option<ProviderMetadata>) -> Self {
        let id = self.next_block("r");
        self.event(StreamEvent::ReasoningStart {
            id: id.clone(),
            provider_metadata: None,
        })
        .event(StreamEvent::ReasoningDelta {
            id: id.clone(),
            delta: text.to_string(),
        })
        .event(StreamEvent::ReasoningEnd {
            id,
            provider_metadata: metadata,
        })
    }

    /// A complete tool call: input start, the arguments as one delta, the call.
    pub fn tool_call(self, id: &str, name: &str, input: Value) -> Self {
        self.event(StreamEvent::ToolInputStart {
            id: id.to_string(),
            name: name.to_string(),
        })
        .event(StreamEvent::ToolInputDelta {
            id: id.to_string(),
            delta: input.to_string(),
        })
        .event(StreamEvent::ToolCall(ToolCall {
            id: id.to_string(),
            name: name.to_string(),
            input,
            provider_metadata: None,
        }))
    }

    /// The start of a tool call whose arguments stop at `partial` (follow
    /// with [`cut`](Self::cut) or [`error`](Self::error)).
    pub fn partial_tool_call(self, id: &str, name: &str, partial: &str) -> Self {
        self.event(StreamEvent::ToolInputStart {
            id: id.to_string(),
            name: name.to_string(),
        })
        .event(StreamEvent::ToolInputDelta {
            id: id.to_string(),
            delta: partial.to_string(),
        })
    }

    /// Waits before the next item.
    pub fn delay(self, duration: Duration) -> Self {
        self.item(ScriptItem::Delay(duration))
    }

    /// Yields an error and ends the stream.
    pub fn error(self, error: impl Into<ModelError>) -> Self {
        self.item(ScriptItem::Error(error.into()))
    }

    /// Ends the stream without a finish event.
    pub fn cut(self) -> Self {
        self.item(ScriptItem::Cut)
    }

    /// Stops yielding until the call is cancelled.
    pub fn hang(self) -> Self {
        self.item(ScriptItem::Hang)
    }

    /// Finishes with `reason` and zero usage.
    pub fn finish(self, reason: FinishReason) -> Self {
        self.finish_with(reason, Usage::default())
    }

    /// Finishes with `reason` and `usage`.
    pub fn finish_with(self, reason: FinishReason, usage: Usage) -> Self {
        self.event(StreamEvent::Finish {
            reason,
            usage,
            provider_metadata: None,
        })
    }
}

/// A [`LanguageModel`] that answers each call with the next [`Script`] and
/// records every request. When the scripts run out a call fails with
/// [`ModelError::Other`].
#[derive(Debug)]
pub struct ScriptedModel {
    info: ModelInfo,
    scripts: Mutex<VecDeque<Script>>,
    requests: Mutex<Vec<ModelRequest>>,
    record: bool,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl ScriptedModel {
    /// A model (`scripted/scripted`, tools supported, no limits) that plays
    /// `scripts` in order.
    pub fn new(scripts: impl IntoIterator<Item = Script>) -> Self {
        ScriptedModel {
            info: ModelInfo::new("scripted", "scripted"),
            scripts: Mutex::new(scripts.into_iter().collect()),
            requests: Mutex::new(Vec::new()),
            record: true,
        }
    }

    /// Sets the model description (e.g. limits for overflow tests).
    pub fn with_info(mut self, info: ModelInfo) -> Self {
        self.info = info;
        self
    }

    /// Stops recording requests (for benchmarks).
    pub fn without_recording(mut self) -> Self {
        self.record = false;
        self
    }

    /// Appends more scripts.
    pub fn push(&self, script: Script) {
        lock(&self.scripts).push_back(script);
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<ModelRequest> {
        lock(&self.requests).clone()
    }

    /// How many scripts are left.
    pub fn remaining(&self) -> usize {
        lock(&self.scripts).len()
    }
}

#[async_trait::async_trait]
impl LanguageModel for ScriptedModel {
    fn info(&self) -> &ModelInfo {
        &self.info
    }

    async fn stream(
        &self,
        request: ModelRequest,
        cancel: CancellationToken,
    ) -> Result<EventStream, ModelError> {
        if self.record {
            lock(&self.requests).push(request);
        }
        let script = lock(&self.scripts).pop_front().ok_or_else(|| {
            ModelError::other("ScriptedModel: no scripted response left for this call")
        })?;
        if let Some(error) = script.fail {
            return Err(error);
        }
        let state = (script.items.into_iter(), cancel);
        let stream = futures::stream::unfold(state, |(mut items, cancel)| async move {
            loop {
                match items.next()? {
                    ScriptItem::Event(event) => return Some((Ok(event), (items, cancel))),
                    ScriptItem::Delay(duration) => {
                        tokio::select! {
                            () = tokio::time::sleep(duration) => {}
                            () = cancel.cancelled() => return None,
                        }
                    }
                    ScriptItem::Error(error) => {
                        return Some((Err(error), (Vec::new().into_iter(), cancel)));
                    }
                    ScriptItem::Cut => return None,
                    ScriptItem::Hang => {
                        cancel.cancelled().await;
                        return Some((
                            Err(ModelError::Cancelled),
                            (Vec::new().into_iter(), cancel),
                        ));
                    }
                }
            }
        });
        Ok(Box::pin(stream))
    }
}
