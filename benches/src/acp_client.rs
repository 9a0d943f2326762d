//! A minimal ACP client over a child's stdio (newline-delimited JSON-RPC):
//! send a request, read until its answer, answering the agent's
//! permission asks with the first option that allows. Shared by `startup`
//! and the peers harness (`agent acp`, `opencode acp`).

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A spawned ACP agent and the messages it writes.
#[derive(Debug)]
pub struct AcpClient {
    child: Child,
    stdin: Option<ChildStdin>,
    messages: mpsc::Receiver<String>,
    next_id: u64,
    timeout: Duration,
}

/// Whether `message` is a `session/update` notification carrying a chunk
/// of the agent's answer (`agent_message_chunk`).
pub fn agent_message_chunk(message: &Value) -> bool {
    message["method"] == "session/update"
        && message["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
}

impl AcpClient {
    /// Spawns `command` with piped stdin and stdout (stderr as the command
    /// sets it); each request waits at most `timeout` for its answer.
    pub fn spawn(mut command: Command, timeout: Duration) -> std::io::Result<AcpClient> {
        command.stdin(Stdio::piped()).stdout(Stdio::piped());
        let mut child = command.spawn()?;
        let stdin = child.stdin.take();
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| std::io::Error::other("no stdout"))?;
        let (sender, messages) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        Ok(AcpClient {
            child,
            stdin,
            messages,
            next_id: 1,
            timeout,
        })
    }

    /// The agent's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends `method(params)` and returns its answer.
    pub fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        self.request_watching(method, params, |_| {})
    }

    /// Sends `method(params)` and returns its answer, showing `watch` each
    /// other message that arrives before it (notifications, asks).
    pub fn request_watching(
        &mut self,
        method: &str,
        params: Value,
        mut watch: impl FnMut(&Value),
    ) -> Result<Value, String> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        let deadline = Instant::now() + self.timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self.messages.recv_timeout(left).map_err(|e| match e {
                mpsc::RecvTimeoutError::Timeout => {
                    format!("{method}: no answer in {:?}", self.timeout)
                }
                mpsc::RecvTimeoutError::Disconnected => {
                    format!("{method}: the agent closed stdout")
                }
            })?;
            let Ok(message) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if message["method"] == "session/request_permission" {
                self.allow(&message)?;
            } else if message["id"] == id && message.get("method").is_none() {
                if message.get("error").is_some() {
                    return Err(format!("{method}: error answer: {message}"));
                }
                return Ok(message);
            }
            watch(&message);
        }
    }

    /// Answers a permission ask with its first option whose kind allows.
    fn allow(&mut self, ask: &Value) -> Result<(), String> {
        let options = ask["params"]["options"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let option = options
            .iter()
            .find(|o| o["kind"].as_str().is_some_and(|k| k.starts_with("allow")))
            .or(options.first())
            .map(|o| o["optionId"].clone())
            .unwrap_or(Value::Null);
        self.send(&json!({"jsonrpc": "2.0", "id": ask["id"],
            "result": {"outcome": {"outcome": "selected", "optionId": option}}}))
    }

    fn send(&mut self, message: &Value) -> Result<(), String> {
        let stdin = self.stdin.as_mut().ok_or("stdin is closed")?;
        writeln!(stdin, "{message}").map_err(|e| e.to_string())
    }

    /// Closes the agent's stdin (which ends a well-behaved agent) and
    /// returns its process id: the caller waits for it (`wait4`, for its
    /// rusage).
    pub fn close(mut self) -> u32 {
        drop(self.stdin.take());
        self.child.id()
    }
}
