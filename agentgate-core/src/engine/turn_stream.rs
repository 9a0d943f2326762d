//! [`TurnEvent`] and [`Engine::prompt_stream`]: a turn's events in order,
//! ending with its result, so nothing arrives after the turn is done.

use std::collections::HashMap;

use futures::channel::mpsc;
use futures::{Stream, StreamExt};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use super::facade::{Engine, PromptOptions};
use super::outcome::{PromptError, TurnResult};
use crate::event::Event;
use crate::message::Part;
use crate::sessions::SessionStore;

/// One item of [`Engine::prompt_stream`].
// Events are nearly every item; boxing them would allocate per delta.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TurnEvent {
    /// An event of the turn: of its session, or of a sub-agent session it
    /// started (tagged with that session's id). Text deltas, tool calls,
    /// permission asks and replies, retries.
    Event(Event),
    /// The turn ended; always the last item.
    Finished(Result<TurnResult, PromptError>),
}

impl Engine {
    /// Prompts a session like [`prompt_with`](Self::prompt_with) and
    /// streams the turn: every event of the session and of the sub-agent
    /// sessions it starts, in the order the engine emitted them, then
    /// [`TurnEvent::Finished`] with the turn's result. The stream ends right
    /// after it, so no event of the turn arrives after "done".
    ///
    /// The turn runs on its own tokio task: dropping the stream does not
    /// stop it (cancel `cancel` for that).
    pub fn prompt_stream(
        &self,
        session_id: &str,
        parts: Vec<Part>,
        cancel: CancellationToken,
    ) -> impl Stream<Item = TurnEvent> + Send + 'static {
        self.prompt_stream_with(session_id, parts, PromptOptions::default(), cancel)
    }

    /// [`prompt_stream`](Self::prompt_stream) with this prompt's agent and
    /// model (see [`prompt_with_options`](Self::prompt_with_options)).
    pub fn prompt_stream_with(
        &self,
        session_id: &str,
        parts: Vec<Part>,
        options: PromptOptions,
        cancel: CancellationToken,
    ) -> impl Stream<Item = TurnEvent> + Send + 'static {
        let engine = self.clone();
        let root = session_id.to_string();
        self.follow(session_id, async move {
            engine
                .prompt_with_options(&root, parts, options, cancel)
                .await
        })
    }

    /// Streams what `work` does to session `session_id` as
    /// [`prompt_stream`](Self::prompt_stream) streams a turn: every event
    /// of the session and its sub-agent sessions while `work` runs, then
    /// [`TurnEvent::Finished`] with its result. For the engine's other
    /// runs, such as [`run_shell`](Self::run_shell) and
    /// [`compact`](Self::compact). `work` runs on its own tokio task.
    pub fn follow(
        &self,
        session_id: &str,
        work: impl Future<Output = Result<TurnResult, PromptError>> + Send + 'static,
    ) -> impl Stream<Item = TurnEvent> + Send + 'static {
        let (sender, receiver) = mpsc::unbounded();
        // Route the session's events here before the turn starts, so its
        // first event is seen. The gate's asks and replies are taken from
        // the gate itself, not as the engine's forwarding task relays them:
        // an ask that is answered at once (a rejecting approver) would
        // otherwise reach the engine's bus after the turn ended, and be
        // missing from the stream.
        let (route, mut routed) = self.state().events.route(session_id);
        let mut gate = self.state().permissions.subscribe();
        let engine = self.clone();
        let root = session_id.to_string();
        tokio::spawn(async move {
            let mut filter = SessionFilter::new(root.clone());
            let store = engine.store();
            let turn = work;
            tokio::pin!(turn);
            let mut gate_open = true;
            let result = loop {
                tokio::select! {
                    biased;
                    Some(event) = routed.next() => {
                        filter.learn(&event);
                        if !from_gate(&event) {
                            let _ = sender.unbounded_send(TurnEvent::Event(event));
                        }
                    }
                    received = gate.recv(), if gate_open => match received {
                        Ok(event) => {
                            if let Ok(event) = Event::try_from(event)
                                && filter.wants_gate_event(store.as_ref(), &event).await
                            {
                                let _ = sender.unbounded_send(TurnEvent::Event(event));
                            }
                        }
                        Err(broadcast::error::RecvError::Lagged(missed)) => {
                            tracing::warn!(session_id = %root, missed, "prompt_stream fell behind the gate; asks were lost");
                        }
                        Err(broadcast::error::RecvError::Closed) => gate_open = false,
                    },
                    result = &mut turn => break result,
                }
            };
            // Every event of the turn, the gate's included, was sent before
            // it returned.
            while let Ok(event) = routed.try_recv() {
                filter.learn(&event);
                if !from_gate(&event) {
                    let _ = sender.unbounded_send(TurnEvent::Event(event));
                }
            }
            drop(route);
            while let Ok(event) = gate.try_recv() {
                if let Ok(event) = Event::try_from(event)
                    && filter.wants_gate_event(store.as_ref(), &event).await
                {
                    let _ = sender.unbounded_send(TurnEvent::Event(event));
                }
            }
            let _ = sender.unbounded_send(TurnEvent::Finished(result));
        });
        receiver
    }
}

/// Whether `event` is one the engine relays from the permission gate (the
/// stream takes those from the gate directly).
fn from_gate(event: &Event) -> bool {
    matches!(
        event,
        Event::PermissionAsked { .. } | Event::PermissionReplied { .. }
    )
}

/// Which sessions belong to the streamed turn, for the gate's events: the
/// root and its descendants. The bus's events need no filter (the route
/// delivers only the turn's own, and announces each child with
/// [`Event::ChildStarted`] before its first event); the gate's come on a
/// channel of their own, possibly ahead of that announcement, so an unknown
/// session there is looked up in the store (once, and asks are rare).
struct SessionFilter {
    root: String,
    known: HashMap<String, bool>,
}

impl SessionFilter {
    fn new(root: String) -> Self {
        let mut known = HashMap::new();
        known.insert(root.clone(), true);
        SessionFilter { root, known }
    }

    /// Records the descendant a routed [`Event::ChildStarted`] announces.
    fn learn(&mut self, event: &Event) {
        if let Event::ChildStarted { session_id, .. } = event {
            self.known.insert(session_id.clone(), true);
        }
    }

    async fn wants_gate_event(&mut self, store: &dyn SessionStore, event: &Event) -> bool {
        let id = event.session_id();
        match self.known.get(id) {
            Some(&known) => known,
            None => self.look_up(store, id).await,
        }
    }

    /// Whether `id` descends from the root, by its parents in the store;
    /// remembered for `id` and every session on the way.
    async fn look_up(&mut self, store: &dyn SessionStore, id: &str) -> bool {
        let mut chain = vec![id.to_string()];
        let mut current = id.to_string();
        let belongs = loop {
            if current == self.root {
                break true;
            }
            let Ok(session) = store.session(&current).await else {
                break false;
            };
            match session.parent_id {
                Some(parent) if parent == self.root => break true,
                Some(parent) => match self.known.get(&parent) {
                    Some(&known) => break known,
                    None if chain.contains(&parent) => break false,
                    None => {
                        chain.push(parent.clone());
                        current = parent;
                    }
                },
                None => break false,
            }
        };
        for id in chain {
            self.known.insert(id, belongs);
        }
        belongs
    }
}
