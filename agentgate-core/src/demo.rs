//! The offline demo model (cargo feature `demo`): what the `agent` CLI uses
//! when no provider is configured and no API key is in the environment, and
//! what an embedding program can run to try the engine, its tools and its
//! permission gate with no network and no keys.
//!
//! It is not a language model and says so. It drives the real agent path —
//! the loop, the built-in tools and the permission gate — with a fixed plan
//! that reacts to what the tools answered:
//!
//! 1. `list` the project;
//! 2. `read` a file it found (README first, then a manifest, then any file);
//! 3. `bash` `git status`, which goes to the permission gate: the `agent`
//!    CLI's demo session (a session rule `bash * ask`) asks, so it is
//!    rejected without `--auto`, which stops the turn, and run with it;
//! 4. a short summary of what the three calls returned, including a
//!    rejection or an error.
//!
//! Text is streamed word by word, so a UI shows it arriving like a real
//! model's answer.
//!
//! Without tools in the request it answers at once:
//!
//! ```
//! use agentgate_core::demo::DemoModel;
//! use agentgate_core::{CancellationToken, LanguageModel, ModelMessage, ModelRequest, StreamEvent, StreamExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), agentgate_core::ModelError> {
//! let model = DemoModel::new();
//! assert_eq!(model.info().provider, "demo");
//! let request = ModelRequest::new(vec![ModelMessage::user("hello")]);
//! let mut stream = model.stream(request, CancellationToken::new()).await?;
//! let mut text = String::new();
//! while let Some(event) = stream.next().await {
//!     if let StreamEvent::TextDelta { delta, .. } = event? {
//!         text.push_str(&delta);
//!     }
//! }
//! assert!(text.contains("no command was run"), "{text}");
//! # Ok(())
//! # }
//! ```
//!
//! With the built-in tools it drives a whole turn: the embedding program
//! `examples/examples/minimal_agent.rs` runs it through `agentgate::CodingAgent` with a
//! custom approver.

use std::path::Path;
use std::time::Duration;

use crate::{
    ContentPart, EventStream, FinishReason, LanguageModel, ModelError, ModelInfo, ModelMessage,
    ModelRequest, StreamEvent, ToolCall, Usage,
};
use futures::StreamExt;
use tokio_util::sync::CancellationToken;

/// The provider name the demo model reports (`demo/offline`).
pub const DEMO_PROVIDER: &str = "demo";
/// The model id the demo model reports.
pub const DEMO_MODEL: &str = "offline";

/// Files the demo prefers to read, in order.
const PREFERRED_FILES: &[&str] = &[
    "README.md",
    "README",
    "readme.md",
    "Cargo.toml",
    "package.json",
    "pyproject.toml",
    "go.mod",
];

/// A scripted stand-in for a language model that exercises the tools and
/// the permission gate without a network. See the module docs.
#[derive(Debug, Clone)]
pub struct DemoModel {
    info: ModelInfo,
    word_delay: Duration,
}

impl Default for DemoModel {
    fn default() -> Self {
        Self::new()
    }
}

impl DemoModel {
    /// A demo model that streams its words without pausing.
    pub fn new() -> Self {
        let mut info = ModelInfo::new(DEMO_PROVIDER, DEMO_MODEL);
        info.limits.context = 200_000;
        info.limits.output = 8_000;
        DemoModel {
            info,
            word_delay: Duration::ZERO,
        }
    }

    /// Pause this long between streamed words, so a terminal shows the
    /// answer arriving (the CLI uses a few milliseconds).
    pub fn with_word_delay(mut self, delay: Duration) -> Self {
        self.word_delay = delay;
        self
    }
}

/// What the tools answered so far in this turn.
#[derive(Debug, Default)]
struct Seen {
    list: Option<ToolAnswer>,
    read: Option<(String, ToolAnswer)>,
    bash: Option<ToolAnswer>,
    calls: usize,
}

#[derive(Debug, Clone)]
struct ToolAnswer {
    output: String,
    is_error: bool,
}

/// The demo's next move.
#[derive(Debug, PartialEq)]
enum Move {
    Call {
        intro: String,
        name: &'static str,
        input: serde_json::Value,
    },
    Answer(String),
}

fn seen<M: std::borrow::Borrow<ModelMessage>>(messages: &[M]) -> Seen {
    // Only the current turn counts: start after the last user message that
    // carries text (tool results travel in their own messages).
    let start = messages
        .iter()
        .map(M::borrow)
        .rposition(|m| {
            m.content
                .iter()
                .any(|p| matches!(p, ContentPart::Text { .. }))
                && matches!(m.role, crate::ModelRole::User)
        })
        .unwrap_or(0);
    let mut seen = Seen::default();
    let mut read_paths = std::collections::HashMap::new();
    for message in messages[start..].iter().map(M::borrow) {
        for part in &message.content {
            match part {
                ContentPart::ToolCall {
                    id, name, input, ..
                } => {
                    seen.calls += 1;
                    if name == "read" {
                        let path = input
                            .get("filePath")
                            .and_then(|p| p.as_str())
                            .unwrap_or_default()
                            .to_string();
                        read_paths.insert(id.clone(), path);
                    }
                }
                ContentPart::ToolResult {
                    call_id,
                    name,
                    output,
                    is_error,
                } => {
                    let answer = ToolAnswer {
                        output: output.clone(),
                        is_error: *is_error,
                    };
                    match name.as_str() {
                        "list" => seen.list = Some(answer),
                        "read" => {
                            let path = read_paths.get(call_id).cloned().unwrap_or_default();
                            seen.read = Some((path, answer));
                        }
                        "bash" => seen.bash = Some(answer),
                        _ => {}
                    }
                }
                _ => {}
            }
        }
    }
    seen
}

/// The root folder and the files of a `list` output (`/root/` then indented
/// entries, folders ending in `/`).
fn listed_files(listing: &str) -> (Option<String>, Vec<String>) {
    let mut lines = listing.lines();
    let root = lines
        .next()
        .map(|l| l.trim().trim_end_matches('/').to_string())
        .filter(|r| !r.is_empty());
    let files = lines
        .filter(|l| l.starts_with("  ") && !l.starts_with("    "))
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.ends_with('/'))
        .map(str::to_string)
        .collect();
    (root, files)
}

fn choose_file(files: &[String]) -> Option<&String> {
    PREFERRED_FILES
        .iter()
        .find_map(|want| files.iter().find(|f| f.as_str() == *want))
        .or_else(|| files.first())
}

fn first_lines(text: &str, n: usize) -> String {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .take(n)
        .map(|l| format!("    {}", l.trim_end()))
        .collect::<Vec<_>>()
        .join("\n")
}

fn next_move(seen: &Seen, tools: &[String]) -> Move {
    let has = |name: &str| tools.iter().any(|t| t == name);
    // A guard against loops: the plan never needs more than three calls.
    if seen.calls >= 3 {
        return Move::Answer(summary(seen));
    }
    if seen.list.is_none() && has("list") {
        return Move::Call {
            intro: "I am the offline demo model: no provider is configured, so a fixed \
                    plan drives the real tools and permission gate. First, the project's files."
                .into(),
            name: "list",
            input: serde_json::json!({}),
        };
    }
    if seen.read.is_none() && has("read") {
        let (root, files) = seen
            .list
            .as_ref()
            .filter(|l| !l.is_error)
            .map(|l| listed_files(&l.output))
            .unwrap_or_default();
        if let Some(file) = choose_file(&files) {
            let path = match root {
                Some(root) => Path::new(&root).join(file).display().to_string(),
                None => file.clone(),
            };
            return Move::Call {
                intro: format!("Now I read {file}."),
                name: "read",
                input: serde_json::json!({ "filePath": path, "limit": 40 }),
            };
        }
    }
    if seen.bash.is_none() && has("bash") {
        return Move::Call {
            intro: "Last, `git status`. Running a command goes through the permission gate.".into(),
            name: "bash",
            input: serde_json::json!({
                "command": "git status",
                "description": "Show the working tree status",
            }),
        };
    }
    Move::Answer(summary(seen))
}

fn summary(seen: &Seen) -> String {
    let mut out = String::from("Here is what I saw.\n\n");
    match &seen.list {
        Some(l) if !l.is_error => {
            let (root, files) = listed_files(&l.output);
            out.push_str(&format!(
                "- `list`: {} at the top of {}.\n",
                plural(files.len(), "file"),
                root.unwrap_or_else(|| "the project".into())
            ));
        }
        Some(l) => out.push_str(&format!("- `list` failed: {}\n", one_line(&l.output))),
        None => out.push_str("- `list` was not available to this agent.\n"),
    }
    match &seen.read {
        Some((path, r)) if !r.is_error => {
            let body: String = r
                .output
                .lines()
                .filter_map(numbered_line)
                .collect::<Vec<_>>()
                .join("\n");
            out.push_str(&format!(
                "- `read` {path}; it begins:\n{}\n",
                first_lines(&body, 3)
            ));
        }
        Some((path, r)) => out.push_str(&format!(
            "- `read` {path} failed: {}\n",
            one_line(&r.output)
        )),
        None => out.push_str("- nothing was read.\n"),
    }
    match &seen.bash {
        Some(b) if !b.is_error => out.push_str(&format!(
            "- `git status` ran (you approved it):\n{}\n",
            first_lines(&b.output, 4)
        )),
        Some(b) => out.push_str(&format!(
            "- `git status` did not run: {}\n",
            one_line(&b.output)
        )),
        None => out.push_str("- no command was run.\n"),
    }
    out.push_str(
        "\nThat was the real loop, tools and gate with a scripted model. Set \
         ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY, or configure a provider, \
         to talk to a real one.",
    );
    out
}

/// The text of a `read` output line (`12: text`), or `None` for the
/// surrounding tags and footer.
fn numbered_line(line: &str) -> Option<&str> {
    let (number, text) = line.split_once(": ")?;
    (!number.is_empty() && number.bytes().all(|b| b.is_ascii_digit())).then_some(text)
}

fn one_line(text: &str) -> String {
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let mut line = line.trim().to_string();
    if line.len() > 160 {
        let cut = (0..=160)
            .rev()
            .find(|i| line.is_char_boundary(*i))
            .unwrap_or(0);
        line.truncate(cut);
        line.push('…');
    }
    line
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// The stream events of one move: the text word by word, then the call or
/// the end of the turn.
fn events(step: Move, call_number: usize) -> Vec<StreamEvent> {
    let (text, call) = match step {
        Move::Call { intro, name, input } => (intro, Some((name, input))),
        Move::Answer(text) => (text, None),
    };
    let text_id = format!("demo-text-{call_number}");
    let mut out = vec![StreamEvent::TextStart {
        id: text_id.clone(),
    }];
    let mut rest = text.as_str();
    while !rest.is_empty() {
        let end = rest
            .char_indices()
            .skip(1)
            .find(|(_, c)| c.is_whitespace())
            .map(|(i, _)| i)
            .unwrap_or(rest.len());
        out.push(StreamEvent::TextDelta {
            id: text_id.clone(),
            delta: rest[..end].to_string(),
        });
        rest = &rest[end..];
    }
    out.push(StreamEvent::TextEnd {
        id: text_id,
        provider_metadata: None,
    });
    let reason = match call {
        Some((name, input)) => {
            out.push(StreamEvent::ToolCall(ToolCall {
                id: format!("demo-call-{call_number}"),
                name: name.to_string(),
                input,
                provider_metadata: None,
            }));
            FinishReason::ToolCalls
        }
        None => FinishReason::Stop,
    };
    out.push(StreamEvent::Finish {
        reason,
        usage: Usage::default(),
        provider_metadata: None,
    });
    out
}

#[async_trait::async_trait]
impl LanguageModel for DemoModel {
    fn info(&self) -> &ModelInfo {
        &self.info
    }

    async fn stream(
        &self,
        request: ModelRequest,
        cancel: CancellationToken,
    ) -> Result<EventStream, ModelError> {
        let seen = seen(&request.messages);
        let tools: Vec<String> = request.tools.iter().map(|t| t.name.clone()).collect();
        let step = next_move(&seen, &tools);
        let all = events(step, seen.calls + 1);
        let delay = self.word_delay;
        let stream = futures::stream::iter(all).then(move |event| {
            let cancel = cancel.clone();
            async move {
                if !delay.is_zero() && matches!(event, StreamEvent::TextDelta { .. }) {
                    tokio::select! {
                        _ = tokio::time::sleep(delay) => {}
                        _ = cancel.cancelled() => return Err(ModelError::Cancelled),
                    }
                }
                Ok(event)
            }
        });
        Ok(Box::pin(stream))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools() -> Vec<String> {
        ["list", "read", "bash"].map(String::from).to_vec()
    }

    fn result(name: &str, output: &str, is_error: bool) -> ModelMessage {
        ModelMessage {
            role: crate::ModelRole::Tool,
            content: vec![ContentPart::ToolResult {
                call_id: format!("id-{name}"),
                name: name.into(),
                output: output.into(),
                is_error,
            }],
        }
    }

    fn call(name: &str, input: serde_json::Value) -> ModelMessage {
        ModelMessage {
            role: crate::ModelRole::Assistant,
            content: vec![ContentPart::ToolCall {
                id: format!("id-{name}"),
                name: name.into(),
                input,
                provider_metadata: None,
            }],
        }
    }

    #[test]
    fn the_plan_lists_then_reads_the_readme_then_asks_for_git_status() {
        let mut messages = vec![ModelMessage::user("show me")];
        assert!(matches!(
            next_move(&seen(&messages), &tools()),
            Move::Call { name: "list", .. }
        ));
        messages.push(call("list", serde_json::json!({})));
        messages.push(result(
            "list",
            "/p/\n  src/\n    a.rs\n  Cargo.toml\n  README.md\n",
            false,
        ));
        match next_move(&seen(&messages), &tools()) {
            Move::Call {
                name: "read",
                input,
                ..
            } => {
                assert_eq!(input["filePath"], "/p/README.md")
            }
            other => panic!("expected a read, got {other:?}"),
        }
        messages.push(call(
            "read",
            serde_json::json!({"filePath": "/p/README.md"}),
        ));
        messages.push(result(
            "read",
            "<path>/p/README.md</path>\n<type>file</type>\n<content>\n1: # Title\n2: text\n\n(End of file - total 2 lines)\n</content>",
            false,
        ));
        assert!(matches!(
            next_move(&seen(&messages), &tools()),
            Move::Call { name: "bash", .. }
        ));
        messages.push(call("bash", serde_json::json!({"command": "git status"})));
        messages.push(result(
            "bash",
            "The user rejected permission to use this specific tool call.",
            true,
        ));
        match next_move(&seen(&messages), &tools()) {
            Move::Answer(text) => {
                assert!(text.contains("2 files"), "{text}");
                assert!(text.contains("# Title"), "{text}");
                assert!(text.contains("did not run: The user rejected"), "{text}");
            }
            other => panic!("expected the summary, got {other:?}"),
        }
    }

    #[test]
    fn without_tools_the_demo_answers_at_once() {
        let messages = vec![ModelMessage::user("hi")];
        assert!(matches!(next_move(&seen(&messages), &[]), Move::Answer(_)));
    }

    #[test]
    fn words_stream_as_separate_deltas_that_join_to_the_text() {
        let evs = events(Move::Answer("one two  three".into()), 1);
        let deltas: Vec<&str> = evs
            .iter()
            .filter_map(|e| match e {
                StreamEvent::TextDelta { delta, .. } => Some(delta.as_str()),
                _ => None,
            })
            .collect();
        assert!(deltas.len() >= 3);
        assert_eq!(deltas.concat(), "one two  three");
    }
}
