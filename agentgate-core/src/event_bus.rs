//! [`EventBus`]: the broadcast channel the engine's [`Event`]s go out on,
//! and the per-session routes turn streams read them from.

use std::sync::Arc;

use futures::channel::mpsc;
use tokio::sync::broadcast;

use crate::event::Event;
use crate::event_routes::{Route, Routes};

/// Default capacity of the event channel.
pub const DEFAULT_EVENT_CAPACITY: usize = 4096;

/// The broadcast channel events go out on. Cheap to clone.
///
/// Turn streams ([`Engine::prompt_stream`](crate::Engine::prompt_stream))
/// do not subscribe to the broadcast: each takes its own session's events
/// from a per-session route, so concurrent turns do not copy each other's
/// events.
#[derive(Debug, Clone)]
pub struct EventBus {
    sender: broadcast::Sender<Event>,
    routes: Arc<Routes>,
}

impl Default for EventBus {
    fn default() -> Self {
        Self::new(DEFAULT_EVENT_CAPACITY)
    }
}

impl EventBus {
    /// A bus whose subscribers may fall `capacity` events behind before
    /// they see `RecvError::Lagged`.
    pub fn new(capacity: usize) -> Self {
        EventBus {
            sender: broadcast::channel(capacity.max(1)).0,
            routes: Arc::default(),
        }
    }

    /// A receiver of every event sent from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.sender.subscribe()
    }

    /// Sends an event (dropped when nobody listens).
    pub fn send(&self, event: Event) {
        self.routes.deliver(&event);
        let _ = self.sender.send(event);
    }

    /// Sends the event `make` builds, building it only when someone listens.
    pub fn emit(&self, make: impl FnOnce() -> Event) {
        if self.has_subscribers() {
            self.send(make());
        }
    }

    /// Whether anyone listens: a subscriber, or a turn stream.
    pub fn has_subscribers(&self) -> bool {
        self.sender.receiver_count() > 0 || self.routes.any()
    }

    /// The events of `session_id` and of its sub-agent sessions (from
    /// their [`Event::ChildStarted`] on), in the order they are sent,
    /// until the returned [`Route`] is dropped.
    pub(crate) fn route(&self, session_id: &str) -> (Route, mpsc::UnboundedReceiver<Event>) {
        Routes::open(&self.routes, session_id)
    }
}
