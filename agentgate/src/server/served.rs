//! The sessions this process is serving right now: a session's agent and
//! turn queue live here only while a request or a turn holds them
//! ([`ServedRef`]); when the last holder lets go the entry is dropped, so
//! an idle session costs the server nothing but its stored record. The
//! next request for it opens it again from the store.

use std::collections::HashMap;
use std::ops::Deref;
use std::sync::{Arc, Mutex, PoisonError};

use tokio_util::sync::CancellationToken;

use crate::{CodingAgent, PromptError, TurnResult};

/// A session this process serves.
pub(crate) struct Served {
    pub(crate) agent: CodingAgent,
    /// One turn at a time: later prompts queue here, in order.
    pub(super) turn: tokio::sync::Mutex<()>,
    /// Cancelled by an abort: the running turn and the prompts queued
    /// before the abort.
    epoch: Mutex<CancellationToken>,
    /// Cancelled when the turn waiting at an ask is parked: the turn's
    /// future is dropped where it waits (see the server's `parking` module).
    /// Replaced then, so a turn started later (the parked one resumed
    /// here) is not dropped with it.
    parked: Mutex<CancellationToken>,
}

impl Served {
    /// The token an abort cancels (the running turn's and the queued
    /// prompts').
    pub(crate) fn epoch(&self) -> CancellationToken {
        self.epoch
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The token [`park`](Self::park) cancels.
    pub(crate) fn parked(&self) -> CancellationToken {
        self.parked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Drops the running turn where it waits (at an ask the gate set
    /// aside), without cancelling it: nothing more of it is stored, and
    /// the session leaves memory once nothing else holds it.
    pub(super) fn park(&self) {
        let old = std::mem::replace(
            &mut *self.parked.lock().unwrap_or_else(PoisonError::into_inner),
            CancellationToken::new(),
        );
        old.cancel();
    }

    /// Cancels the running turn and the prompts queued so far; later
    /// prompts run.
    pub(super) fn abort(&self) {
        let old = std::mem::replace(
            &mut *self.epoch.lock().unwrap_or_else(PoisonError::into_inner),
            CancellationToken::new(),
        );
        old.cancel();
    }
}

/// `work`, unless `park` is cancelled first: then `work` is dropped where
/// it waits, and the result is an error nobody reads (the caller sees the
/// token cancelled).
pub(crate) async fn unless_parked(
    work: impl std::future::Future<Output = Result<TurnResult, PromptError>>,
    park: CancellationToken,
) -> Result<TurnResult, PromptError> {
    tokio::select! {
        biased;
        () = park.cancelled() => Err(PromptError::Busy("the turn was parked at an ask".into())),
        result = work => result,
    }
}

type Map = HashMap<String, Arc<Served>>;

/// The served sessions by id.
#[derive(Default)]
pub(crate) struct ServedSessions {
    map: Arc<Mutex<Map>>,
}

impl ServedSessions {
    fn lock(&self) -> std::sync::MutexGuard<'_, Map> {
        self.map.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Session `id`, if something holds it now.
    pub(super) fn get(&self, id: &str) -> Option<ServedRef> {
        let map = self.lock();
        map.get(id).map(|served| self.held(id, Arc::clone(served)))
    }

    /// Serves `agent`'s session; when a concurrent request registered it
    /// first, that one (one turn queue per session).
    pub(super) fn register(&self, agent: CodingAgent) -> ServedRef {
        let id = agent.session().id.clone();
        let mut map = self.lock();
        let served = map.entry(id.clone()).or_insert_with(|| {
            Arc::new(Served {
                agent,
                turn: tokio::sync::Mutex::new(()),
                epoch: Mutex::new(CancellationToken::new()),
                parked: Mutex::new(CancellationToken::new()),
            })
        });
        let served = Arc::clone(served);
        drop(map);
        self.held(&id, served)
    }

    /// Ids of the sessions held now.
    pub(super) fn ids(&self) -> Vec<String> {
        self.lock().keys().cloned().collect()
    }

    /// How many sessions are held now.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.lock().len()
    }

    /// Drops session `id` from the map (its holders keep theirs until
    /// they let go).
    pub(super) fn remove(&self, id: &str) {
        self.lock().remove(id);
    }

    fn held(&self, id: &str, served: Arc<Served>) -> ServedRef {
        ServedRef {
            served: Some(served),
            id: id.to_string(),
            map: Arc::clone(&self.map),
        }
    }
}

/// A hold on a served session: while one exists the session stays in
/// the map; dropping the last one drops the entry.
pub(crate) struct ServedRef {
    /// `Some` until dropped.
    served: Option<Arc<Served>>,
    id: String,
    map: Arc<Mutex<Map>>,
}

impl ServedRef {
    /// How many hold the session now: the map, and each hold.
    pub(crate) fn holders(&self) -> usize {
        let _map = self.map.lock().unwrap_or_else(PoisonError::into_inner);
        self.served.as_ref().map_or(0, Arc::strong_count)
    }
}

impl Deref for ServedRef {
    type Target = Served;

    fn deref(&self) -> &Served {
        match &self.served {
            Some(served) => served,
            // `served` is only taken in `drop`.
            None => unreachable!("a ServedRef is used after it was dropped"),
        }
    }
}

impl Clone for ServedRef {
    fn clone(&self) -> Self {
        // The map is locked so the count the last holder checks in `drop`
        // never misses a clone made at the same time.
        let _map = self.map.lock().unwrap_or_else(PoisonError::into_inner);
        ServedRef {
            served: self.served.clone(),
            id: self.id.clone(),
            map: Arc::clone(&self.map),
        }
    }
}

impl Drop for ServedRef {
    fn drop(&mut self) {
        let Some(served) = self.served.take() else {
            return;
        };
        // Every hold is made and let go under the lock, so a count of two
        // (the map's and this one) means no one else holds the session.
        let mut map = self.map.lock().unwrap_or_else(PoisonError::into_inner);
        let ours = map
            .get(&self.id)
            .is_some_and(|entry| Arc::ptr_eq(entry, &served));
        if ours && Arc::strong_count(&served) == 2 {
            map.remove(&self.id);
        }
        drop(served);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentgate_core::testing::ScriptedModel;

    async fn agent(dir: &std::path::Path) -> CodingAgent {
        let loader = crate::ConfigLoader::new(dir)
            .home(dir.join("home"))
            .global_dir(dir.join("global"))
            .env(|_| None);
        CodingAgent::builder(dir)
            .config(loader)
            .model(Arc::new(ScriptedModel::new([])))
            .tools(crate::ToolRegistry::new())
            .without_mcp()
            .store(Arc::new(crate::MemorySessionStore::new()))
            .build()
            .await
            .unwrap()
    }

    /// A fresh directory of this test process.
    fn scratch() -> std::path::PathBuf {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("agentgate-served-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[tokio::test]
    async fn a_session_is_held_while_any_hold_exists_and_dropped_with_the_last() {
        let dir = scratch();
        let sessions = ServedSessions::default();
        let first = agent(&dir).await;
        let id = first.session().id.clone();
        let held = sessions.register(first);
        let again = sessions.get(&id).unwrap();
        assert!(Arc::ptr_eq(
            held.served.as_ref().unwrap(),
            again.served.as_ref().unwrap()
        ));
        let cloned = again.clone();
        drop(held);
        drop(again);
        assert_eq!(sessions.len(), 1, "a clone still holds it");
        drop(cloned);
        assert_eq!(sessions.len(), 0, "the last hold let it go");
        assert!(sessions.get(&id).is_none());
    }

    #[tokio::test]
    async fn a_second_registration_gets_the_first_entry_and_its_turn_queue() {
        let dir = scratch();
        let sessions = ServedSessions::default();
        let first = agent(&dir).await;
        let twin = first.clone();
        let a = sessions.register(first);
        let b = sessions.register(twin);
        assert!(Arc::ptr_eq(
            a.served.as_ref().unwrap(),
            b.served.as_ref().unwrap()
        ));
        let _turn = a.turn.try_lock().unwrap();
        assert!(b.turn.try_lock().is_err(), "one turn queue per session");
    }

    #[tokio::test]
    async fn a_removed_entry_is_not_removed_again_by_its_old_holders() {
        let dir = scratch();
        let sessions = ServedSessions::default();
        let first = agent(&dir).await;
        let id = first.session().id.clone();
        let old = sessions.register(first.clone());
        sessions.remove(&id);
        let new = sessions.register(first);
        drop(old);
        assert_eq!(sessions.len(), 1, "the new entry is held by `new`");
        drop(new);
        assert_eq!(sessions.len(), 0);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn holds_taken_and_dropped_concurrently_never_leave_an_entry_behind() {
        let dir = scratch();
        let sessions = Arc::new(ServedSessions::default());
        let first = agent(&dir).await;
        let id = first.session().id.clone();
        let held = sessions.register(first);
        let mut tasks = Vec::new();
        for _ in 0..8 {
            let (sessions, id) = (Arc::clone(&sessions), id.clone());
            tasks.push(tokio::spawn(async move {
                for _ in 0..500 {
                    if let Some(served) = sessions.get(&id) {
                        let copy = served.clone();
                        tokio::task::yield_now().await;
                        drop(served);
                        drop(copy);
                    }
                }
            }));
        }
        for task in tasks {
            task.await.unwrap();
        }
        assert_eq!(sessions.len(), 1, "`held` still holds it");
        drop(held);
        assert_eq!(
            sessions.len(),
            0,
            "no hold is left, so neither is the entry"
        );
    }
}
