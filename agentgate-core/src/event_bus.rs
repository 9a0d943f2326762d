//! [`EventBus`]: the broadcast channel the engine's [`Event`]s go out on,
//! and the per-session routes turn streams read them from.

use std::sync::{Arc, OnceLock};

use futures::channel::mpsc;
use tokio::sync::broadcast;

use crate::event::Event;
use crate::event_routes::{Route, Routes};

/// Default capacity of the event channel.
pub const DEFAULT_EVENT_CAPACITY: usize = 4096;

/// The broadcast channel events go out on. Cheap to clone.
///
/// The channel's ring (`capacity` slots of an [`Event`], about 2 MB at the
/// default) is allocated at the first [`subscribe`](Self::subscribe), not
/// before: a one-turn `agent run`, whose turn stream reads a route, never
/// pays for it.
///
/// Turn streams ([`Engine::prompt_stream`](crate::Engine::prompt_stream))
/// do not subscribe to the broadcast: each takes its own session's events
/// from a per-session route, so concurrent turns do not copy each other's
/// events.
#[derive(Debug, Clone)]
pub struct EventBus {
    /// Created by the first subscriber; shared by every clone.
    sender: Arc<OnceLock<broadcast::Sender<Event>>>,
    capacity: usize,
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
            sender: Arc::default(),
            capacity: capacity.max(1),
            routes: Arc::default(),
        }
    }

    /// A receiver of every event sent from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.sender
            .get_or_init(|| broadcast::channel(self.capacity).0)
            .subscribe()
    }

    /// Sends an event (dropped when nobody listens).
    pub fn send(&self, event: Event) {
        // The broadcast gets the event itself when it has receivers, else
        // the routes do: a copy is made only when both listen.
        match self
            .sender
            .get()
            .filter(|sender| sender.receiver_count() > 0)
        {
            Some(sender) => {
                if self.routes.any() {
                    self.routes.deliver(event.clone());
                }
                let _ = sender.send(event);
            }
            None => self.routes.deliver(event),
        }
    }

    /// Sends the event `make` builds, building it only when someone listens.
    pub fn emit(&self, make: impl FnOnce() -> Event) {
        if self.has_subscribers() {
            self.send(make());
        }
    }

    /// Whether anyone listens: a subscriber, or a turn stream.
    pub fn has_subscribers(&self) -> bool {
        self.sender.get().is_some_and(|s| s.receiver_count() > 0) || self.routes.any()
    }

    /// The events of `session_id` and of its sub-agent sessions (from
    /// their [`Event::ChildStarted`] on), in the order they are sent,
    /// until the returned [`Route`] is dropped.
    pub(crate) fn route(&self, session_id: &str) -> (Route, mpsc::UnboundedReceiver<Event>) {
        Routes::open(&self.routes, session_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SessionStatus;

    fn status(session: &str) -> Event {
        Event::SessionStatus {
            session_id: session.into(),
            status: SessionStatus::Idle,
        }
    }

    #[test]
    fn the_ring_exists_only_once_someone_subscribes_and_every_clone_shares_it() {
        let bus = EventBus::new(8);
        let clone = bus.clone();
        assert!(!bus.has_subscribers());
        // Nobody listens: sent and dropped, no ring allocated.
        bus.send(status("s0"));
        assert!(bus.sender.get().is_none());
        let mut receiver = clone.subscribe();
        assert!(bus.has_subscribers());
        bus.send(status("s1"));
        let Ok(Event::SessionStatus { session_id, .. }) = receiver.try_recv() else {
            panic!("the subscriber of one clone sees what another sends");
        };
        assert_eq!(session_id, "s1");
        assert!(
            receiver.try_recv().is_err(),
            "s0 was sent before it subscribed"
        );
        drop(receiver);
        assert!(!bus.has_subscribers());
    }
}
