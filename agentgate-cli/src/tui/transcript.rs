//! What the transcript of `agent tui` holds: the prompts, the model's
//! answers and reasoning, tool calls with their output (a sub-agent's
//! calls nested under the root's), and the program's notes; built from the
//! engine's [`TurnEvent`]s and from stored [`Message`]s.
//!
//! Every text that did not come from the program goes through the one
//! renderer ([`terminal_text`](crate::terminal_text)) as it enters: an
//! entry only ever holds terminal-safe text, so nothing the view draws can
//! carry a control or escape sequence.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use agentgate::remote::{RemoteEvent, RemoteMessage, RemotePart, RemoteToolCall};
use agentgate::{DeltaField, Event, Message, Part, Role, ToolPart, ToolState, TurnEvent};

use crate::render::{input_summary, one_line};
use crate::terminal_text::{StreamText, terminal_safe};

/// Where a tool call is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolStatus {
    /// Its input is still streaming.
    Pending,
    /// Running.
    Running,
    /// Finished.
    Done,
    /// Failed (its error is the output).
    Failed,
}

/// One tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolEntry {
    /// The part id.
    pub id: String,
    /// The tool's name.
    pub tool: String,
    /// A one-line summary of the input (the command, the path).
    pub summary: String,
    /// Its state.
    pub status: ToolStatus,
    /// Its output, or an edit's diff, or its error.
    pub output: String,
    /// 0 for the root session's calls, 1 for a sub-agent's.
    pub depth: u8,
}

/// What a note is about: it decides its colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoteKind {
    /// Information (a command's answer, a turn's summary).
    Info,
    /// Something went wrong.
    Error,
}

/// One block of the transcript.
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    /// A prompt the person sent.
    User(String),
    /// The model's answer text (markdown), by part id.
    Assistant {
        /// The part id.
        id: String,
        /// The text so far.
        text: String,
        /// 0 for the root session, 1 for a sub-agent.
        depth: u8,
    },
    /// The model's reasoning, by part id.
    Reasoning {
        /// The part id.
        id: String,
        /// The text so far.
        text: String,
    },
    /// A tool call.
    Tool(ToolEntry),
    /// A line of the program's own (it may quote foreign text, already
    /// made safe).
    Note(NoteKind, String),
}

/// The transcript: entries in order, each with a revision number the view
/// caches its drawn lines by.
#[derive(Debug, Default, Clone)]
pub struct Transcript {
    entries: Vec<(u64, Entry)>,
    /// The root session: events of any other are a sub-agent's.
    root: String,
    /// Where each part's entry is.
    index: HashMap<String, usize>,
    /// The renderer of each streamed part's text.
    streams: HashMap<String, StreamText>,
}

impl Transcript {
    /// An empty transcript of session `root`.
    pub fn new(root: impl Into<String>) -> Self {
        Transcript {
            root: root.into(),
            ..Transcript::default()
        }
    }

    /// The entries, each with its revision.
    pub fn entries(&self) -> &[(u64, Entry)] {
        &self.entries
    }

    /// A revision number no entry of any transcript had before (a view
    /// caches drawn lines by it, across a transcript replaced by another).
    fn rev(&mut self) -> u64 {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        NEXT.fetch_add(1, Ordering::Relaxed)
    }

    /// Adds an entry at the end.
    pub fn push(&mut self, entry: Entry) {
        let rev = self.rev();
        self.entries.push((rev, entry));
    }

    /// Adds a prompt (made safe).
    pub fn user(&mut self, text: &str) {
        self.push(Entry::User(terminal_safe(text)));
    }

    /// Adds a note of the program's own; `text` is made safe as well, as
    /// it may quote foreign text.
    pub fn note(&mut self, kind: NoteKind, text: &str) {
        self.push(Entry::Note(kind, terminal_safe(text.trim_end())));
    }

    /// Changes the entry of part `id` with `change`, or adds `make()`.
    fn upsert(&mut self, id: &str, make: impl FnOnce() -> Entry, change: impl FnOnce(&mut Entry)) {
        let rev = self.rev();
        match self.index.get(id) {
            Some(&at) => {
                let slot = &mut self.entries[at];
                slot.0 = rev;
                change(&mut slot.1);
            }
            None => {
                let mut entry = make();
                change(&mut entry);
                self.index.insert(id.to_string(), self.entries.len());
                self.entries.push((rev, entry));
            }
        }
    }

    /// Takes in one item of a turn's stream.
    pub fn event(&mut self, item: &TurnEvent) {
        let TurnEvent::Event(event) = item else {
            return;
        };
        let depth = u8::from(event.session_id() != self.root);
        match event {
            Event::PartDelta {
                part_id,
                field,
                delta,
                ..
            } => self.delta(part_id, *field, delta, depth),
            Event::PartUpdated { part, .. } => self.part(part, depth),
            Event::Error { error, .. } => {
                self.note(NoteKind::Error, &format!("error: {}", error.message))
            }
            _ => {}
        }
    }

    /// Streamed text of part `id`.
    fn delta(&mut self, id: &str, field: DeltaField, delta: &str, depth: u8) {
        let shown = self.streams.entry(id.to_string()).or_default().push(delta);
        let owned = id.to_string();
        match field {
            DeltaField::Text => self.upsert(
                id,
                || Entry::Assistant {
                    id: owned,
                    text: String::new(),
                    depth,
                },
                |entry| {
                    if let Entry::Assistant { text, .. } = entry {
                        text.push_str(&shown);
                    }
                },
            ),
            DeltaField::Reasoning => self.upsert(
                id,
                || Entry::Reasoning {
                    id: owned,
                    text: String::new(),
                },
                |entry| {
                    if let Entry::Reasoning { text, .. } = entry {
                        text.push_str(&shown);
                    }
                },
            ),
            _ => {}
        }
    }

    /// A part as it now is: its whole text replaces what streamed.
    pub fn part(&mut self, part: &Part, depth: u8) {
        match part {
            Part::Text {
                id,
                text,
                synthetic: false,
                ..
            } => {
                let whole = terminal_safe(text);
                self.streams.remove(id);
                let owned = id.clone();
                self.upsert(
                    id,
                    || Entry::Assistant {
                        id: owned,
                        text: String::new(),
                        depth,
                    },
                    |entry| {
                        if let Entry::Assistant { text, .. } = entry {
                            *text = whole;
                        }
                    },
                );
            }
            Part::Reasoning { id, text, .. } if !text.trim().is_empty() => {
                let whole = terminal_safe(text);
                let owned = id.clone();
                self.upsert(
                    id,
                    || Entry::Reasoning {
                        id: owned,
                        text: String::new(),
                    },
                    |entry| {
                        if let Entry::Reasoning { text, .. } = entry {
                            *text = whole;
                        }
                    },
                );
            }
            Part::Tool(tool) => {
                let updated = tool_entry(tool, depth);
                let made = updated.clone();
                self.upsert(
                    &tool.id,
                    || Entry::Tool(made),
                    |entry| *entry = Entry::Tool(updated),
                );
            }
            _ => {}
        }
    }

    /// Takes in one event of a server's turn.
    pub fn remote(&mut self, event: &RemoteEvent) {
        match event {
            RemoteEvent::TextDelta { part_id, delta } => {
                self.delta(part_id, DeltaField::Text, delta, 0)
            }
            RemoteEvent::ReasoningDelta { part_id, delta } => {
                self.delta(part_id, DeltaField::Reasoning, delta, 0);
            }
            RemoteEvent::Tool(call) => {
                let updated = remote_tool_entry(call);
                let made = updated.clone();
                self.upsert(
                    &call.part_id,
                    || Entry::Tool(made),
                    |entry| *entry = Entry::Tool(updated),
                );
            }
            RemoteEvent::Retry { attempt, message } => {
                self.note(
                    NoteKind::Info,
                    &format!("retrying (attempt {attempt}): {message}"),
                );
            }
            RemoteEvent::Error { message, .. } => {
                self.note(NoteKind::Error, &format!("error: {message}"))
            }
            _ => {}
        }
    }

    /// The transcript of a server's stored `messages`, up to `until` (its
    /// revert point, left out with everything after it).
    pub fn load_remote(&mut self, messages: &[RemoteMessage], until: Option<&str>) {
        for message in messages {
            if Some(message.id.as_str()) == until {
                break;
            }
            for part in &message.parts {
                match (message.role.as_str(), part) {
                    ("user", RemotePart::Text { text, .. }) => self.user(text),
                    (_, RemotePart::Text { id, text }) => {
                        self.push(Entry::Assistant {
                            id: id.clone(),
                            text: terminal_safe(text),
                            depth: 0,
                        });
                    }
                    (_, RemotePart::Reasoning { id, text }) if !text.trim().is_empty() => {
                        self.push(Entry::Reasoning {
                            id: id.clone(),
                            text: terminal_safe(text),
                        });
                    }
                    (_, RemotePart::Tool(call)) => self.push(Entry::Tool(remote_tool_entry(call))),
                    _ => {}
                }
            }
        }
    }

    /// The transcript of stored `messages` (a resumed session, or what is
    /// left after `/undo`), up to `until` (the message a revert points
    /// at, which is left out with everything after it).
    pub fn load(&mut self, messages: &[Message], until: Option<&str>) {
        for message in messages {
            if Some(message.id.as_str()) == until {
                break;
            }
            let depth = u8::from(message.session_id != self.root);
            for part in &message.parts {
                match (message.role, part) {
                    (
                        Role::User,
                        Part::Text {
                            text,
                            synthetic: false,
                            ..
                        },
                    ) => self.user(text),
                    (Role::User, _) => {}
                    (_, part) => self.part(part, depth),
                }
            }
        }
    }
}

/// The entry a server's tool call is shown as (all its text made safe).
fn remote_tool_entry(call: &RemoteToolCall) -> ToolEntry {
    let status = match call.status.as_str() {
        "running" => ToolStatus::Running,
        "completed" => ToolStatus::Done,
        "error" => ToolStatus::Failed,
        _ => ToolStatus::Pending,
    };
    let output = call
        .error
        .as_deref()
        .or(call.output.as_deref())
        .unwrap_or("");
    ToolEntry {
        id: call.part_id.clone(),
        tool: terminal_safe(&call.tool),
        summary: terminal_safe(&one_line(&input_summary(&call.input), 200)),
        status,
        output: terminal_safe(output.trim_end()),
        depth: 0,
    }
}

/// The entry a tool part is shown as (all its text made safe).
fn tool_entry(tool: &ToolPart, depth: u8) -> ToolEntry {
    let (status, input, output) = match &tool.state {
        ToolState::Pending { input, .. } => (ToolStatus::Pending, input, String::new()),
        ToolState::Running { input, .. } => (ToolStatus::Running, input, String::new()),
        ToolState::Completed {
            input,
            output,
            metadata,
            ..
        } => {
            // An edit shows its diff rather than "Edit applied".
            let diff = metadata.get("diff").and_then(|d| d.as_str());
            let shown = diff.filter(|d| !d.trim().is_empty()).unwrap_or(output);
            (ToolStatus::Done, input, shown.to_string())
        }
        ToolState::Error { input, error, .. } => (ToolStatus::Failed, input, error.clone()),
        _ => (ToolStatus::Pending, &serde_json::Value::Null, String::new()),
    };
    ToolEntry {
        id: tool.id.clone(),
        tool: terminal_safe(&tool.tool),
        summary: terminal_safe(&one_line(&input_summary(input), 200)),
        status,
        output: terminal_safe(output.trim_end()),
        depth,
    }
}
