//! `agent attach URL`: one prompt run in a session of an `agent serve`
//! (or `opencode serve`) server, printed as `agent run` prints its turn,
//! with the session's asks answered here — at the terminal (once / always
//! / reject / reject with feedback), allowed once with `--auto`, otherwise
//! rejected with opencode's auto-reject warning.

use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::sync::Arc;

use agentgate::Usage;
use agentgate::permission::{
    AllowAll, Approver, PermissionRequest, RejectAll, Reply, auto_reject_line,
};
use agentgate::remote::{
    RemoteAgent, RemoteEvent, RemoteStop, RemoteStream, RemoteTurn, RemoteUsage,
};
use futures::StreamExt;
use serde_json::{Value, json};

use crate::chat_cli::{answer, describe_ask};
use crate::interrupt::{INTERRUPTED, cancel_on_signals};
use crate::line_reader::LineReader;
use crate::model_wait::{ModelWait, StepSignal};
use crate::render::{Format, input_summary, one_line, usage_line};
use crate::terminal_text::{StreamText, Untrusted, json_safe, terminal_safe};

/// What `agent attach` was given.
#[derive(Debug, Clone)]
pub struct AttachOptions {
    /// The server's URL.
    pub url: String,
    /// The session to continue (default: a new one).
    pub session: Option<String>,
    /// Allow every ask once.
    pub auto: bool,
    /// How to print.
    pub format: Format,
    /// The prompt.
    pub prompt: String,
}

/// How the asks are answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Asks {
    Auto,
    Terminal,
    Reject,
}

/// What the renderer has printed: the asks whose `permission.asked`
/// event it showed, and how many events in all.
#[derive(Debug, Default)]
struct Printed {
    asks: std::collections::HashSet<String>,
    /// The tool calls it showed (a call's text and its start come from the
    /// same source, in order: once the call is shown, so is the text
    /// before it).
    calls: std::collections::HashSet<String>,
    events: u64,
}

/// Where the renderer tells the approver what it printed.
type Shown = tokio::sync::watch::Sender<Printed>;

/// How long the server's stream must be quiet before an ask is drawn: a
/// server may send the model's text just after the ask (its events come
/// from more than one source), and that text belongs above the ask.
const QUIET: std::time::Duration = std::time::Duration::from_millis(150);

/// The longest an ask waits for that.
const CATCH_UP: std::time::Duration = std::time::Duration::from_millis(1500);

/// Waits until the renderer has printed the event of `request` and of its
/// tool call, and the stream has then been quiet for [`QUIET`] (or
/// [`CATCH_UP`] passed).
async fn settled(shown: &Shown, request: &PermissionRequest) {
    let mut printed = shown.subscribe();
    let call = request.tool.as_ref().map(|t| t.call_id.as_str());
    let wait = async {
        let _ = printed
            .wait_for(|p| p.asks.contains(&request.id) && call.is_none_or(|c| p.calls.contains(c)))
            .await;
        loop {
            let before = shown.borrow().events;
            tokio::time::sleep(QUIET).await;
            if shown.borrow().events == before {
                break;
            }
        }
    };
    let _ = tokio::time::timeout(CATCH_UP, wait).await;
}

/// Answers at the terminal, one ask at a time.
struct TerminalApprover {
    reader: LineReader,
    one_at_a_time: tokio::sync::Mutex<()>,
    shown: Shown,
}

#[agentgate::async_trait]
impl Approver for TerminalApprover {
    async fn approve(&self, request: &PermissionRequest) -> Reply {
        let _turn = self.one_at_a_time.lock().await;
        // The ask is drawn after the text the server sent around it.
        settled(&self.shown, request).await;
        // Only at a terminal: the ask in its frame, on a line of its own;
        // it says what each "always" stores, in the page's words.
        eprintln!(
            "\n{}",
            crate::ask_frame::framed(&describe_ask(request), true)
        );
        answer(&self.reader, request).await
    }
}

/// Prints a remote turn's events: the answer on stdout, activity on
/// stderr (text), or one JSON object per line on stdout (json).
struct RemoteRenderer<O: Write, E: Write> {
    out: O,
    err: E,
    format: Format,
    asks: Asks,
    at_line_start: bool,
    tools: HashMap<String, String>,
    /// The renderer of the server's streamed text.
    stream: StreamText,
    /// Where the asks printed so far are told to the approver.
    shown: Option<Shown>,
}

impl<O: Write, E: Write> RemoteRenderer<O, E> {
    fn new(out: O, err: E, format: Format, asks: Asks) -> Self {
        RemoteRenderer {
            out,
            err,
            format,
            asks,
            at_line_start: true,
            tools: HashMap::new(),
            stream: StreamText::default(),
            shown: None,
        }
    }

    /// Ends the answer's current line (with what its stream still held).
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

    /// A line of activity on the error writer: all of it the server's
    /// text or built from it, so terminal-safe.
    fn note(&mut self, line: &str) {
        self.end_line();
        let _ = writeln!(self.err, "{}", terminal_safe(line));
        let _ = self.err.flush();
    }

    /// The server's model has not started answering after `seconds`: a
    /// line on stderr in text, a `model.waiting` event in JSON.
    fn waiting(&mut self, wait: &ModelWait, seconds: u64) {
        match self.format {
            Format::Text => self.note(&format!("agent: {}", wait.line(seconds))),
            Format::Json => self
                .json(json!({"type": "model.waiting", "model": wait.model(), "seconds": seconds})),
        }
    }

    fn json(&mut self, value: Value) {
        let _ = writeln!(self.out, "{}", json_safe(&value.to_string()));
        let _ = self.out.flush();
    }

    fn event(&mut self, event: &RemoteEvent) {
        // opencode's warning, in either format, before the rejection.
        if let (RemoteEvent::Asked(request), Asks::Reject) = (event, self.asks) {
            self.note(&auto_reject_line(request));
        }
        if let Some(shown) = self.shown.clone() {
            match event {
                RemoteEvent::Asked(request) => {
                    self.end_line();
                    shown.send_modify(|p| {
                        p.asks.insert(request.id.clone());
                    });
                }
                RemoteEvent::Tool(call) => shown.send_modify(|p| {
                    p.calls.insert(call.call_id.clone());
                }),
                _ => {}
            }
            shown.send_modify(|p| p.events += 1);
        }
        match self.format {
            Format::Json => {
                if let Some(value) = event_json(event) {
                    self.json(value);
                }
            }
            Format::Text => self.text(event),
        }
    }

    fn text(&mut self, event: &RemoteEvent) {
        match event {
            RemoteEvent::TextDelta { delta, .. } => {
                let shown = self.stream.push(delta);
                let _ = self.out.write_all(shown.as_bytes());
                let _ = self.out.flush();
                if !shown.is_empty() {
                    self.at_line_start = shown.ends_with('\n');
                }
            }
            RemoteEvent::Tool(call) => {
                if self.tools.get(&call.part_id) == Some(&call.status) {
                    return;
                }
                self.tools.insert(call.part_id.clone(), call.status.clone());
                match call.status.as_str() {
                    "running" => {
                        self.note(&format!("→ {} {}", call.tool, input_summary(&call.input)));
                    }
                    "completed" => {
                        let title = one_line(call.title.as_deref().unwrap_or(""), 100);
                        self.note(&format!("  ✓ {} {title}", call.tool));
                    }
                    "error" => {
                        let error = one_line(call.error.as_deref().unwrap_or(""), 160);
                        self.note(&format!("  ✗ {}: {error}", call.tool));
                    }
                    _ => {}
                }
            }
            RemoteEvent::Retry { attempt, message } => {
                self.note(&format!(
                    "retrying (attempt {attempt}): {}",
                    one_line(message, 160)
                ));
            }
            RemoteEvent::Error { message, .. } => {
                self.note(&format!("error: {}", one_line(message, 300)));
            }
            RemoteEvent::Finished(turn) => {
                self.end_line();
                let _ = self.out.flush();
                if let Some(message) = stop_message(turn) {
                    self.note(&format!("agent: {message}"));
                }
                let usage = &turn.usage;
                let dollars = (usage.has_tokens() && usage.cost > 0.0).then_some(usage.cost);
                let line = usage_line(usage.steps, &usage_of(usage), dollars);
                self.note(&line);
            }
            _ => {}
        }
    }
}

/// What a remote event means for the wait on the server's model: a step
/// that began starts it (naming the model), anything the step sends back
/// ends it.
fn follow_wait(wait: &mut ModelWait, event: &RemoteEvent) {
    let signal = match event {
        RemoteEvent::StepStarted { model, .. } => {
            if !model.is_empty() {
                wait.rename(model.clone());
            }
            StepSignal::Requested
        }
        RemoteEvent::Replied { .. } => StepSignal::Other,
        _ => StepSignal::Answered,
    };
    wait.follow(signal);
}

/// The server's counts as the engine's [`Usage`], for the summary line.
fn usage_of(remote: &RemoteUsage) -> Usage {
    Usage {
        input: remote.input,
        output: remote.output,
        reasoning: remote.reasoning,
        cache_read: remote.cache_read,
        cache_write: remote.cache_write,
        ..Usage::default()
    }
}

fn stop_name(stop: RemoteStop) -> &'static str {
    match stop {
        RemoteStop::Done => "done",
        RemoteStop::Rejected => "rejected",
        RemoteStop::Cancelled => "cancelled",
        _ => "error",
    }
}

/// Why a turn did not finish, as `agent run` says it.
fn stop_message(turn: &RemoteTurn) -> Option<String> {
    match turn.stop {
        RemoteStop::Done => None,
        RemoteStop::Rejected => Some("the turn stopped: a permission was rejected".into()),
        RemoteStop::Cancelled => Some("the turn was cancelled".into()),
        _ => Some(format!(
            "the turn failed: {}",
            turn.error
                .as_deref()
                .unwrap_or("the server reported an error")
        )),
    }
}

/// The exit status `agent run` gives the same ending.
fn exit_status(turn: &RemoteTurn) -> u8 {
    match turn.stop {
        RemoteStop::Done => 0,
        RemoteStop::Cancelled => INTERRUPTED,
        _ => 1,
    }
}

fn reply_word(reply: &Reply) -> Value {
    match reply {
        Reply::Always => json!({"reply": "always"}),
        Reply::AlwaysExact => json!({"reply": "always_exact"}),
        Reply::Reject { feedback } => json!({"reply": "reject", "message": feedback}),
        _ => json!({"reply": "once"}),
    }
}

/// One JSON line for `--format json`.
fn event_json(event: &RemoteEvent) -> Option<Value> {
    Some(match event {
        RemoteEvent::TextDelta { part_id, delta } => {
            json!({"type": "text.delta", "part_id": part_id, "delta": delta})
        }
        RemoteEvent::ReasoningDelta { part_id, delta } => {
            json!({"type": "reasoning.delta", "part_id": part_id, "delta": delta})
        }
        RemoteEvent::Tool(call) => json!({
            "type": "tool",
            "part_id": call.part_id,
            "call_id": call.call_id,
            "tool": call.tool,
            "status": call.status,
            "input": call.input,
            "title": call.title,
            "output": call.output,
            "error": call.error,
        }),
        RemoteEvent::Asked(request) => json!({"type": "permission.asked", "request": request}),
        RemoteEvent::Replied { request_id, reply } => {
            json!({"type": "permission.replied", "request_id": request_id, "answer": reply_word(reply)})
        }
        RemoteEvent::Retry { attempt, message } => {
            json!({"type": "retry", "attempt": attempt, "message": message})
        }
        RemoteEvent::Error { name, message } => {
            json!({"type": "error", "name": name, "message": message})
        }
        RemoteEvent::StepStarted { message_id, model } => {
            json!({"type": "step.started", "message_id": message_id, "model": model})
        }
        RemoteEvent::Finished(turn) => json!({
            "type": "turn.finished",
            "session_id": turn.session_id,
            "stop": stop_name(turn.stop),
            "error": turn.error,
            "text": turn.text,
            "message": turn.message,
            "steps": turn.usage.steps,
            "usage": usage_of(&turn.usage),
            "cost": (turn.usage.has_tokens() && turn.usage.cost > 0.0).then_some(turn.usage.cost),
        }),
        _ => return None,
    })
}

/// The approver for `asks`; at the terminal it draws an ask once
/// `renderer` has printed what came before it.
fn approver<O: Write, E: Write>(
    asks: Asks,
    renderer: &mut RemoteRenderer<O, E>,
) -> Result<Arc<dyn Approver>, String> {
    Ok(match asks {
        Asks::Auto => Arc::new(AllowAll),
        Asks::Terminal => {
            let (shown, _) = tokio::sync::watch::channel(Default::default());
            renderer.shown = Some(shown.clone());
            Arc::new(TerminalApprover {
                reader: LineReader::start()?,
                one_at_a_time: tokio::sync::Mutex::new(()),
                shown,
            })
        }
        // The renderer prints the warning at a line start.
        Asks::Reject => Arc::new(RejectAll::new(std::io::sink())),
    })
}

/// Runs `agent attach`; returns the exit status.
pub async fn attach(options: AttachOptions) -> Result<u8, String> {
    let cancel = cancel_on_signals()?;
    let asks = if options.auto {
        Asks::Auto
    } else if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
        Asks::Terminal
    } else {
        Asks::Reject
    };
    let mut renderer =
        RemoteRenderer::new(std::io::stdout(), std::io::stderr(), options.format, asks);
    let approver = approver(asks, &mut renderer)?;
    let started = async {
        let agent = RemoteAgent::builder(&options.url)
            .credentials_from_env()
            .approver(approver)
            .connect()
            .await?;
        let session = match &options.session {
            Some(id) => agent.session(id).await?,
            None => agent.new_session().await?,
        };
        if options.format == Format::Text {
            eprintln!(
                "agent: session {} at {}",
                Untrusted::new(session.id()),
                Untrusted::new(agent.url())
            );
        }
        // `/NAME ARGS` of one of the server's commands runs it there, as
        // `agent chat` runs it; any other text is the prompt (so is a slash
        // line when the server lists no commands it could be).
        let slash = agentgate::slash_command(&options.prompt);
        let listed = match slash {
            Some(_) => agent.commands().await.unwrap_or_default(),
            None => Vec::new(),
        };
        match slash {
            Some((name, arguments)) if listed.iter().any(|c| c == name) => {
                session.command(name, arguments).await
            }
            _ => session.stream(options.prompt.clone()).await,
        }
    };
    let mut stream = tokio::select! {
        biased;
        () = cancel.cancelled() => {
            eprintln!("agent: interrupted before the prompt was sent");
            return Ok(INTERRUPTED);
        }
        started = started => match started {
            Ok(stream) => stream,
            Err(error) => {
                // The server's own words may be in it.
                eprintln!("agent: {}", Untrusted::new(error));
                return Ok(1);
            }
        },
    };
    Ok(follow_turn(&mut stream, &mut renderer, &cancel).await)
}

/// Prints the turn's stream until its end (naming a model that has not
/// started answering, cancelling the turn on the first signal); the exit
/// status.
async fn follow_turn<O: Write, E: Write>(
    stream: &mut RemoteStream,
    renderer: &mut RemoteRenderer<O, E>,
    cancel: &agentgate::CancellationToken,
) -> u8 {
    let mut cancelling = false;
    let mut wait = ModelWait::new("the server's model");
    let mut tick = tokio::time::interval(std::time::Duration::from_millis(250));
    loop {
        let item = tokio::select! {
            () = cancel.cancelled(), if !cancelling => {
                cancelling = true;
                stream.cancel();
                continue;
            }
            _ = tick.tick() => {
                if let Some(seconds) = wait.due() {
                    renderer.waiting(&wait, seconds);
                }
                continue;
            }
            item = stream.next() => item,
        };
        match item {
            Some(Ok(event)) => {
                follow_wait(&mut wait, &event);
                renderer.event(&event);
                if let RemoteEvent::Finished(turn) = &event {
                    return exit_status(turn);
                }
            }
            Some(Err(error)) => {
                renderer.note(&format!("agent: {error}"));
                return 1;
            }
            None => {
                renderer.note("agent: the turn's stream ended without its end");
                return 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn renderer(format: Format, asks: Asks) -> RemoteRenderer<Vec<u8>, Vec<u8>> {
        RemoteRenderer::new(Vec::new(), Vec::new(), format, asks)
    }

    fn request() -> PermissionRequest {
        serde_json::from_value(json!({
            "id": "per_1", "session_id": "ses_1", "permission": "bash",
            "patterns": ["rm -rf build"], "always": [], "metadata": {}
        }))
        .unwrap()
    }

    #[test]
    fn text_goes_to_stdout_and_activity_to_stderr() {
        let mut r = renderer(Format::Text, Asks::Reject);
        r.event(&RemoteEvent::TextDelta {
            part_id: "p".into(),
            delta: "Hello".into(),
        });
        r.event(&RemoteEvent::Asked(request()));
        r.event(&RemoteEvent::Error {
            name: "UnknownError".into(),
            message: "boom\nmore".into(),
        });
        assert_eq!(String::from_utf8(r.out).unwrap(), "Hello\n");
        assert_eq!(
            String::from_utf8(r.err).unwrap(),
            "permission requested: bash (rm -rf build); auto-rejecting\nerror: boom\n"
        );
    }

    #[test]
    fn json_lines_carry_every_event_and_the_warning_stays_on_stderr() {
        let mut r = renderer(Format::Json, Asks::Reject);
        r.event(&RemoteEvent::Asked(request()));
        r.event(&RemoteEvent::Replied {
            request_id: "per_1".into(),
            reply: Reply::correct("no"),
        });
        let out = String::from_utf8(r.out).unwrap();
        let lines: Vec<Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines[0]["type"], "permission.asked");
        assert_eq!(lines[0]["request"]["patterns"], json!(["rm -rf build"]));
        assert_eq!(
            lines[1]["answer"],
            json!({"reply": "reject", "message": "no"})
        );
        assert!(String::from_utf8(r.err).unwrap().contains("auto-rejecting"));
        let mut auto = renderer(Format::Text, Asks::Auto);
        auto.event(&RemoteEvent::Asked(request()));
        assert!(auto.err.is_empty(), "--auto allows without a warning");
    }
}
