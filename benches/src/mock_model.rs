//! A scripted model server for the peers benchmark (`benches/peers/`): it
//! speaks OpenAI Chat Completions (`POST …/chat/completions`) and the
//! Responses API (`POST …/responses`) as SSE streams shaped like the
//! recorded ones, so the agent, opencode and codex can all run offline
//! against it.
//!
//! What it answers depends only on the conversation: a request carrying
//! `n` tool results gets a call of the client's shell tool (or, for a
//! search script, of its grep tool when it has one) while `n < steps`,
//! then a short text answer. A request without tools (a
//! title or summary request) gets a text answer and is counted apart.
//! Each reply, headers and body, goes out in one `write` on a socket with
//! `TCP_NODELAY`, so a client that reuses its connection never waits for
//! a delayed ACK. At each request it can sample the CPU time of a process
//! (`/proc/PID/task/*/schedstat`), which gives the client's CPU per step.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

/// What the model does in one run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Script {
    /// How many shell calls to ask for before the answer (0: answer at once).
    pub steps: usize,
    /// The shell command of call `i` (0-based): `{i}` in it is replaced by
    /// the step number, so no two calls are identical (opencode and the
    /// agent stop a loop of identical calls).
    pub command: String,
    /// A string every tool result must contain (the file's marker), checked
    /// on the last tool result of each request.
    pub expect_in_output: String,
    /// When not empty, the search pattern of call `i` (`{i}` replaced as
    /// in [`Script::command`]): the call goes to the client's grep tool
    /// (`grep` with a `pattern` parameter) when it has one, else to its
    /// shell with [`Script::command`].
    pub grep_pattern: String,
}

/// One request the mock received in a run.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestRecord {
    /// `chat`, `responses`, `models` or the path for anything else.
    pub endpoint: String,
    /// Whether it carried tools (a turn of the agent loop) or not (title,
    /// summary).
    pub main: bool,
    /// Tool results in its history.
    pub tool_results: usize,
    /// Whether the last tool result held [`Script::expect_in_output`]
    /// (true when there is none).
    pub output_ok: bool,
    /// The request body's size.
    pub body_bytes: usize,
    /// CPU time of the sampled process when the request arrived
    /// (nanoseconds, summed over its threads), if one is set.
    pub cpu_ns: Option<u64>,
    /// Seconds since the run started.
    pub at_s: f64,
}

/// Everything the mock saw in one run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunRecord {
    /// The requests, in arrival order.
    pub requests: Vec<RequestRecord>,
    /// Requests it could not answer (bad JSON, no shell tool …).
    pub errors: Vec<String>,
    /// Hosts the client tried to reach through the mock as its proxy
    /// (refused).
    pub external: Vec<String>,
}

impl RunRecord {
    /// Requests that carried tools.
    pub fn main_requests(&self) -> usize {
        self.requests.iter().filter(|r| r.main).count()
    }

    /// Requests without tools (titles, summaries).
    pub fn aux_requests(&self) -> usize {
        self.requests
            .iter()
            .filter(|r| !r.main && (r.endpoint == "chat" || r.endpoint == "responses"))
            .count()
    }

    /// The most tool results any request carried: the steps done.
    pub fn steps_done(&self) -> usize {
        self.requests
            .iter()
            .filter(|r| r.main)
            .map(|r| r.tool_results)
            .max()
            .unwrap_or(0)
    }

    /// Main requests whose last tool result lacked the expected output.
    pub fn bad_outputs(&self) -> usize {
        self.requests
            .iter()
            .filter(|r| r.main && !r.output_ok)
            .count()
    }

    /// CPU time of the sampled process for each step `i` (from the first
    /// request carrying `i` tool results to the first carrying `i + 1`),
    /// in nanoseconds.
    pub fn cpu_per_step(&self) -> Vec<u64> {
        let mut first: Vec<Option<u64>> = Vec::new();
        for r in self.requests.iter().filter(|r| r.main) {
            if first.len() <= r.tool_results {
                first.resize(r.tool_results + 1, None);
            }
            if first[r.tool_results].is_none() {
                first[r.tool_results] = r.cpu_ns;
            }
        }
        first
            .windows(2)
            .filter_map(|w| match (w[0], w[1]) {
                (Some(a), Some(b)) => Some(b.saturating_sub(a)),
                _ => None,
            })
            .collect()
    }
}

#[derive(Debug, Default)]
struct State {
    script: Script,
    pid: Option<u32>,
    started: Option<Instant>,
    record: RunRecord,
}

/// The running server. It stops with the process.
#[derive(Debug, Clone)]
pub struct MockModel {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

impl MockModel {
    /// Listens on `127.0.0.1` (a free port) and serves each connection on
    /// a thread of its own.
    pub fn start() -> std::io::Result<MockModel> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let state = Arc::new(Mutex::new(State::default()));
        let shared = state.clone();
        std::thread::Builder::new()
            .name("mock-model-accept".into())
            .spawn(move || {
                for stream in listener.incoming().flatten() {
                    let state = shared.clone();
                    let _ = std::thread::Builder::new()
                        .name("mock-model-conn".into())
                        .spawn(move || serve_connection(stream, &state));
                }
            })?;
        Ok(MockModel { addr, state })
    }

    /// `http://127.0.0.1:PORT`, the proxy clients are given (it refuses
    /// everything, see [`RunRecord::external`]).
    pub fn proxy_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `http://127.0.0.1:PORT/v1`, the base URL clients are given.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Starts a run: clears the record, sets the script and the process
    /// whose CPU time is sampled at each request.
    pub fn begin(&self, script: Script, pid: Option<u32>) {
        let mut state = lock(&self.state);
        state.script = script;
        state.pid = pid;
        state.started = Some(Instant::now());
        state.record = RunRecord::default();
    }

    /// Sets the sampled process once it is known (after [`MockModel::begin`]).
    pub fn sample(&self, pid: u32) {
        lock(&self.state).pid = Some(pid);
    }

    /// Ends the run and returns what was seen.
    pub fn finish(&self) -> RunRecord {
        let mut state = lock(&self.state);
        state.pid = None;
        std::mem::take(&mut state.record)
    }
}

/// CPU time of every live thread of `pid`, in nanoseconds
/// (`/proc/PID/task/*/schedstat`, first field).
pub fn process_cpu_ns(pid: u32) -> Option<u64> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let mut total = 0u64;
    for task in tasks.flatten() {
        if let Ok(text) = std::fs::read_to_string(task.path().join("schedstat"))
            && let Some(ns) = text.split_whitespace().next()
        {
            total += ns.parse::<u64>().unwrap_or(0);
        }
    }
    Some(total)
}

/// One parsed HTTP request.
struct Request {
    method: String,
    path: String,
    body: Vec<u8>,
    close: bool,
}

fn read_request(reader: &mut BufReader<TcpStream>) -> std::io::Result<Option<Request>> {
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_string();
    let path = parts.next().unwrap_or_default().to_string();
    let http10 = parts.next() == Some("HTTP/1.0");
    let mut length = 0usize;
    let mut chunked = false;
    let mut close = http10;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? == 0 {
            return Ok(None);
        }
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            let value = value.trim();
            match name.trim().to_ascii_lowercase().as_str() {
                "content-length" => length = value.parse().unwrap_or(0),
                "transfer-encoding" => chunked = value.eq_ignore_ascii_case("chunked"),
                "connection" => close = value.eq_ignore_ascii_case("close"),
                _ => {}
            }
        }
    }
    let mut body = Vec::new();
    if chunked {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size)?;
            let size = usize::from_str_radix(size.trim().split(';').next().unwrap_or("0"), 16)
                .unwrap_or(0);
            if size == 0 {
                // Trailers, then the empty line.
                loop {
                    let mut trailer = String::new();
                    if reader.read_line(&mut trailer)? == 0 || trailer.trim().is_empty() {
                        break;
                    }
                }
                break;
            }
            let start = body.len();
            body.resize(start + size, 0);
            reader.read_exact(&mut body[start..])?;
            let mut crlf = [0u8; 2];
            reader.read_exact(&mut crlf)?;
        }
    } else {
        body.resize(length, 0);
        reader.read_exact(&mut body)?;
    }
    Ok(Some(Request {
        method,
        path,
        body,
        close,
    }))
}

fn serve_connection(stream: TcpStream, state: &Mutex<State>) {
    let _ = stream.set_nodelay(true);
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::with_capacity(256 * 1024, stream);
    while let Ok(Some(request)) = read_request(&mut reader) {
        let reply = answer(&request, state);
        // Headers and body in one write: see the module's documentation.
        let close = request.close || request.method == "CONNECT";
        if writer.write_all(&reply).is_err() || close {
            break;
        }
    }
}

fn http(status: &str, content_type: &str, body: &str) -> Vec<u8> {
    let mut out = format!(
        "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n\
         cache-control: no-cache\r\nx-request-id: req_mock\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}

fn error_reply(status: &str, message: &str) -> Vec<u8> {
    let body = json!({"error": {"message": message, "type": "invalid_request_error", "param": null, "code": null}});
    http(status, "application/json", &body.to_string())
}

/// The reply to one request, recorded in the run.
fn answer(request: &Request, state: &Mutex<State>) -> Vec<u8> {
    if request.method == "CONNECT" || request.path.starts_with("http://") {
        // The peers are given this server as their HTTP(S) proxy: whatever
        // they try to reach beyond the mock is refused at once (as on a
        // machine without network) and named in the record.
        let target = request.path.trim_start_matches("http://");
        let host = target.split('/').next().unwrap_or_default().to_string();
        lock(state).record.external.push(host);
        return b"HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            .to_vec();
    }
    let path = request.path.split('?').next().unwrap_or_default();
    let endpoint = if path.ends_with("/chat/completions") {
        "chat"
    } else if path.ends_with("/responses") {
        "responses"
    } else if path.ends_with("/models") {
        "models"
    } else {
        path
    };
    let (script, pid, started) = {
        let state = lock(state);
        (state.script.clone(), state.pid, state.started)
    };
    let cpu_ns = pid.and_then(process_cpu_ns);
    let at_s = started.map(|s| s.elapsed().as_secs_f64()).unwrap_or(0.0);
    let mut record = RequestRecord {
        endpoint: endpoint.to_string(),
        main: false,
        tool_results: 0,
        output_ok: true,
        body_bytes: request.body.len(),
        cpu_ns,
        at_s,
    };
    let reply = match endpoint {
        "models" => http(
            "200 OK",
            "application/json",
            &json!({"object": "list", "data": [{"id": "mock", "object": "model", "created": 1764455000, "owned_by": "mock"}], "models": []}).to_string(),
        ),
        "chat" | "responses" if request.method == "POST" => {
            match serde_json::from_slice::<Value>(&request.body) {
                Ok(body) => match turn(&body, endpoint == "responses", &script, &mut record) {
                    Ok(reply) => reply,
                    Err(message) => {
                        lock(state).record.errors.push(message.clone());
                        error_reply("400 Bad Request", &message)
                    }
                },
                Err(err) => {
                    let message = format!("{endpoint}: the body is not JSON: {err}");
                    lock(state).record.errors.push(message.clone());
                    error_reply("400 Bad Request", &message)
                }
            }
        }
        _ => error_reply("404 Not Found", &format!("no route {} {path}", request.method)),
    };
    lock(state).record.requests.push(record);
    reply
}

/// The shell tool of a request and how its arguments are shaped.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Shell {
    /// `{"command": "…"}` (opencode's and the agent's `bash`, codex's
    /// `shell_command`), plus `description` when the schema has it.
    Text { name: String, description: bool },
    /// `{"command": ["bash", "-lc", "…"]}` (codex's `shell`).
    Argv { name: String },
    /// `{"cmd": "…"}` (codex's `exec_command`).
    Cmd { name: String },
}

const SHELL_TOOLS: &[&str] = &["bash", "shell_command", "shell", "exec_command"];

/// The name and parameter schema of each function tool.
fn tools(body: &Value, responses: bool) -> Vec<(String, Value)> {
    let Some(list) = body.get("tools").and_then(Value::as_array) else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|tool| {
            let function = if responses {
                tool
            } else {
                tool.get("function")?
            };
            let name = function.get("name")?.as_str()?.to_string();
            let parameters = function.get("parameters").cloned().unwrap_or(Value::Null);
            Some((name, parameters))
        })
        .collect()
}

fn shell_tool(tools: &[(String, Value)]) -> Option<Shell> {
    for wanted in SHELL_TOOLS {
        let Some((name, parameters)) = tools.iter().find(|(n, _)| n == wanted) else {
            continue;
        };
        let properties = parameters.get("properties");
        let property = |key: &str| properties.and_then(|p| p.get(key));
        let name = name.clone();
        if let Some(command) = property("command") {
            if command.get("type").and_then(Value::as_str) == Some("array") {
                return Some(Shell::Argv { name });
            }
            return Some(Shell::Text {
                name,
                description: property("description").is_some(),
            });
        }
        if property("cmd").is_some() {
            return Some(Shell::Cmd { name });
        }
    }
    None
}

/// The client's grep tool: one named `grep` whose parameters have a
/// `pattern` (the agent's and opencode's; codex has none).
fn grep_tool(tools: &[(String, Value)]) -> Option<String> {
    tools
        .iter()
        .find(|(name, parameters)| {
            name == "grep" && parameters.pointer("/properties/pattern").is_some()
        })
        .map(|(name, _)| name.clone())
}

/// The tool results of a request's history, in order (their text).
fn tool_results(body: &Value, responses: bool) -> Vec<String> {
    let text = |content: Option<&Value>| -> String {
        match content {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => String::new(),
        }
    };
    if responses {
        body.get("input")
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter(|item| {
                        matches!(
                            item.get("type").and_then(Value::as_str),
                            Some("function_call_output" | "custom_tool_call_output")
                        )
                    })
                    .map(|item| text(item.get("output")))
                    .collect()
            })
            .unwrap_or_default()
    } else {
        body.get("messages")
            .and_then(Value::as_array)
            .map(|messages| {
                messages
                    .iter()
                    .filter(|m| m.get("role").and_then(Value::as_str) == Some("tool"))
                    .map(|m| text(m.get("content")))
                    .collect()
            })
            .unwrap_or_default()
    }
}

fn turn(
    body: &Value,
    responses: bool,
    script: &Script,
    record: &mut RequestRecord,
) -> Result<Vec<u8>, String> {
    let model = body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("mock")
        .to_string();
    let tools = tools(body, responses);
    if tools.is_empty() {
        // A title or summary request.
        return Ok(text_reply(responses, &model, "Mock benchmark session"));
    }
    record.main = true;
    let results = tool_results(body, responses);
    record.tool_results = results.len();
    if let Some(last) = results.last() {
        record.output_ok = last.contains(&script.expect_in_output);
    }
    if results.len() >= script.steps {
        let answer = if script.steps == 0 {
            "Hello! This is the mock model's answer.".to_string()
        } else {
            format!("Done: ran {} commands.", results.len())
        };
        return Ok(text_reply(responses, &model, &answer));
    }
    let (name, arguments) = call(&tools, script, results.len())?;
    let call_id = format!("call_mock{:04}", results.len());
    Ok(tool_reply(
        responses,
        &model,
        &name,
        &call_id,
        &arguments.to_string(),
    ))
}

/// The tool call of step `step`: the grep tool with the step's pattern
/// for a search script whose client has one, else the shell with the
/// step's command.
fn call(
    tools: &[(String, Value)],
    script: &Script,
    step: usize,
) -> Result<(String, Value), String> {
    let step_text = step.to_string();
    if !script.grep_pattern.is_empty()
        && let Some(name) = grep_tool(tools)
    {
        let pattern = script.grep_pattern.replace("{i}", &step_text);
        return Ok((name, json!({"pattern": pattern})));
    }
    let names: Vec<&str> = tools.iter().map(|(n, _)| n.as_str()).collect();
    let shell = shell_tool(tools)
        .ok_or_else(|| format!("no shell tool among the request's tools: {names:?}"))?;
    let command = script.command.replace("{i}", &step_text);
    Ok(match shell {
        Shell::Text { name, description } => {
            let mut args = json!({"command": command});
            if description {
                args["description"] = json!(format!("Step {step}"));
            }
            (name, args)
        }
        Shell::Argv { name } => (name, json!({"command": ["bash", "-lc", command]})),
        Shell::Cmd { name } => (name, json!({"cmd": command})),
    })
}

fn sse(events: &[(Option<&str>, Value)]) -> Vec<u8> {
    let mut body = String::new();
    for (event, data) in events {
        if let Some(event) = event {
            body.push_str("event: ");
            body.push_str(event);
            body.push('\n');
        }
        body.push_str("data: ");
        body.push_str(&data.to_string());
        body.push_str("\n\n");
    }
    http("200 OK", "text/event-stream; charset=utf-8", &body)
}

fn sse_done(mut events: Vec<u8>) -> Vec<u8> {
    // Chat streams end with `data: [DONE]`; the content length is fixed up.
    let done = b"data: [DONE]\n\n";
    if let Some(split) = events.windows(4).position(|w| w == b"\r\n\r\n") {
        let body_len = events.len() - split - 4 + done.len();
        let head = String::from_utf8_lossy(&events[..split]).to_string();
        let head: Vec<String> = head
            .split("\r\n")
            .map(|line| {
                if line.starts_with("content-length:") {
                    format!("content-length: {body_len}")
                } else {
                    line.to_string()
                }
            })
            .collect();
        let mut out = head.join("\r\n").into_bytes();
        out.extend_from_slice(b"\r\n\r\n");
        out.extend_from_slice(&events[split + 4..]);
        out.extend_from_slice(done);
        events = out;
    }
    events
}

/// Splits `text` into a few deltas, as a model streams it.
fn deltas(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for word in text.split_inclusive(' ') {
        current.push_str(word);
        if current.len() >= 8 {
            out.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

const CREATED: u64 = 1_764_455_000;

fn chat_chunk(model: &str, delta: Value, finish: Option<&str>) -> Value {
    json!({
        "id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": CREATED,
        "model": model, "system_fingerprint": "fp_mock",
        "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
        "usage": null,
    })
}

fn chat_usage(model: &str) -> Value {
    json!({
        "id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": CREATED,
        "model": model, "system_fingerprint": "fp_mock", "choices": [],
        "usage": {"prompt_tokens": 812, "completion_tokens": 58, "total_tokens": 870,
                  "prompt_tokens_details": {"cached_tokens": 768, "audio_tokens": 0},
                  "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                      "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}},
    })
}

fn responses_usage() -> Value {
    json!({"input_tokens": 1520, "input_tokens_details": {"cached_tokens": 1280},
           "output_tokens": 96, "output_tokens_details": {"reasoning_tokens": 0},
           "total_tokens": 1616})
}

fn responses_shell(model: &str, status: &str, output: Value, usage: Value) -> Value {
    json!({"id": "resp_mock", "object": "response", "created_at": CREATED, "status": status,
           "model": model, "output": output, "parallel_tool_calls": true,
           "previous_response_id": null, "tool_choice": "auto", "usage": usage})
}

fn text_reply(responses: bool, model: &str, text: &str) -> Vec<u8> {
    if !responses {
        let mut events = vec![(
            None,
            chat_chunk(
                model,
                json!({"role": "assistant", "content": "", "refusal": null}),
                None,
            ),
        )];
        for delta in deltas(text) {
            events.push((None, chat_chunk(model, json!({"content": delta}), None)));
        }
        events.push((None, chat_chunk(model, json!({}), Some("stop"))));
        events.push((None, chat_usage(model)));
        return sse_done(sse(&events));
    }
    let item_id = "msg_mock";
    let mut seq = 0u64;
    let mut next = || {
        seq += 1;
        seq - 1
    };
    let message = |status: &str, content: Value| json!({"id": item_id, "type": "message", "status": status, "role": "assistant", "content": content});
    let part = json!({"type": "output_text", "text": text, "annotations": []});
    let mut events = vec![
        (
            Some("response.created"),
            json!({"type": "response.created", "sequence_number": next(),
                   "response": responses_shell(model, "in_progress", json!([]), Value::Null)}),
        ),
        (
            Some("response.in_progress"),
            json!({"type": "response.in_progress", "sequence_number": next(),
                   "response": responses_shell(model, "in_progress", json!([]), Value::Null)}),
        ),
        (
            Some("response.output_item.added"),
            json!({"type": "response.output_item.added", "sequence_number": next(), "output_index": 0,
                   "item": message("in_progress", json!([]))}),
        ),
        (
            Some("response.content_part.added"),
            json!({"type": "response.content_part.added", "sequence_number": next(), "item_id": item_id,
                   "output_index": 0, "content_index": 0,
                   "part": {"type": "output_text", "text": "", "annotations": []}}),
        ),
    ];
    for delta in deltas(text) {
        events.push((
            Some("response.output_text.delta"),
            json!({"type": "response.output_text.delta", "sequence_number": next(), "item_id": item_id,
                   "output_index": 0, "content_index": 0, "delta": delta, "logprobs": []}),
        ));
    }
    events.extend([
        (
            Some("response.output_text.done"),
            json!({"type": "response.output_text.done", "sequence_number": next(), "item_id": item_id,
                   "output_index": 0, "content_index": 0, "text": text, "logprobs": []}),
        ),
        (
            Some("response.content_part.done"),
            json!({"type": "response.content_part.done", "sequence_number": next(), "item_id": item_id,
                   "output_index": 0, "content_index": 0, "part": part.clone()}),
        ),
        (
            Some("response.output_item.done"),
            json!({"type": "response.output_item.done", "sequence_number": next(), "output_index": 0,
                   "item": message("completed", json!([part.clone()]))}),
        ),
        (
            Some("response.completed"),
            json!({"type": "response.completed", "sequence_number": next(),
                   "response": responses_shell(model, "completed",
                       json!([message("completed", json!([part]))]), responses_usage())}),
        ),
    ]);
    sse(&events)
}

/// A tool call `name(arguments)` as the mock server streams it (Responses
/// or Chat Completions), its arguments in two halves.
fn tool_reply(responses: bool, model: &str, name: &str, call_id: &str, arguments: &str) -> Vec<u8> {
    let split = arguments.len() / 2;
    let split = (0..=split)
        .rev()
        .find(|i| arguments.is_char_boundary(*i))
        .unwrap_or(0);
    let (first, second) = arguments.split_at(split);
    if responses {
        responses_tool_reply(model, name, call_id, (first, second), arguments)
    } else {
        chat_tool_reply(model, name, call_id, (first, second))
    }
}

/// A tool call as a Chat Completions stream, its arguments in two deltas.
fn chat_tool_reply(
    model: &str,
    name: &str,
    call_id: &str,
    (first, second): (&str, &str),
) -> Vec<u8> {
    let call = |delta: Value| {
        chat_chunk(
            model,
            json!({"tool_calls": [{"index": 0, "function": {"arguments": delta}}]}),
            None,
        )
    };
    let events = vec![
        (
            None,
            chat_chunk(
                model,
                json!({"role": "assistant", "content": null, "refusal": null,
                       "tool_calls": [{"index": 0, "id": call_id, "type": "function",
                                       "function": {"name": name, "arguments": ""}}]}),
                None,
            ),
        ),
        (None, call(json!(first))),
        (None, call(json!(second))),
        (None, chat_chunk(model, json!({}), Some("tool_calls"))),
        (None, chat_usage(model)),
    ];
    sse_done(sse(&events))
}

/// A tool call as a Responses stream, its arguments in two deltas.
fn responses_tool_reply(
    model: &str,
    name: &str,
    call_id: &str,
    (first, second): (&str, &str),
    arguments: &str,
) -> Vec<u8> {
    let item_id = "fc_mock";
    let item = |status: &str, args: &str| {
        json!({"id": item_id, "type": "function_call", "status": status, "arguments": args,
               "call_id": call_id, "name": name})
    };
    let mut seq = 0u64;
    let mut next = || {
        seq += 1;
        seq - 1
    };
    let events = vec![
        (
            Some("response.created"),
            json!({"type": "response.created", "sequence_number": next(),
                   "response": responses_shell(model, "in_progress", json!([]), Value::Null)}),
        ),
        (
            Some("response.in_progress"),
            json!({"type": "response.in_progress", "sequence_number": next(),
                   "response": responses_shell(model, "in_progress", json!([]), Value::Null)}),
        ),
        (
            Some("response.output_item.added"),
            json!({"type": "response.output_item.added", "sequence_number": next(), "output_index": 0,
                   "item": item("in_progress", "")}),
        ),
        (
            Some("response.function_call_arguments.delta"),
            json!({"type": "response.function_call_arguments.delta", "sequence_number": next(),
                   "item_id": item_id, "output_index": 0, "delta": first}),
        ),
        (
            Some("response.function_call_arguments.delta"),
            json!({"type": "response.function_call_arguments.delta", "sequence_number": next(),
                   "item_id": item_id, "output_index": 0, "delta": second}),
        ),
        (
            Some("response.function_call_arguments.done"),
            json!({"type": "response.function_call_arguments.done", "sequence_number": next(),
                   "item_id": item_id, "output_index": 0, "arguments": arguments}),
        ),
        (
            Some("response.output_item.done"),
            json!({"type": "response.output_item.done", "sequence_number": next(), "output_index": 0,
                   "item": item("completed", arguments)}),
        ),
        (
            Some("response.completed"),
            json!({"type": "response.completed", "sequence_number": next(),
                   "response": responses_shell(model, "completed",
                       json!([item("completed", arguments)]), responses_usage())}),
        ),
    ];
    sse(&events)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Posts `body` to `path` over a fresh connection and returns the raw
    /// response (the server closes after a `connection: close` request).
    fn post(model: &MockModel, path: &str, body: &Value) -> String {
        let body = body.to_string();
        let mut stream = TcpStream::connect(model.addr).unwrap();
        write!(
            stream,
            "POST {path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n\
             content-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut out = String::new();
        stream.read_to_string(&mut out).unwrap();
        out
    }

    fn data_lines(reply: &str) -> Vec<Value> {
        reply
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .filter(|l| *l != "[DONE]")
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    fn script() -> Script {
        Script {
            steps: 2,
            command: "echo step-{i} && cat small.txt".into(),
            expect_in_output: "MARKER".into(),
            grep_pattern: String::new(),
        }
    }

    fn grep_script() -> Script {
        Script {
            steps: 10,
            command: "rg -n 'NEEDL[E]_[0-9]*{i}07' .".into(),
            expect_in_output: "NEEDLE_".into(),
            grep_pattern: "NEEDL[E]_[0-9]*{i}07".into(),
        }
    }

    /// The arguments of the tool call in a Chat Completions reply, and the
    /// tool's name.
    fn chat_call(reply: &str) -> (String, Value) {
        let chunks = data_lines(reply);
        let name = chunks[0]["choices"][0]["delta"]["tool_calls"][0]["function"]["name"]
            .as_str()
            .unwrap()
            .to_string();
        let arguments: String = chunks
            .iter()
            .filter_map(|c| {
                c["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"].as_str()
            })
            .collect();
        (name, serde_json::from_str(&arguments).unwrap())
    }

    #[test]
    fn a_search_script_calls_the_grep_tool_with_a_new_pattern_each_step() {
        let model = MockModel::start().unwrap();
        model.begin(grep_script(), None);
        let tools = json!([
            {"type": "function", "function": {"name": "bash", "parameters": {"type": "object",
             "properties": {"command": {"type": "string"}}}}},
            {"type": "function", "function": {"name": "grep", "parameters": {"type": "object",
             "properties": {"pattern": {"type": "string"}, "path": {"type": "string"}}}}}]);
        let mut patterns = Vec::new();
        let mut messages = vec![json!({"role": "user", "content": "go"})];
        for step in 0..3 {
            let reply = post(
                &model,
                "/v1/chat/completions",
                &json!({"model": "mock", "tools": tools, "messages": messages}),
            );
            let (name, arguments) = chat_call(&reply);
            assert_eq!(name, "grep");
            patterns.push(arguments["pattern"].as_str().unwrap().to_string());
            messages.push(json!({"role": "tool", "tool_call_id": format!("c{step}"),
                                 "content": "d010/f01007.md:\n  Line 21: a b NEEDLE_1007"}));
        }
        assert_eq!(patterns[0], "NEEDL[E]_[0-9]*007");
        assert_eq!(patterns[2], "NEEDL[E]_[0-9]*207");
        let record = model.finish();
        assert_eq!(record.bad_outputs(), 0);
        assert!(record.errors.is_empty(), "{:?}", record.errors);
    }

    #[test]
    fn a_search_script_falls_back_to_rg_through_a_shell_only_client() {
        let model = MockModel::start().unwrap();
        model.begin(grep_script(), None);
        let tools = json!([{"type": "function", "name": "shell", "parameters": {"type": "object",
            "properties": {"command": {"type": "array", "items": {"type": "string"}}}}},
            {"type": "function", "name": "grep", "parameters": {"type": "object",
            "properties": {"query": {"type": "string"}}}}]);
        let reply = post(
            &model,
            "/v1/responses",
            &json!({"model": "mock", "tools": tools, "input": [
                {"type": "function_call_output", "call_id": "c", "output": "No files found"}]}),
        );
        let done = data_lines(&reply)
            .into_iter()
            .find(|e| e["type"] == "response.function_call_arguments.done")
            .unwrap();
        let arguments: Value = serde_json::from_str(done["arguments"].as_str().unwrap()).unwrap();
        assert_eq!(
            arguments["command"],
            json!(["bash", "-lc", "rg -n 'NEEDL[E]_[0-9]*107' ."])
        );
        let record = model.finish();
        assert_eq!(
            record.bad_outputs(),
            1,
            "a search that found nothing lacks the needle"
        );
    }

    #[test]
    fn chat_asks_for_the_shell_until_the_steps_are_done_then_answers() {
        let model = MockModel::start().unwrap();
        model.begin(script(), Some(std::process::id()));
        let tools = json!([{"type": "function", "function": {"name": "read", "parameters": {}}},
            {"type": "function", "function": {"name": "bash", "parameters": {"type": "object",
             "properties": {"command": {"type": "string"}, "description": {"type": "string"}}}}}]);
        let first = post(
            &model,
            "/v1/chat/completions",
            &json!({"model": "mock", "stream": true, "tools": tools,
                    "messages": [{"role": "user", "content": "go"}]}),
        );
        assert!(first.starts_with("HTTP/1.1 200 OK\r\n"), "{first}");
        assert!(first.trim_end().ends_with("data: [DONE]"), "{first}");
        let chunks = data_lines(&first);
        let call = &chunks[0]["choices"][0]["delta"]["tool_calls"][0];
        assert_eq!(call["function"]["name"], "bash");
        let arguments: String = chunks
            .iter()
            .filter_map(|c| {
                c["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"].as_str()
            })
            .collect();
        let arguments: Value = serde_json::from_str(&arguments).unwrap();
        assert_eq!(arguments["command"], "echo step-0 && cat small.txt");
        assert_eq!(arguments["description"], "Step 0");
        assert_eq!(chunks[3]["choices"][0]["finish_reason"], "tool_calls");

        let answer = post(
            &model,
            "/v1/chat/completions",
            &json!({"model": "mock", "tools": tools, "messages": [
                {"role": "user", "content": "go"},
                {"role": "tool", "tool_call_id": "a", "content": "MARKER 1"},
                {"role": "tool", "tool_call_id": "b", "content": "MARKER 2"}]}),
        );
        let text: String = data_lines(&answer)
            .iter()
            .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
            .collect();
        assert_eq!(text, "Done: ran 2 commands.");
        // The content length covers the body exactly.
        let (head, body) = answer.split_once("\r\n\r\n").unwrap();
        assert!(
            head.contains(&format!("content-length: {}", body.len())),
            "{head}"
        );

        let record = model.finish();
        assert_eq!(record.main_requests(), 2);
        assert_eq!(record.steps_done(), 2);
        assert_eq!(record.bad_outputs(), 0);
        assert!(record.requests.iter().all(|r| r.cpu_ns.is_some()));
        assert!(record.errors.is_empty(), "{:?}", record.errors);
    }

    #[test]
    fn responses_calls_codex_shaped_tools_and_counts_titles_apart() {
        let model = MockModel::start().unwrap();
        model.begin(script(), None);
        let tools = json!([{"type": "function", "name": "shell", "parameters": {"type": "object",
            "properties": {"command": {"type": "array", "items": {"type": "string"}}}}}]);
        let reply = post(
            &model,
            "/v1/responses",
            &json!({"model": "mock", "tools": tools, "input": [
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]},
                {"type": "function_call", "call_id": "c", "name": "shell", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "c", "output": "no marker"}]}),
        );
        let events = data_lines(&reply);
        let types: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
        assert_eq!(types.first(), Some(&"response.created"));
        assert_eq!(types.last(), Some(&"response.completed"));
        let done = events
            .iter()
            .find(|e| e["type"] == "response.function_call_arguments.done")
            .unwrap();
        let arguments: Value = serde_json::from_str(done["arguments"].as_str().unwrap()).unwrap();
        assert_eq!(
            arguments["command"],
            json!(["bash", "-lc", "echo step-1 && cat small.txt"])
        );
        let sequence: Vec<u64> = events
            .iter()
            .filter_map(|e| e["sequence_number"].as_u64())
            .collect();
        assert_eq!(sequence, (0..events.len() as u64).collect::<Vec<_>>());

        let title = post(
            &model,
            "/v1/responses",
            &json!({"model": "mock", "input": "name this session"}),
        );
        assert!(title.contains("response.output_text.delta"), "{title}");
        let record = model.finish();
        assert_eq!(record.main_requests(), 1);
        assert_eq!(record.aux_requests(), 1);
        assert_eq!(record.bad_outputs(), 1, "the tool result lacked the marker");
    }

    #[test]
    fn a_request_without_a_shell_tool_is_an_error_in_the_record() {
        let model = MockModel::start().unwrap();
        model.begin(script(), None);
        let reply = post(
            &model,
            "/v1/chat/completions",
            &json!({"model": "mock", "messages": [],
                    "tools": [{"type": "function", "function": {"name": "read", "parameters": {}}}]}),
        );
        assert!(reply.starts_with("HTTP/1.1 400"), "{reply}");
        let record = model.finish();
        assert_eq!(record.errors.len(), 1);
        assert!(
            record.errors[0].contains("no shell tool"),
            "{:?}",
            record.errors
        );
    }

    #[test]
    fn proxy_requests_are_refused_and_named() {
        let model = MockModel::start().unwrap();
        model.begin(script(), None);
        let mut stream = TcpStream::connect(model.addr).unwrap();
        write!(
            stream,
            "CONNECT models.dev:443 HTTP/1.1\r\nhost: models.dev:443\r\n\r\n"
        )
        .unwrap();
        let mut out = String::new();
        stream.read_to_string(&mut out).unwrap();
        assert!(out.starts_with("HTTP/1.1 403"), "{out}");
        let record = model.finish();
        assert_eq!(record.external, vec!["models.dev:443".to_string()]);
        assert!(record.requests.is_empty());
    }

    #[test]
    fn cpu_per_step_is_the_difference_between_first_arrivals() {
        let request = |tool_results, cpu| RequestRecord {
            endpoint: "chat".into(),
            main: true,
            tool_results,
            output_ok: true,
            body_bytes: 0,
            cpu_ns: Some(cpu),
            at_s: 0.0,
        };
        let record = RunRecord {
            requests: vec![
                request(0, 100),
                request(1, 150),
                request(1, 400),
                request(2, 350),
            ],
            errors: Vec::new(),
            external: Vec::new(),
        };
        assert_eq!(record.cpu_per_step(), vec![50, 200]);
    }
}
