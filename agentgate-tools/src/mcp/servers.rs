//! The servers of an [`McpManager`](super::McpManager), shared with the
//! tools it hands out: each server's slot and state, starting on first use,
//! and what happens when a server's tools change or its connection ends.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, Weak};

use indexmap::IndexMap;
use tokio::sync::watch;

use super::config::McpServerEntry;
use super::connection::{Change, ChangeCallback, Connection};
use super::error::McpError;

/// How many times a server that exited on its own is started again over
/// the manager's life: one attempt per exit, on the next call that needs
/// it, so a server that dies on every call is not restarted forever.
const MAX_RESTARTS: u32 = 3;

pub(super) enum SlotState {
    Pending,
    Disabled,
    Connected {
        generation: u64,
        connection: Arc<Connection>,
    },
    /// Its connection ended on its own (the process exited, the stream
    /// closed): started again by the next call that needs it.
    Exited(McpError),
    Failed(McpError),
}

pub(super) struct Slot {
    pub(super) entry: McpServerEntry,
    pub(super) state: Mutex<SlotState>,
    /// Held while the server starts, so it starts once.
    pub(super) starting: tokio::sync::Mutex<()>,
    /// How often it was started again after exiting.
    pub(super) restarts: AtomicU32,
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

    /// Whether a start would do something: it is pending, or (`restart`)
    /// it exited and has restarts left.
    fn startable(&self, restart: bool) -> bool {
        match &*self.lock() {
            SlotState::Pending => true,
            SlotState::Exited(_) => restart && self.restarts.load(Ordering::SeqCst) < MAX_RESTARTS,
            _ => false,
        }
    }
}

/// How a server's earlier run ended, for the restart report.
fn exit_reason(error: &McpError) -> String {
    match error {
        McpError::Closed { message, .. } => message.clone(),
        other => other.to_string(),
    }
}

impl Servers {
    pub(super) async fn start_all(self: &Arc<Self>) {
        let starts = self
            .slots
            .keys()
            .map(|name| self.ensure_started(name, false));
        futures::future::join_all(starts).await;
    }

    /// Starts `name` if it is pending, or, with `restart`, if it exited and
    /// may be started again; waits if another task is starting it.
    async fn ensure_started(self: &Arc<Self>, name: &str, restart: bool) {
        let Some(slot) = self.slots.get(name) else {
            return;
        };
        if !slot.startable(restart) {
            return;
        }
        let _starting = slot.starting.lock().await;
        if !slot.startable(restart) {
            return;
        }
        let McpServerEntry::Valid(config) = &slot.entry else {
            return;
        };
        let exited = match &*slot.lock() {
            SlotState::Exited(error) => Some(error.clone()),
            _ => None,
        };
        if exited.is_some() {
            slot.restarts.fetch_add(1, Ordering::SeqCst);
        }
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
            Err(error) => SlotState::Failed(match &exited {
                None => error,
                Some(previous) => {
                    tracing::warn!(server = %name, %error, "an MCP server that exited could not be restarted");
                    McpError::RestartFailed {
                        server: name.to_string(),
                        exited: exit_reason(previous),
                        error: Box::new(error),
                    }
                }
            }),
        };
        *slot.lock() = state;
        if let Some(previous) = exited {
            tracing::info!(server = %name, reason = %exit_reason(&previous), "restarted an MCP server that exited");
            self.bump();
        }
    }

    /// The connection of `name`, starting it if needed, or again when it
    /// exited since its last use.
    pub(crate) async fn connection(
        self: &Arc<Self>,
        name: &str,
    ) -> Result<Arc<Connection>, McpError> {
        self.ensure_started(name, true).await;
        let Some(slot) = self.slots.get(name) else {
            return Err(McpError::NotConnected {
                server: name.to_string(),
                status: "no such server in the config".into(),
            });
        };
        match &*slot.lock() {
            SlotState::Connected { connection, .. } => Ok(Arc::clone(connection)),
            SlotState::Failed(error) | SlotState::Exited(error) => Err(error.clone()),
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
                *state = SlotState::Exited(error);
            }
        }
        self.bump();
    }

    /// Marks a server exited when its connection ends on its own.
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
            *state = SlotState::Exited(error);
        }
        self.bump();
    }
}
