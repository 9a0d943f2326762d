//! Per-session delivery of the bus's events: a turn stream registers a
//! route for its root session and receives that session's events and its
//! sub-agents', and no one else's.
//!
//! A broadcast channel clones every event into every receiver. With a
//! hundred turns streaming on one engine (`agent serve` under load), each
//! event was cloned a hundred times so that ninety-nine streams could throw
//! it away: the work grew with the square of the concurrent turns. A route
//! is looked up by the event's session id, so an event is cloned once per
//! stream that wants it.
//!
//! A route learns a session's children from [`Event::ChildStarted`], which
//! the engine sends before the child's first event, so every event of a
//! descendant reaches the routes of its ancestors in the order it was sent.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use futures::channel::mpsc;

use crate::event::Event;

/// The live routes of one bus.
#[derive(Debug, Default)]
pub(crate) struct Routes {
    table: Mutex<Table>,
    /// How many routes are live, readable without the lock (the bus asks
    /// before it builds an event).
    live: AtomicUsize,
}

#[derive(Debug, Default)]
struct Table {
    next_id: u64,
    /// The routes each session's events go to.
    by_session: HashMap<String, Vec<Entry>>,
    /// The sessions each route covers, to forget them when it is dropped.
    sessions_of: HashMap<u64, Vec<String>>,
}

#[derive(Debug, Clone)]
struct Entry {
    id: u64,
    sender: mpsc::UnboundedSender<Event>,
}

/// A registered route; its sessions are forgotten when it is dropped.
#[derive(Debug)]
pub(crate) struct Route {
    routes: Arc<Routes>,
    id: u64,
}

impl Routes {
    fn table(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether any route is live.
    pub(crate) fn any(&self) -> bool {
        self.live.load(Ordering::Acquire) > 0
    }

    /// Routes `session_id`'s events, and its descendants' from their
    /// [`Event::ChildStarted`] on, to the returned receiver until the
    /// returned [`Route`] is dropped.
    pub(crate) fn open(
        routes: &Arc<Routes>,
        session_id: &str,
    ) -> (Route, mpsc::UnboundedReceiver<Event>) {
        let (sender, receiver) = mpsc::unbounded();
        let mut table = routes.table();
        let id = table.next_id;
        table.next_id += 1;
        table
            .by_session
            .entry(session_id.to_string())
            .or_default()
            .push(Entry { id, sender });
        table.sessions_of.insert(id, vec![session_id.to_string()]);
        routes.live.fetch_add(1, Ordering::AcqRel);
        drop(table);
        let route = Route {
            routes: Arc::clone(routes),
            id,
        };
        (route, receiver)
    }

    /// Delivers `event` to the routes of its session, first extending the
    /// parent's routes to the child when it is a
    /// [`ChildStarted`](Event::ChildStarted).
    ///
    /// The last route gets `event` itself, the others a copy: a turn
    /// stream alone (a one-turn run) copies nothing, however large the
    /// part the event carries.
    pub(crate) fn deliver(&self, event: Event) {
        if !self.any() {
            return;
        }
        let mut table = self.table();
        if let Event::ChildStarted {
            session_id,
            parent_id,
        } = &event
        {
            table.adopt(session_id, parent_id);
        }
        if let Some((last, others)) = table
            .by_session
            .get(event.session_id())
            .and_then(|entries| entries.split_last())
        {
            // A receiver dropped before its route: nothing to deliver to.
            for entry in others {
                let _ = entry.sender.unbounded_send(event.clone());
            }
            let _ = last.sender.unbounded_send(event);
        }
    }
}

impl Table {
    /// Adds the routes of `parent` that `child` lacks to `child`.
    fn adopt(&mut self, child: &str, parent: &str) {
        let Some(inherited) = self.by_session.get(parent).cloned() else {
            return;
        };
        let entries = self.by_session.entry(child.to_string()).or_default();
        let mut added = Vec::new();
        for entry in inherited {
            if entries.iter().all(|known| known.id != entry.id) {
                added.push(entry.id);
                entries.push(entry);
            }
        }
        for id in added {
            if let Some(sessions) = self.sessions_of.get_mut(&id) {
                sessions.push(child.to_string());
            }
        }
    }

    fn close(&mut self, id: u64) {
        for session in self.sessions_of.remove(&id).unwrap_or_default() {
            if let Some(entries) = self.by_session.get_mut(&session) {
                entries.retain(|entry| entry.id != id);
                if entries.is_empty() {
                    self.by_session.remove(&session);
                }
            }
        }
    }
}

impl Drop for Route {
    fn drop(&mut self) {
        self.routes.table().close(self.id);
        self.routes.live.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::SessionStatus;

    fn status(session: &str) -> Event {
        Event::SessionStatus {
            session_id: session.to_string(),
            status: SessionStatus::Busy,
        }
    }

    fn child(child: &str, parent: &str) -> Event {
        Event::ChildStarted {
            session_id: child.to_string(),
            parent_id: parent.to_string(),
        }
    }

    fn drain(receiver: &mut mpsc::UnboundedReceiver<Event>) -> Vec<String> {
        let mut seen = Vec::new();
        while let Ok(event) = receiver.try_recv() {
            seen.push(event.session_id().to_string());
        }
        seen
    }

    #[test]
    fn a_route_gets_its_session_and_its_descendants_in_order_and_nothing_else() {
        let routes = Arc::new(Routes::default());
        let (_a, mut a) = Routes::open(&routes, "a");
        let (_b, mut b) = Routes::open(&routes, "b");
        for event in [
            status("a"),
            status("b"),
            child("a1", "a"),
            status("a1"),
            child("a2", "a1"),
            status("a2"),
            status("c"),
            child("c1", "c"),
            status("c1"),
            status("a"),
        ] {
            routes.deliver(event);
        }
        assert_eq!(drain(&mut a), ["a", "a1", "a1", "a2", "a2", "a"]);
        assert_eq!(drain(&mut b), ["b"]);
    }

    #[test]
    fn a_child_started_twice_is_delivered_once_per_route() {
        let routes = Arc::new(Routes::default());
        let (_a, mut a) = Routes::open(&routes, "a");
        routes.deliver(child("a1", "a"));
        routes.deliver(child("a1", "a"));
        routes.deliver(status("a1"));
        assert_eq!(drain(&mut a), ["a1", "a1", "a1"]);
    }

    #[test]
    fn two_routes_on_one_session_each_get_every_event() {
        let routes = Arc::new(Routes::default());
        let (_one, mut one) = Routes::open(&routes, "a");
        let (_two, mut two) = Routes::open(&routes, "a");
        routes.deliver(child("a1", "a"));
        routes.deliver(status("a1"));
        assert_eq!(drain(&mut one), ["a1", "a1"]);
        assert_eq!(drain(&mut two), ["a1", "a1"]);
    }

    #[test]
    fn a_dropped_route_forgets_its_sessions_and_others_keep_theirs() {
        let routes = Arc::new(Routes::default());
        let (first, _first) = Routes::open(&routes, "a");
        let (_second, mut second) = Routes::open(&routes, "a");
        routes.deliver(child("a1", "a"));
        drop(first);
        assert!(routes.any());
        routes.deliver(status("a1"));
        assert_eq!(drain(&mut second), ["a1", "a1"]);
        drop(_second);
        assert!(!routes.any());
        let table = routes.table();
        assert!(table.by_session.is_empty());
        assert!(table.sessions_of.is_empty());
    }
}
