//! The servers of an [`McpManager`](super::McpManager), shared with the
//! tools it hands out: each server's slot and state, starting on first use,
//! and what happens when a server's tools change or its connection ends.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, Weak};

use indexmap::IndexMap;
use tokio::sync::watch;

use super::config::McpServerEntry;
use super::connection::{Change, ChangeCallback, Connection};
use super::error::McpError;

pub(super) enum SlotState {
    Pending,
    Disabled,
    Connected {
        generation: u64,
        connection: Arc<Connection>,
    },
    Failed(McpError),
}

pub(super) struct Slot {
    pub(super) entry: McpServerEntry,
    pub(super) state: Mutex<SlotState>,
    /// Held while the server starts, so it starts once.
    pub(super) starting: tokio::sync::Mutex<()>,
}

/// The servers of a manager, shared with the tools it hands out.
pub(crate) struct Servers {
    pub(super) directory: PathBuf,
    pub(super) slots: IndexMap<String, Slot>,
    pub(super) generations: Mutex<u64>,
    pub(super) version: watch::Sender<u64>,
}

impl Slot {
    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, SlotState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Servers {
    pub(super) async fn start_all(self: &Arc<Self>) {
        let starts = self.slots.keys().map(|name| self.ensure_started(name));
        futures::future::join_all(starts).await;
    }

    /// Starts `name` if it is pending; waits if another task is starting it.
    pub(super) async fn ensure_started(self: &Arc<Self>, name: &str) {
        let Some(slot) = self.slots.get(name) else {
            return;
        };
        if !matches!(*slot.lock(), SlotState::Pending) {
            return;
        }
        let _starting = slot.starting.lock().await;
        if !matches!(*slot.lock(), SlotState::Pending) {
            return;
        }
        let McpServerEntry::Valid(config) = &slot.entry else {
            return;
        };
        let generation = {
            let mut generations = self.generations.lock().unwrap_or_else(|e| e.into_inner());
            *generations += 1;
            *generations
        };
        let callback = self.change_callback(name, generation);
        let state = match Connection::start(name, config, &self.directory, callback).await {
            Ok(connection) => SlotState::Connected {
                generation,
                connection: Arc::new(connection),
            },
            Err(error) => SlotState::Failed(error),
        };
        *slot.lock() = state;
    }

    /// The connection of `name`, starting it if needed.
    pub(crate) async fn connection(
        self: &Arc<Self>,
        name: &str,
    ) -> Result<Arc<Connection>, McpError> {
        self.ensure_started(name).await;
        let Some(slot) = self.slots.get(name) else {
            return Err(McpError::NotConnected {
                server: name.to_string(),
                status: "no such server in the config".into(),
            });
        };
        match &*slot.lock() {
            SlotState::Connected { connection, .. } => Ok(Arc::clone(connection)),
            SlotState::Failed(error) => Err(error.clone()),
            SlotState::Disabled => Err(McpError::NotConnected {
                server: name.to_string(),
                status: "disabled".into(),
            }),
            SlotState::Pending => Err(McpError::NotConnected {
                server: name.to_string(),
                status: "not started".into(),
            }),
        }
    }

    /// The connected servers, in config order.
    pub(crate) fn connected(&self) -> Vec<(&str, Arc<Connection>)> {
        self.slots
            .iter()
            .filter_map(|(name, slot)| match &*slot.lock() {
                SlotState::Connected { connection, .. } => {
                    Some((name.as_str(), Arc::clone(connection)))
                }
                _ => None,
            })
            .collect()
    }

    pub(super) fn bump(&self) {
        self.version.send_modify(|v| *v += 1);
    }

    fn change_callback(self: &Arc<Self>, name: &str, generation: u64) -> ChangeCallback {
        let servers: Weak<Servers> = Arc::downgrade(self);
        let name = name.to_string();
        Arc::new(move |change| {
            let Some(servers) = servers.upgrade() else {
                return;
            };
            match change {
                Change::ToolsChanged => {
                    let name = name.clone();
                    tokio::spawn(async move { servers.refresh(&name, generation).await });
                }
                Change::Closed => servers.closed(&name, generation),
            }
        })
    }

    /// Re-lists a server's tools after `tools/list_changed`.
    async fn refresh(&self, name: &str, generation: u64) {
        let Some(slot) = self.slots.get(name) else {
            return;
        };
        let connection = match &*slot.lock() {
            SlotState::Connected {
                generation: current,
                connection,
            } if *current == generation => Arc::clone(connection),
            _ => return,
        };
        // A failed re-listing keeps the previous tools unless the
        // connection is gone (then the server is failed, as on a crash).
        if let Err(error @ McpError::Closed { .. }) = connection.refresh_tools().await {
            let mut state = slot.lock();
            if matches!(&*state, SlotState::Connected { generation: g, .. } if *g == generation) {
                connection.shutdown();
                *state = SlotState::Failed(error);
            }
        }
        self.bump();
    }

    /// Marks a server failed when its connection ends on its own.
    fn closed(&self, name: &str, generation: u64) {
        let Some(slot) = self.slots.get(name) else {
            return;
        };
        {
            let mut state = slot.lock();
            let SlotState::Connected {
                generation: current,
                connection,
            } = &*state
            else {
                return;
            };
            if *current != generation {
                return;
            }
            let error = McpError::Closed {
                server: name.to_string(),
                message: connection
                    .closed_reason()
                    .unwrap_or_else(|| "the connection closed".into()),
                stderr: connection.stderr_tail(),
            };
            *state = SlotState::Failed(error);
        }
        self.bump();
    }
}
