//! [`EngineState`]: what every turn of an engine shares, and the
//! bookkeeping on it (the busy set, message events).

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use agentgate_permission::PermissionGate;

use super::settings::LoopSettings;
use crate::agent_spec::AgentSpec;
use crate::agents::Agents;
use crate::event::{Event, SessionStatus};
use crate::event_bus::EventBus;
use crate::message::Message;
use crate::model::{LanguageModel, ModelResolver};
use crate::prompts::SystemPrompts;
use crate::sessions::SessionStore;
use crate::sessions::SessionStoreError;
use crate::tool_registry::ToolRegistry;

/// What every step shares.
pub(crate) struct EngineState {
    pub model: Arc<dyn LanguageModel>,
    pub tools: ToolRegistry,
    pub permissions: PermissionGate,
    pub events: EventBus,
    pub config: LoopSettings,
    pub worktree: Option<PathBuf>,
    pub prompts: SystemPrompts,
    pub agents: HashMap<String, Arc<AgentSpec>>,
    /// The full agent definitions, when the builder was given them.
    pub catalog: Option<Agents>,
    pub store: Arc<dyn SessionStore>,
    pub resolver: Option<Arc<dyn ModelResolver>>,
    pub busy: Mutex<HashSet<String>>,
    pub forwarding: AtomicBool,
    /// The hooks, in registration order (`crate::hooks`).
    pub hooks: Vec<Arc<dyn crate::hooks::Hook>>,
    /// Whether and how new sessions get titles (`titles.rs`).
    pub titles: super::title_setting::SessionTitles,
    /// The title tasks that may still run.
    pub title_tasks: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    /// Where each step's file changes are recorded (`crate::checkpoint`).
    pub checkpoints: Option<Arc<dyn crate::checkpoint::Checkpoints>>,
}

/// Removes a session from the busy set when the prompt ends, however it ends.
pub(super) struct BusyGuard<'a> {
    pub state: &'a EngineState,
    pub session_id: String,
}

impl Drop for BusyGuard<'_> {
    fn drop(&mut self) {
        self.state
            .busy
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.session_id);
        let session_id = std::mem::take(&mut self.session_id);
        self.state.events.emit(|| Event::SessionStatus {
            session_id,
            status: SessionStatus::Idle,
        });
    }
}

/// Announces a stored message and its parts on the event bus.
pub(super) fn emit_message(state: &EngineState, message: &Message) {
    state.events.emit(|| Event::MessageCreated {
        session_id: message.session_id.clone(),
        message_id: message.id.clone(),
        role: message.role,
    });
    for part in &message.parts {
        state.events.emit(|| Event::PartCreated {
            session_id: message.session_id.clone(),
            message_id: message.id.clone(),
            part: part.clone(),
        });
    }
}

/// Stores a finished message and announces it.
pub(super) async fn complete_message(
    state: &EngineState,
    message: &Message,
) -> Result<(), SessionStoreError> {
    state.store.put_message(message).await?;
    state.events.emit(|| Event::MessageCompleted {
        session_id: message.session_id.clone(),
        message_id: message.id.clone(),
        finish: message.finish,
        error: message.error.clone(),
    });
    Ok(())
}
