//! History cost: does a step's cost grow with the history? (issue 27)
//!
//! Runs the real agent for `--steps` steps (default 80): a
//! [`CodingAgent`] with agentgate-tools' built-in tools (the real `bash`),
//! the SQLite session store the CLI uses by default, and agentgate-providers'
//! OpenAI-compatible client (the real request encoder and HTTP path)
//! against a loopback server on its own thread that answers each request
//! with a scripted `bash` call in SSE. Each command prints `--output`
//! bytes (default 52,000), so the history grows by about that much per
//! step and every request re-sends it.
//!
//! Per step it takes the CPU time of every thread of the process except the
//! server's (`/proc/self/task/*/schedstat`, nanoseconds; read by the server
//! when a request has fully arrived, when the agent waits for the answer),
//! and prints the mean CPU per step of the first and last ten steps and
//! their ratio. A counting global allocator gives the peak heap of the run,
//! divided by the bytes of history (the last request's body; the sum of the
//! tool outputs is printed too). Each of `--runs` runs (default 3) is a new
//! agent and session in the same process; the median ratios are printed
//! last.
//!
//! `cargo run --release -p agentgate-benches --bin history-cost [-- --steps 80 --output 52000 --runs 3]`

#![allow(missing_docs)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentgate::CodingAgent;
use agentgate_benches::{CountingAllocator, usize_arg};
use agentgate_providers::OpenAiCompatible;
use agentgate_store::SqliteStore;

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

/// This thread's id (`/proc/thread-self` → `<pid>/task/<tid>`).
fn thread_id() -> Option<String> {
    let link = std::fs::read_link("/proc/thread-self").ok()?;
    Some(link.file_name()?.to_string_lossy().into_owned())
}

/// CPU time (ns) of every thread of this process but `except`.
fn process_cpu_except(except: &str) -> u64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    let mut total = 0;
    for task in tasks.flatten() {
        if task.file_name().to_string_lossy() == except {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(task.path().join("schedstat")) else {
            continue;
        };
        total += text
            .split_whitespace()
            .next()
            .and_then(|n| n.parse::<u64>().ok())
            .unwrap_or(0);
    }
    total
}

/// What the server saw of one request.
#[derive(Clone, Copy)]
struct Seen {
    /// CPU (ns) of the agent's threads when the request had arrived.
    cpu: u64,
    /// The request body's size.
    body: usize,
}

/// The loopback model: each request on any connection answers with the
/// next scripted SSE response; records what it saw.
struct Server {
    url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
}

fn chunk(delta: &str, finish: &str) -> String {
    format!(
        "data: {{\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\",\"created\":1764455000,\"model\":\"bench\",\"choices\":[{{\"index\":0,\"delta\":{delta},\"finish_reason\":{finish}}}]}}\n\n"
    )
}

/// The SSE body of answer `n` (0-based): a `bash` call while `n < steps`,
/// then a text answer.
fn answer(n: usize, steps: usize, output: usize) -> String {
    let mut body = String::new();
    if n < steps {
        let command = format!("head -c {output} big.txt; echo step {n}");
        let arguments =
            serde_json::json!({"command": command, "description": format!("step {n}")}).to_string();
        let delta = serde_json::json!({
            "role": "assistant",
            "content": null,
            "tool_calls": [{"index": 0, "id": format!("call_{n}"), "type": "function",
                "function": {"name": "bash", "arguments": arguments}}]
        });
        body.push_str(&chunk(&delta.to_string(), "null"));
        body.push_str(&chunk("{}", "\"tool_calls\""));
    } else {
        body.push_str(&chunk(
            "{\"role\":\"assistant\",\"content\":\"done\"}",
            "null",
        ));
        body.push_str(&chunk("{}", "\"stop\""));
    }
    body.push_str("data: {\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\",\"created\":1764455000,\"model\":\"bench\",\"choices\":[],\"usage\":{\"prompt_tokens\":100,\"completion_tokens\":20,\"total_tokens\":120}}\n\ndata: [DONE]\n\n");
    body
}

fn serve_connection(
    stream: TcpStream,
    me: &str,
    seen: &Mutex<Vec<Seen>>,
    steps: usize,
    output: usize,
) -> std::io::Result<()> {
    stream.set_nodelay(true)?;
    let mut writer = stream.try_clone()?;
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    let mut sink = vec![0u8; 64 * 1024];
    loop {
        // Headers.
        let mut length = 0usize;
        let mut any = false;
        loop {
            line.clear();
            if reader.read_line(&mut line)? == 0 {
                return Ok(());
            }
            if line == "\r\n" || line == "\n" {
                break;
            }
            any = true;
            if let Some((name, value)) = line.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        if !any {
            continue;
        }
        let mut left = length;
        while left > 0 {
            let take = left.min(sink.len());
            reader.read_exact(&mut sink[..take])?;
            left -= take;
        }
        let cpu = process_cpu_except(me);
        let n = {
            let mut seen = seen.lock().unwrap_or_else(|e| e.into_inner());
            seen.push(Seen { cpu, body: length });
            seen.len() - 1
        };
        let body = answer(n, steps, output);
        let response = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: keep-alive\r\n\r\n{body}",
            body.len()
        );
        writer.write_all(response.as_bytes())?;
    }
}

impl Server {
    fn start(steps: usize, output: usize) -> std::io::Result<Server> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let url = format!("http://{}/v1", listener.local_addr()?);
        let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
        let shared = Arc::clone(&seen);
        std::thread::spawn(move || {
            let me = thread_id().unwrap_or_default();
            for stream in listener.incoming().flatten() {
                // One connection at a time: the agent makes one call at a time.
                let _ = serve_connection(stream, &me, &shared, steps, output);
            }
        });
        Ok(Server { url, seen })
    }
}

/// One run's numbers.
struct Run {
    first: f64,
    last: f64,
    peak: usize,
    history: usize,
    outputs: usize,
}

fn mean_ms(cpu: &[u64]) -> f64 {
    cpu.iter().sum::<u64>() as f64 / cpu.len().max(1) as f64 / 1e6
}

async fn run_once(dir: &Path, steps: usize, output: usize, round: usize) -> Result<Run, String> {
    let server = Server::start(steps, output).map_err(|e| e.to_string())?;
    let store =
        SqliteStore::open(dir.join(format!("store-{round}.db"))).map_err(|e| e.to_string())?;
    let model = OpenAiCompatible::new("local", "bench", &server.url);
    let tools = agentgate_tools::builtin().map_err(|e| e.to_string())?;
    let agent = CodingAgent::builder(dir.join("project"))
        .app("agentgate-history-cost")
        .model(Arc::new(model))
        .tools(tools)
        .store(Arc::new(store))
        // As before the facade owned the builder: no remembered approvals,
        // no MCP servers, asks (there are none) rejected at once.
        .permissions(agentgate_permission::PermissionGate::new())
        .approver(Arc::new(agentgate_core::NonInteractive))
        .without_mcp()
        .build()
        .await
        .map_err(|e| e.to_string())?;
    let before = CountingAllocator::reset_peak();
    let result = agent
        .run("Print big.txt again and again.")
        .await
        .map_err(|e| e.to_string())?;
    let peak = CountingAllocator::peak().saturating_sub(before);
    if result.steps as usize != steps + 1 {
        return Err(format!(
            "the turn took {} steps, not {}",
            result.steps,
            steps + 1
        ));
    }
    let seen = server
        .seen
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    if seen.len() != steps + 1 {
        return Err(format!("{} requests, not {}", seen.len(), steps + 1));
    }
    // Step k (1-based): from request k to request k+1 (its answer decoded,
    // its command run and stored, the next request encoded and sent).
    let cpu: Vec<u64> = seen
        .windows(2)
        .map(|w| w[1].cpu.saturating_sub(w[0].cpu))
        .collect();
    let ten = cpu.len().min(10);
    let outputs = agent
        .engine()
        .store()
        .messages(&agent.session().id)
        .await
        .map_err(|e| e.to_string())?
        .iter()
        .flat_map(|m| m.tool_parts())
        .map(|t| agentgate_core::transcript::tool_result(&t.state).0.len())
        .sum();
    Ok(Run {
        first: mean_ms(&cpu[..ten]),
        last: mean_ms(&cpu[cpu.len() - ten..]),
        peak,
        history: seen.last().map(|s| s.body).unwrap_or(0),
        outputs,
    })
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let steps = usize_arg(&args, "--steps").unwrap_or(80);
    let output = usize_arg(&args, "--output").unwrap_or(52_000);
    let runs = usize_arg(&args, "--runs").unwrap_or(3);
    let dir: PathBuf = std::env::temp_dir().join(format!("history-cost-{}", std::process::id()));
    let project = dir.join("project");
    std::fs::create_dir_all(&project).map_err(|e| e.to_string())?;
    let line = "0123456789 abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456789\n";
    let big = line.repeat(output / line.len() + 1);
    std::fs::write(project.join("big.txt"), big).map_err(|e| e.to_string())?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    println!("history-cost: {steps} steps, {output}-byte command outputs, {runs} runs");
    println!(
        "run  first10 ms/step  last10 ms/step  ratio  peak heap MB  history MB  peak/history  tool outputs MB"
    );
    let mut ratios = Vec::new();
    let mut memory = Vec::new();
    for round in 0..runs {
        let run = runtime.block_on(run_once(&dir, steps, output, round));
        let run = match run {
            Ok(run) => run,
            Err(error) => {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(error);
            }
        };
        let ratio = run.last / run.first;
        let per_byte = run.peak as f64 / run.history.max(1) as f64;
        println!(
            "{round:>3}  {:>15.2}  {:>14.2}  {ratio:>5.2}  {:>12.1}  {:>10.2}  {per_byte:>12.2}  {:>15.2}",
            run.first,
            run.last,
            run.peak as f64 / 1e6,
            run.history as f64 / 1e6,
            run.outputs as f64 / 1e6,
        );
        ratios.push(ratio);
        memory.push(per_byte);
    }
    runtime.shutdown_timeout(Duration::from_secs(1));
    let _ = std::fs::remove_dir_all(&dir);
    println!(
        "median: last10/first10 CPU per step {:.2} (target <= 1.5), peak heap per byte of history {:.2} (target <= 4)",
        median(ratios),
        median(memory)
    );
    Ok(())
}
