//! A client of an opencode-compatible HTTP server (`agent serve`,
//! `opencode serve`) run against the mock model: starting one in a project
//! of its own, creating and prompting sessions, and reading the server
//! process's memory and descriptors from `/proc`. Shared by `serve-load`
//! and the peers harness.

use serde_json::{Value, json};
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Which server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerKind {
    /// `agent serve`.
    Agent,
    /// `opencode serve`.
    Opencode,
}

impl ServerKind {
    /// The name in reports.
    pub fn name(self) -> &'static str {
        match self {
            ServerKind::Agent => "agent serve",
            ServerKind::Opencode => "opencode serve",
        }
    }
}

/// A running server: its process, its URL and when it was spawned. It is
/// killed when dropped.
#[derive(Debug)]
pub struct Server {
    /// The server process.
    pub child: Child,
    /// `http://127.0.0.1:PORT`, without a trailing slash.
    pub url: String,
    /// Just before the spawn.
    pub started: Instant,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `kind`'s project configuration (`opencode.json`), with `base_url` (the
/// mock) as its model's provider; the key is the layer's own, so the
/// agent honours the URL without trusting the project.
pub fn server_config(kind: ServerKind, base_url: &str) -> Value {
    match kind {
        ServerKind::Agent => json!({
            "model": "mock/mock",
            "provider": {"mock": {"options": {"baseURL": base_url, "apiKey": "x"}}},
        }),
        ServerKind::Opencode => json!({
            "$schema": "https://opencode.ai/config.json",
            "autoupdate": false,
            "share": "disabled",
            "model": "mock/mock",
            "small_model": "mock/mock",
            "provider": {"mock": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "mock",
                "options": {"baseURL": base_url, "apiKey": "x"},
                "models": {"mock": {"name": "mock"}},
            }},
        }),
    }
}

/// Spawns `kind`'s server on a free loopback port in `project` (which
/// holds its configuration) with `home`, offline through `proxy` (the
/// mock's proxy URL), and waits up to `wait` for the line that gives its
/// URL.
pub fn spawn_server(
    kind: ServerKind,
    binary: &Path,
    project: &Path,
    home: &Path,
    proxy: &str,
    wait: Duration,
) -> std::io::Result<Server> {
    let mut command = crate::offline_command(binary, project, home, Some(proxy));
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    match kind {
        // The project is trusted as a whole, as serve-load always did.
        ServerKind::Agent => command.args(["serve", "--port", "0", "--trust-project"]),
        ServerKind::Opencode => command
            .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
            .env("OPENCODE_DISABLE_LSP_DOWNLOAD", "1")
            .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
            .args(["serve", "--port", "0", "--hostname", "127.0.0.1"]),
    };
    let started = Instant::now();
    let mut child = command.spawn()?;
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| std::io::Error::other("no stdout"))?;
    let url = printed_url(stdout);
    let mut server = Server {
        child,
        url: String::new(),
        started,
    };
    server.url = url
        .recv_timeout(wait)
        .map_err(|_| std::io::Error::other(format!("{} printed no URL in {wait:?}", kind.name())))?
        .trim_end_matches('/')
        .to_string();
    Ok(server)
}

/// The first `http://…` word `stdout` prints (read on a thread of its
/// own, which drains the rest).
fn printed_url(stdout: std::process::ChildStdout) -> mpsc::Receiver<String> {
    let (found, url) = mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        let mut sent = false;
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if !sent && let Some(at) = line.find("http://") {
                let url = line[at..]
                    .split_whitespace()
                    .next()
                    .unwrap_or("")
                    .to_string();
                let _ = found.send(url);
                sent = true;
            }
        }
    });
    url
}

/// What `/proc` says about a process.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProcSample {
    /// `VmRSS`, KiB.
    pub rss_kib: u64,
    /// `RssAnon` (what it allocated), KiB.
    pub anon_kib: u64,
    /// `VmHWM`, the peak resident set so far, KiB.
    pub peak_kib: u64,
    /// Open descriptors.
    pub fds: usize,
}

/// `pid`'s [`ProcSample`] (zeros for what cannot be read).
pub fn proc_sample(pid: u32) -> ProcSample {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    ProcSample {
        rss_kib: field("VmRSS:"),
        anon_kib: field("RssAnon:"),
        peak_kib: field("VmHWM:"),
        fds: std::fs::read_dir(format!("/proc/{pid}/fd"))
            .map(|dir| dir.count())
            .unwrap_or(0),
    }
}

/// An HTTP client for the servers: a large idle pool, a 120 s timeout.
pub fn http_client() -> reqwest::Result<reqwest::Client> {
    reqwest::Client::builder()
        .pool_max_idle_per_host(1_000)
        .timeout(Duration::from_secs(120))
        .build()
}

/// Creates a session and prompts it ("Say hello.", which the mock answers
/// with text in one step); the session's id.
pub async fn create_and_prompt(client: &reqwest::Client, url: &str) -> Result<String, String> {
    let session: Value = client
        .post(format!("{url}/session"))
        .json(&json!({}))
        .send()
        .await
        .map_err(|e| format!("create: {e}"))?
        .error_for_status()
        .map_err(|e| format!("create: {e}"))?
        .json()
        .await
        .map_err(|e| format!("create: {e}"))?;
    let id = session["id"]
        .as_str()
        .ok_or_else(|| format!("create answered no id: {session}"))?
        .to_string();
    let reply = client
        .post(format!("{url}/session/{id}/message"))
        .json(&json!({"parts": [{"type": "text", "text": "Say hello."}]}))
        .send()
        .await
        .map_err(|e| format!("prompt: {e}"))?;
    let status = reply.status();
    let body = reply.text().await.map_err(|e| format!("prompt: {e}"))?;
    if !status.is_success() {
        return Err(format!("prompt answered {status}: {body}"));
    }
    Ok(id)
}

/// Deletes session `id`.
pub async fn delete_session(client: &reqwest::Client, url: &str, id: &str) -> Result<(), String> {
    client
        .delete(format!("{url}/session/{id}"))
        .send()
        .await
        .and_then(reqwest::Response::error_for_status)
        .map(drop)
        .map_err(|e| format!("delete {id}: {e}"))
}
