//! Everything `agent tui` shows, as plain data: the transcript, the
//! prompt editor, the ask being answered, the sessions panel and the
//! status line. [`update`](super::update) changes it; the views draw it.

use super::ask_modal::AskView;
use super::editor::Editor;
use super::transcript::Transcript;

/// What the status line says.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Status {
    /// The session's agent.
    pub agent: String,
    /// The model, `provider/model`.
    pub model: String,
    /// The session id.
    pub session: String,
    /// Input tokens of this view's turns.
    pub tokens_in: u64,
    /// Output tokens of this view's turns.
    pub tokens_out: u64,
    /// Their cost in dollars, when the model's prices are known.
    pub cost: Option<f64>,
    /// The sandbox mode bash commands run in (`workspace-write`, ...).
    pub sandbox: String,
    /// Whether the project's configuration is trusted.
    pub trust: String,
    /// Where `agent tui` runs: `local` or the server's URL.
    pub place: String,
}

/// A stored session as the sessions panel lists it (texts safe).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRow {
    /// The id.
    pub id: String,
    /// The agent.
    pub agent: String,
    /// The title.
    pub title: String,
}

/// The sessions panel: the directory's sessions and the one selected.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionsPanel {
    /// The sessions, most recent first.
    pub rows: Vec<SessionRow>,
    /// The selected row.
    pub selected: usize,
}

/// The whole screen's state.
#[derive(Debug, Clone, Default)]
pub struct State {
    /// The transcript.
    pub transcript: Transcript,
    /// The prompt editor.
    pub editor: Editor,
    /// The ask being answered.
    pub ask: Option<AskView>,
    /// The sessions panel, when open.
    pub sessions: Option<SessionsPanel>,
    /// The status line.
    pub status: Status,
    /// What the running turn does (`thinking`, `running bash ...`);
    /// `None` when no turn runs.
    pub activity: Option<String>,
    /// How many rows the transcript is scrolled up from its end.
    pub scroll: usize,
    /// How many rows PgUp and PgDn move: a page of the transcript panel
    /// less two rows kept for context, as the last frame drew it (0, one
    /// row, before the first frame).
    pub page: usize,
    /// Tool calls are shown with their output.
    pub expanded: bool,
    /// The agents `/agent` may switch to.
    pub agents: Vec<String>,
    /// The custom commands, `/NAME  description`.
    pub commands: Vec<String>,
    /// The user asked to leave.
    pub quit: bool,
    /// A spinner frame counter (advanced while a turn runs).
    pub tick: usize,
}

impl State {
    /// The state of a new screen on session `session`.
    pub fn new(status: Status) -> Self {
        State {
            transcript: Transcript::new(status.session.clone()),
            status,
            ..State::default()
        }
    }

    /// Whether a turn is running.
    pub fn busy(&self) -> bool {
        self.activity.is_some()
    }
}
