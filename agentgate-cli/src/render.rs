//! Printing a turn's events: the answer's text to one writer as it
//! arrives, tool activity and asks to another (text format), or one JSON
//! object per line (json format).

use std::collections::HashMap;
use std::io::Write;

use agentgate_core::{
    DeltaField, Event, ModelCost, Part, PromptError, StopReason, ToolPart, ToolState, TurnEvent,
    TurnResult, Usage,
};
use serde_json::{Value, json};

use crate::terminal_text::{StreamText, json_safe, terminal_safe};

/// How `agent run` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    /// The answer on stdout, activity on stderr.
    #[default]
    Text,
    /// One JSON event per line on stdout.
    Json,
}

/// Prints the events of one session's turns.
pub struct Renderer<O: Write, E: Write> {
    out: O,
    err: E,
    format: Format,
    root: String,
    at_line_start: bool,
    tools: HashMap<String, &'static str>,
    /// Print a final line with the turn's steps, tokens and cost.
    summary: bool,
    /// The model's prices, for that line.
    cost: Option<ModelCost>,
    /// Show command output and edit diffs under finished calls.
    verbose: bool,
    /// The root session's error messages already printed, so the turn's
    /// last line does not print the same error a second time.
    shown_errors: Vec<String>,
    /// The renderer of the answer's streamed text.
    stream: StreamText,
    /// Draw asks in their frame (stderr is a terminal).
    styled: bool,
}

impl<O: Write, E: Write> std::fmt::Debug for Renderer<O, E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Renderer")
            .field("root", &self.root)
            .finish_non_exhaustive()
    }
}

/// A one-line summary of a tool call's input: the command, the path, the
/// pattern, else the JSON.
pub fn input_summary(input: &Value) -> String {
    for key in [
        "command",
        "filePath",
        "path",
        "pattern",
        "url",
        "description",
    ] {
        if let Some(text) = input.get(key).and_then(Value::as_str) {
            return one_line(text, 120);
        }
    }
    match input {
        Value::Object(map) if map.is_empty() => String::new(),
        other => one_line(&other.to_string(), 120),
    }
}

/// The progress line of a scheduled retry:
/// `retrying in 4 s (attempt 3 of 9): provider error (HTTP 500): …`.
pub fn retry_line(
    prefix: &str,
    retry: u32,
    delay_ms: u64,
    max_attempts: Option<u32>,
    error: &str,
) -> String {
    let wait = if delay_ms.is_multiple_of(1000) {
        format!("{} s", delay_ms / 1000)
    } else {
        format!("{:.1} s", delay_ms as f64 / 1000.0)
    };
    let attempt = retry + 1;
    let of = max_attempts
        .map(|max| format!(" of {max}"))
        .unwrap_or_default();
    format!(
        "{prefix}retrying in {wait} (attempt {attempt}{of}): {}",
        one_line(error, 160)
    )
}

/// The first non-blank line of `text`, cut to `max` characters.
pub fn one_line(text: &str, max: usize) -> String {
    let line = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    if line.chars().count() > max {
        let cut: String = line.chars().take(max).collect();
        format!("{cut}…")
    } else {
        line.to_string()
    }
}

/// The exit status for a turn: 0 when it was done, 130 when cancelled, 1
/// otherwise (an error, a rejection, a limit).
pub fn exit_status(result: &Result<TurnResult, PromptError>) -> u8 {
    match result {
        Ok(turn) => match &turn.stop {
            StopReason::Done { .. } => 0,
            StopReason::Cancelled => 130,
            _ => 1,
        },
        Err(_) => 1,
    }
}

/// Why a turn did not finish, for a person.
pub fn stop_message(result: &Result<TurnResult, PromptError>) -> Option<String> {
    match result {
        Ok(turn) => match &turn.stop {
            StopReason::Done { .. } => None,
            StopReason::Rejected => Some("the turn stopped: a permission was rejected".into()),
            StopReason::Cancelled => Some("the turn was cancelled".into()),
            StopReason::StepLimit => {
                Some("the turn stopped: the agent's step limit was reached".into())
            }
            StopReason::ContextOverflow => {
                Some("the turn stopped: the context window is full".into())
            }
            StopReason::ContentFilter => {
                Some("the turn stopped: the provider's content filter".into())
            }
            StopReason::Error { error } => Some(format!("the turn failed: {}", error.message)),
            _ => Some("the turn stopped".into()),
        },
        Err(error) => Some(format!("the turn could not run: {error}")),
    }
}

fn stop_name(stop: &StopReason) -> &'static str {
    match stop {
        StopReason::Done { .. } => "done",
        StopReason::Rejected => "rejected",
        StopReason::Cancelled => "cancelled",
        StopReason::StepLimit => "step_limit",
        StopReason::ContextOverflow => "context_overflow",
        StopReason::ContentFilter => "content_filter",
        StopReason::Error { .. } => "error",
        _ => "other",
    }
}

impl<O: Write, E: Write> Renderer<O, E> {
    /// A renderer for the turns of session `root`.
    pub fn new(out: O, err: E, format: Format, root: impl Into<String>) -> Self {
        Renderer {
            out,
            err,
            format,
            root: root.into(),
            at_line_start: true,
            tools: HashMap::new(),
            summary: false,
            cost: None,
            verbose: false,
            shown_errors: Vec::new(),
            stream: StreamText::default(),
            styled: false,
        }
    }

    /// With `true` (stderr is a terminal), asks are drawn in the frame of
    /// [`ask_frame`](crate::ask_frame), which the model's text cannot draw.
    pub fn styled(mut self, styled: bool) -> Self {
        self.styled = styled;
        self
    }

    /// With `true`, a finished call also shows what it did: a command's
    /// output, an edit's diff (the last [`VERBOSE_LINES`] lines of each,
    /// indented), as `opencode run` does.
    pub fn verbose(mut self, verbose: bool) -> Self {
        self.verbose = verbose;
        self
    }

    /// Ends each turn with a line of its steps, tokens and (with `cost`,
    /// the model's configured prices) what it cost; in JSON, `cost` joins
    /// the `turn.finished` object.
    pub fn with_summary(mut self, cost: Option<ModelCost>) -> Self {
        self.summary = true;
        self.cost = cost;
        self
    }

    /// Writes a line of activity to the error writer (after ending the
    /// answer's current line, so the two do not run together), made
    /// terminal-safe.
    pub fn note(&mut self, line: &str) {
        self.end_line();
        // Every activity line may carry the model's or the project's text
        // (a command, a path, an error): none of it may redraw the screen.
        let _ = writeln!(self.err, "{}", terminal_safe(line));
        let _ = self.err.flush();
    }

    /// Says the turn has waited `seconds` for `wait`'s model: a
    /// line on the error writer in text, a `model.waiting` event in JSON
    /// (whose stdout is events only, and whose stderr stays quiet).
    pub fn waiting(&mut self, wait: &crate::model_wait::ModelWait, seconds: u64) {
        match self.format {
            Format::Text => self.note(&format!("agent: {}", wait.line(seconds))),
            Format::Json => {
                let event = json!({
                    "type": "model.waiting",
                    "session_id": self.root,
                    "model": wait.model(),
                    "seconds": seconds,
                });
                let _ = writeln!(self.out, "{}", json_safe(&event.to_string()));
                let _ = self.out.flush();
            }
        }
    }

    /// Shows an ask (the text of
    /// [`describe_ask`](crate::chat_cli::describe_ask)) on a line of its
    /// own, in its frame when [`styled`](Self::styled).
    pub fn ask(&mut self, ask: &str) {
        self.end_line();
        let _ = writeln!(self.err, "{}", crate::ask_frame::framed(ask, self.styled));
        let _ = self.err.flush();
    }

    /// Ends the answer's current line (what its stream still held, then a
    /// newline), so that what follows starts a line of its own.
    fn end_line(&mut self) {
        let held = self.stream.finish();
        if !held.is_empty() {
            let _ = self.out.write_all(held.as_bytes());
            self.at_line_start = false;
        }
        if !self.at_line_start {
            let _ = writeln!(self.out);
            let _ = self.out.flush();
            self.at_line_start = true;
        }
    }

    /// Prints one item of the turn's stream.
    pub fn event(&mut self, item: &TurnEvent) {
        match self.format {
            Format::Json => self.json(item),
            Format::Text => match item {
                TurnEvent::Event(event) => self.text(event),
                TurnEvent::Finished(result) => {
                    self.end_line();
                    let _ = self.out.flush();
                    let message = match result {
                        Ok(TurnResult {
                            stop: StopReason::Error { error },
                            ..
                        }) if self.shown_errors.contains(&error.message) => {
                            Some("the turn failed (the error above)".to_string())
                        }
                        _ => stop_message(result),
                    };
                    self.shown_errors.clear();
                    if let Some(message) = message {
                        self.note(&format!("agent: {message}"));
                    }
                    if let (true, Ok(turn)) = (self.summary, result) {
                        let line = summary_line(turn.steps, &turn.usage, self.cost.as_ref());
                        self.note(&line);
                    }
                }
                _ => {}
            },
        }
    }

    fn json(&mut self, item: &TurnEvent) {
        let value = match item {
            TurnEvent::Event(event) => serde_json::to_value(event).unwrap_or(Value::Null),
            TurnEvent::Finished(Ok(turn)) => json!({
                "type": "turn.finished",
                "session_id": self.root,
                "stop": stop_name(&turn.stop),
                "error": match &turn.stop { StopReason::Error { error } => Some(error.message.clone()), _ => None },
                "text": turn.text(),
                "steps": turn.steps,
                "usage": turn.usage,
                "cost": self.cost.filter(|_| reported_tokens(&turn.usage)).map(|cost| cost.of(&turn.usage)),
            }),
            TurnEvent::Finished(Err(error)) => json!({
                "type": "turn.finished",
                "session_id": self.root,
                "stop": "error",
                "error": error.to_string(),
            }),
            _ => return,
        };
        // Text inside the JSON is the model's: no control reaches the
        // terminal raw even when the lines are not piped.
        let _ = writeln!(self.out, "{}", json_safe(&value.to_string()));
        let _ = self.out.flush();
    }

    fn text(&mut self, event: &Event) {
        let sub = if event.session_id() == self.root {
            ""
        } else {
            "  [sub-agent] "
        };
        match event {
            Event::PartDelta {
                field: DeltaField::Text,
                delta,
                ..
            } if sub.is_empty() => {
                // The model's text, piece by piece, through the one
                // renderer (which carries a split line end across pieces).
                let shown = self.stream.push(delta);
                let _ = self.out.write_all(shown.as_bytes());
                let _ = self.out.flush();
                if !shown.is_empty() {
                    self.at_line_start = shown.ends_with('\n');
                }
            }
            Event::PartUpdated {
                part: Part::Tool(tool),
                ..
            } => self.tool_update(sub, tool),
            Event::RetryScheduled {
                attempt,
                message,
                delay_ms,
                max_attempts,
                error,
                ..
            } => {
                self.note(&retry_line(
                    sub,
                    *attempt,
                    *delay_ms,
                    *max_attempts,
                    error.as_deref().unwrap_or(message),
                ));
            }
            Event::Error { error, .. } => {
                self.note(&format!("{sub}error: {}", error.message));
                if sub.is_empty() {
                    self.shown_errors.push(error.message.clone());
                }
            }
            Event::HookFailed {
                hook, event, error, ..
            } => {
                self.note(&format!(
                    "{sub}agent: {event} hook `{}` failed: {}",
                    one_line(hook, 80),
                    one_line(error, 240)
                ));
            }
            _ => {}
        }
    }

    /// A tool call changed state: one note when it starts, its summary
    /// (and, verbose, its details) when it completes, its error when it
    /// fails; nothing when its state is the one already shown.
    fn tool_update(&mut self, sub: &str, tool: &ToolPart) {
        let status = tool.state.status();
        if self.tools.get(&tool.id) == Some(&status) {
            return;
        }
        self.tools.insert(tool.id.clone(), status);
        match &tool.state {
            ToolState::Running { input, .. } => {
                self.note(&format!("{sub}→ {} {}", tool.tool, input_summary(input)));
            }
            ToolState::Completed {
                title,
                metadata,
                output,
                ..
            } => {
                for line in completed_lines(sub, &tool.tool, title, metadata) {
                    self.note(&line);
                }
                if self.verbose {
                    for line in detail_lines(sub, &tool.tool, output, metadata) {
                        self.note(&line);
                    }
                }
            }
            ToolState::Error { error, .. } => {
                self.note(&format!("{sub}  ✗ {}: {}", tool.tool, one_line(error, 160)));
            }
            _ => {}
        }
    }
}

/// The last line of a turn: `agent: 3 steps · 1200 tokens in, 80 out,
/// 900 cached · $0.0042` (tokens left out when the model reported none,
/// the cost when no price is configured).
fn summary_line(steps: u32, usage: &Usage, cost: Option<&ModelCost>) -> String {
    let dollars = cost
        .filter(|_| reported_tokens(usage))
        .map(|cost| cost.of(usage));
    usage_line(steps, usage, dollars)
}

/// The summary line with the cost already worked out (`agent attach` gets
/// it from the server): `None` prints none.
pub fn usage_line(steps: u32, usage: &Usage, dollars: Option<f64>) -> String {
    let mut line = format!("agent: {steps} step{}", if steps == 1 { "" } else { "s" });
    if usage.context_tokens() > 0 {
        line.push_str(&format!(
            " · {} tokens in, {} out",
            usage.input, usage.output
        ));
        let cached = usage.cache_read.saturating_add(usage.cache_write);
        if cached > 0 {
            line.push_str(&format!(", {cached} cached"));
        }
    }
    if let Some(dollars) = dollars {
        line.push_str(&format!(" · ${dollars:.4}"));
    }
    line
}

/// Whether the model reported any tokens: a turn that got no answer (the
/// request failed, or was cancelled before the first byte) has no cost to
/// show, not a cost of `$0.0000`.
fn reported_tokens(usage: &Usage) -> bool {
    usage.context_tokens() > 0 || usage.output > 0
}

/// How many lines of a call's output or diff `--verbose` shows.
pub const VERBOSE_LINES: usize = 40;

/// What `--verbose` adds under a finished call: the diff of an edit
/// (edit, write, apply_patch: their `diff` metadata), else the output of
/// a command; its last [`VERBOSE_LINES`] lines, each cut to 240
/// characters and made terminal-safe, indented, with a line saying how
/// many were left out.
fn detail_lines(sub: &str, tool: &str, output: &str, metadata: &Value) -> Vec<String> {
    let text = match metadata.get("diff").and_then(Value::as_str) {
        Some(diff) if !diff.is_empty() => diff,
        _ if tool == "bash" => output,
        _ => return Vec::new(),
    };
    let all: Vec<&str> = text.lines().collect();
    let skipped = all.len().saturating_sub(VERBOSE_LINES);
    let mut lines = Vec::with_capacity(VERBOSE_LINES + 1);
    if skipped > 0 {
        lines.push(format!("{sub}    … {skipped} earlier lines"));
    }
    for line in &all[skipped..] {
        lines.push(format!("{sub}    │ {}", shown(line, 240)));
    }
    lines
}

/// `line` as the terminal may show it ([`terminal_safe`]),
/// cut to `max` characters.
fn shown(line: &str, max: usize) -> String {
    let mut out = terminal_safe(&line.chars().take(max).collect::<String>());
    if line.chars().count() > max {
        out.push('…');
    }
    out
}

/// The lines a finished call prints: `✓ tool title`, or for a command
/// that failed `✗ bash title (exit N)`, then one line per thing the
/// sandbox blocked (from the bash tool's metadata).
fn completed_lines(sub: &str, tool: &str, title: &str, metadata: &Value) -> Vec<String> {
    let title = one_line(title, 100);
    let failed = match metadata.get("exit") {
        Some(Value::Number(code)) if code.as_i64() != Some(0) => Some(format!("exit {code}")),
        Some(Value::Null) => Some("killed: timed out or by a signal".to_string()),
        _ => None,
    };
    let mut lines = vec![match failed {
        Some(why) => format!("{sub}  ✗ {tool} {title} ({why})"),
        None => format!("{sub}  ✓ {tool} {title}"),
    }];
    let denials = metadata
        .pointer("/sandbox/denials")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for denial in denials {
        let path = denial.get("path").and_then(Value::as_str).unwrap_or("");
        let what = match denial.get("kind").and_then(Value::as_str) {
            Some("write") => format!("a write outside the workspace: {path}"),
            Some("read") => format!("a read of a protected path: {path}"),
            Some("network") => "network access (the network is off for commands)".to_string(),
            _ => continue,
        };
        lines.push(format!("{sub}    the sandbox blocked {what}"));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_counts_steps_tokens_and_cost() {
        let mut usage = Usage::default();
        assert_eq!(summary_line(1, &usage, None), "agent: 1 step");
        usage.input = 1_000_000;
        usage.output = 2000;
        assert_eq!(
            summary_line(2, &usage, None),
            "agent: 2 steps · 1000000 tokens in, 2000 out"
        );
        usage.cache_read = 500;
        let cost = ModelCost::new(3.0, 15.0);
        assert_eq!(
            summary_line(2, &usage, Some(&cost)),
            "agent: 2 steps · 1000000 tokens in, 2000 out, 500 cached · $3.0300"
        );
    }

    #[test]
    fn a_turn_without_tokens_prints_no_cost() {
        let cost = ModelCost::new(3.0, 15.0);
        assert_eq!(
            summary_line(1, &Usage::default(), Some(&cost)),
            "agent: 1 step"
        );
    }

    #[test]
    fn verbose_shows_the_last_lines_of_a_diff_or_a_commands_output_as_text() {
        let diff = json!({"diff": "--- a\n+++ a\n@@ -1 +1 @@\n-old\n+new\n  kept"});
        assert_eq!(
            detail_lines("", "edit", "Edit applied.", &diff),
            [
                "    │ --- a",
                "    │ +++ a",
                "    │ @@ -1 +1 @@",
                "    │ -old",
                "    │ +new",
                "    │   kept"
            ]
        );
        let many: String = (1..=45).map(|n| format!("line {n}\n")).collect();
        let lines = detail_lines("", "bash", &many, &json!({"exit": 0}));
        assert_eq!(lines.len(), VERBOSE_LINES + 1);
        assert_eq!(lines[0], "    … 5 earlier lines");
        assert_eq!(lines[1], "    │ line 6");
        // An escape sequence in a command's output is shown, not obeyed.
        let hostile = detail_lines("", "bash", "ok\u{1b}[2J\u{1b}]0;pwned\u{7}", &json!({}));
        assert_eq!(hostile, ["    │ ok\\u{1b}[2J\\u{1b}]0;pwned\\u{7}"]);
        // Tools without a diff or command output add nothing.
        assert!(detail_lines("", "read", "contents", &json!({})).is_empty());
    }

    #[test]
    fn a_failed_command_shows_its_exit_code_and_what_the_sandbox_blocked() {
        let ok = json!({"exit": 0, "sandbox": {"denials": []}});
        assert_eq!(completed_lines("", "bash", "ls", &ok), ["  ✓ bash ls"]);
        assert_eq!(
            completed_lines("", "read", "a.rs", &json!({})),
            ["  ✓ read a.rs"]
        );
        let failed = json!({"exit": 2, "sandbox": {"denials": [
            {"kind": "write", "path": "/etc/x"},
            {"kind": "network", "path": null},
        ]}});
        assert_eq!(
            completed_lines("", "bash", "touch /etc/x", &failed),
            [
                "  ✗ bash touch /etc/x (exit 2)",
                "    the sandbox blocked a write outside the workspace: /etc/x",
                "    the sandbox blocked network access (the network is off for commands)",
            ]
        );
        let killed = json!({"exit": null});
        assert_eq!(
            completed_lines("[sub] ", "bash", "sleep 99", &killed),
            ["[sub]   ✗ bash sleep 99 (killed: timed out or by a signal)"]
        );
    }

    #[test]
    fn a_retry_says_when_which_attempt_and_why() {
        assert_eq!(
            retry_line(
                "",
                1,
                4000,
                Some(9),
                "provider error (HTTP 500): boom\nmore"
            ),
            "retrying in 4 s (attempt 2 of 9): provider error (HTTP 500): boom"
        );
        assert_eq!(
            retry_line("[sub] ", 3, 1500, None, "cut"),
            "[sub] retrying in 1.5 s (attempt 4): cut"
        );
    }
}
