//! `tui-frames`: the frame budget of `agent tui` (issue 47), measured on
//! the real release binary in a pseudo-terminal of 200×50 that this
//! program opens itself (libc `openpty`, `TIOCSWINSZ`), against a loopback
//! OpenAI-compatible mock model that streams long markdown answers (with
//! lists and highlighted code) until the transcript holds at least
//! `--lines` lines.
//!
//! - **Keystroke to screen**: one printable key written to the pty master,
//!   timed until its echo shows in the bytes read back (a thread reads the
//!   master continuously); then a Backspace, untimed. The same against
//!   `cat` on a raw pty of the same size is the floor of the pty and of a
//!   process wake-up.
//! - **Scrolling**: PgUp, then PgDn, each `--pages` times over the long
//!   transcript, timed until the frame ends (ratatui ends every frame by
//!   showing or hiding the cursor, `ESC [ ? 25 h|l`).
//! - **Idle CPU**: utime + stime of the agent process (`/proc/PID/stat`)
//!   over `--idle` seconds with nothing happening, as % of one core, with
//!   the precise `schedstat` time and the context switches of its threads.
//!
//! Prints a markdown table. Usage: `tui-frames --help`.

#![allow(unsafe_code)]

use std::error::Error;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

type Res<T> = Result<T, Box<dyn Error>>;

/// The screen's size.
const COLS: u16 = 200;
const ROWS: u16 = 50;
/// A 60 Hz frame.
const BUDGET: Duration = Duration::from_millis(16);
/// The bytes every frame of ratatui ends with (cursor shown or hidden).
const FRAME_END: &[u8] = b"\x1b[?25";

const HELP: &str = "tui-frames: the frame budget of `agent tui` in a pty (200x50)

usage: tui-frames [--agent PATH] [--keys N] [--pages N] [--lines N] [--turns N]
                  [--idle SECONDS] [--timeout SECONDS]

  --agent PATH      the agent binary (default target/release/agent)
  --keys N          keystrokes timed, in the agent and in cat (default 200)
  --pages N         PgUp presses, then as many PgDn (default 100)
  --lines N         lines of model text in the transcript (default 10000)
  --turns N         prompts the lines are split over (default 10)
  --idle SECONDS    the idle CPU window (default 5)
  --timeout SECONDS the longest wait for any one answer or frame (default 120)

Build first: cargo build --release -p agentgate-cli -p agentgate-benches --bin agent --bin tui-frames";

/// The command line.
#[derive(Debug, Clone)]
struct Options {
    agent: PathBuf,
    keys: usize,
    pages: usize,
    lines: usize,
    turns: usize,
    idle: u64,
    timeout: Duration,
}

/// The options, or `None` after printing the help.
fn options() -> Res<Option<Options>> {
    let mut o = Options {
        agent: PathBuf::from("target/release/agent"),
        keys: 200,
        pages: 100,
        lines: 10_000,
        turns: 10,
        idle: 5,
        timeout: Duration::from_secs(120),
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        if flag == "--help" || flag == "-h" {
            println!("{HELP}");
            return Ok(None);
        }
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        let number = || value.parse::<usize>().map_err(|e| format!("{flag}: {e}"));
        match flag.as_str() {
            "--agent" => o.agent = PathBuf::from(&value),
            "--keys" => o.keys = number()?,
            "--pages" => o.pages = number()?,
            "--lines" => o.lines = number()?,
            "--turns" => o.turns = number()?.max(1),
            "--idle" => o.idle = number()? as u64,
            "--timeout" => o.timeout = Duration::from_secs(number()? as u64),
            _ => return Err(format!("unknown flag {flag} (see --help)").into()),
        }
    }
    Ok(Some(o))
}

// ---------------------------------------------------------------------
// The pseudo-terminal and what is read from it.

/// Everything read from a pty master, with when each read returned.
#[derive(Default)]
struct Screen {
    bytes: Vec<u8>,
    /// (end offset in `bytes`, when that read returned)
    reads: Vec<(usize, Instant)>,
    closed: bool,
}

/// A child process on the slave side of a pty; its output is read on a
/// thread into `screen`.
struct Pty {
    master: File,
    screen: Arc<(Mutex<Screen>, Condvar)>,
    child: Child,
}

/// A pty of COLS×ROWS: (master, slave), the slave raw if `raw`.
fn open_pty(raw: bool) -> Res<(OwnedFd, OwnedFd)> {
    let (mut master, mut slave) = (-1, -1);
    let size = libc::winsize {
        ws_row: ROWS,
        ws_col: COLS,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: out-pointers to two ints; null name and termios are allowed.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &size,
        )
    };
    if rc != 0 {
        return Err(format!("openpty: {}", std::io::Error::last_os_error()).into());
    }
    // SAFETY: openpty returned two open descriptors this function owns.
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    // SAFETY: TIOCSWINSZ reads a winsize from the pointer.
    if unsafe { libc::ioctl(master.as_raw_fd(), libc::TIOCSWINSZ, &size) } != 0 {
        return Err(format!("TIOCSWINSZ: {}", std::io::Error::last_os_error()).into());
    }
    if raw {
        // SAFETY: a zeroed termios filled by tcgetattr, then made raw.
        unsafe {
            let mut t: libc::termios = std::mem::zeroed();
            libc::tcgetattr(slave.as_raw_fd(), &mut t);
            libc::cfmakeraw(&mut t);
            libc::tcsetattr(slave.as_raw_fd(), libc::TCSANOW, &t);
        }
    }
    Ok((master, slave))
}

/// Reads `master` until it closes, appending to `screen`.
fn read_master(mut master: File, screen: Arc<(Mutex<Screen>, Condvar)>) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = master.read(&mut buf).unwrap_or(0);
        let now = Instant::now();
        let (lock, ready) = &*screen;
        let mut s = lock.lock().unwrap_or_else(PoisonError::into_inner);
        if n == 0 {
            s.closed = true;
            ready.notify_all();
            return;
        }
        s.bytes.extend_from_slice(&buf[..n]);
        let end = s.bytes.len();
        s.reads.push((end, now));
        ready.notify_all();
    }
}

impl Pty {
    /// Starts `command` on a new pty (its controlling terminal), stderr
    /// to `stderr`.
    fn spawn(mut command: Command, raw: bool, stderr: Stdio) -> Res<Pty> {
        let (master, slave) = open_pty(raw)?;
        command
            .stdin(Stdio::from(slave.try_clone()?))
            .stdout(Stdio::from(slave.try_clone()?))
            .stderr(stderr);
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            command.pre_exec(|| {
                if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command.spawn()?;
        drop(slave);
        let master = File::from(master);
        let screen: Arc<(Mutex<Screen>, Condvar)> = Arc::default();
        let reader = master.try_clone()?;
        let shared = Arc::clone(&screen);
        std::thread::spawn(move || read_master(reader, shared));
        Ok(Pty {
            master,
            screen,
            child,
        })
    }

    /// How many bytes were read so far.
    fn offset(&self) -> usize {
        let s = self.screen.0.lock().unwrap_or_else(PoisonError::into_inner);
        s.bytes.len()
    }

    fn write(&mut self, bytes: &[u8]) -> Res<Instant> {
        let at = Instant::now();
        self.master.write_all(bytes)?;
        Ok(at)
    }

    /// When `needle` was first read after offset `from` (the time its
    /// last byte arrived), and the offset after it; waits up to `timeout`.
    fn wait_for(&self, needle: &[u8], from: usize, timeout: Duration) -> Res<(Instant, usize)> {
        let deadline = Instant::now() + timeout;
        let (lock, ready) = &*self.screen;
        let mut s = lock.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            let start = from.min(s.bytes.len());
            if let Some(at) = find(&s.bytes[start..], needle) {
                let end = start + at + needle.len();
                let read = s.reads.iter().find(|(e, _)| *e >= end);
                let when = read.map(|(_, t)| *t).ok_or("no read covers the match")?;
                return Ok((when, end));
            }
            let now = Instant::now();
            if s.closed || now >= deadline {
                let tail = String::from_utf8_lossy(&s.bytes[s.bytes.len().saturating_sub(600)..]);
                return Err(format!(
                    "waited for {needle:?} (closed: {}); last output: {tail:?}",
                    s.closed
                )
                .into());
            }
            s = ready
                .wait_timeout(s, deadline - now)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// When the last read returned.
    fn last_read(&self) -> Option<Instant> {
        let s = self.screen.0.lock().unwrap_or_else(PoisonError::into_inner);
        s.reads.last().map(|(_, t)| *t)
    }

    /// Waits until nothing has been read for `quiet` (at most `timeout`).
    fn settle(&self, quiet: Duration, timeout: Duration) -> Res<()> {
        let deadline = Instant::now() + timeout;
        loop {
            let last = {
                let s = self.screen.0.lock().unwrap_or_else(PoisonError::into_inner);
                s.reads.last().map(|(_, t)| *t)
            };
            let since = last.map_or(quiet, |t| t.elapsed());
            if since >= quiet {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err("the screen never went quiet".into());
            }
            std::thread::sleep(quiet - since);
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

impl Drop for Pty {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ---------------------------------------------------------------------
// The mock model.

fn chunk(delta: &serde_json::Value, finish: &str) -> String {
    format!(
        "data: {{\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\",\"created\":1764455000,\"model\":\"bench\",\"choices\":[{{\"index\":0,\"delta\":{delta},\"finish_reason\":{finish}}}]}}\n\n"
    )
}

/// Markdown of at least `lines` lines (headings, paragraphs, lists, Rust
/// code), answer `turn`.
fn markdown(turn: usize, lines: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut n = 0;
    while out.len() < lines {
        out.push(format!("### Section {turn}.{n}"));
        out.push(String::new());
        out.push(format!(
            "Paragraph {n} of answer {turn}: some **bold** text, `inline code` and a [link](https://example.com/{n})."
        ));
        out.push(String::new());
        out.push(format!("- item one of {n}"));
        out.push(format!("- item two with `code` {n}"));
        out.push(String::new());
        out.push("```rust".into());
        out.push(format!("fn section_{n}(x: u64) -> u64 {{"));
        out.push(format!("    let y = x * {n} + 1; // a comment"));
        out.push("    y.wrapping_mul(3)".into());
        out.push("}".into());
        out.push("```".into());
        out.push(String::new());
        n += 1;
    }
    out
}

/// The SSE body of a long answer streamed in deltas of about 20 lines.
fn long_answer(turn: usize, lines: usize) -> String {
    let mut body = String::new();
    for (i, part) in markdown(turn, lines).chunks(20).enumerate() {
        let mut text = part.join("\n");
        text.push('\n');
        let delta = if i == 0 {
            serde_json::json!({"role": "assistant", "content": text})
        } else {
            serde_json::json!({"content": text})
        };
        body.push_str(&chunk(&delta, "null"));
    }
    body.push_str(&chunk(&serde_json::json!({}), "\"stop\""));
    body.push_str("data: {\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\",\"created\":1764455000,\"model\":\"bench\",\"choices\":[],\"usage\":{\"prompt_tokens\":100,\"completion_tokens\":20,\"total_tokens\":120}}\n\ndata: [DONE]\n\n");
    body
}

/// One HTTP request: (request line, body).
fn read_request(reader: &mut BufReader<TcpStream>) -> Res<Option<(String, Vec<u8>)>> {
    let mut first = String::new();
    if reader.read_line(&mut first)? == 0 {
        return Ok(None);
    }
    let mut length = 0usize;
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            return Ok(None);
        }
        if line == "\r\n" || line == "\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse()?;
        }
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body)?;
    Ok(Some((first, body)))
}

/// Answers requests on `stream`: a chat request with tools (a turn) gets
/// the next long answer, any other chat request a short one.
fn serve(stream: TcpStream, turns: &AtomicUsize, lines: usize) -> Res<()> {
    stream.set_nodelay(true)?;
    let mut writer = stream.try_clone()?;
    let mut reader = BufReader::new(stream);
    while let Some((first, body)) = read_request(&mut reader)? {
        let response = if !first.contains("/chat/completions") {
            "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n".to_string()
        } else {
            let sse = if find(&body, b"\"tools\"").is_some() {
                long_answer(turns.load(Ordering::SeqCst), lines)
            } else {
                let delta = serde_json::json!({"role": "assistant", "content": "Bench"});
                chunk(&delta, "\"stop\"") + "data: [DONE]\n\n"
            };
            format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: keep-alive\r\n\r\n{sse}",
                sse.len()
            )
        };
        writer.write_all(response.as_bytes())?;
        if find(&body, b"\"tools\"").is_some() {
            turns.fetch_add(1, Ordering::SeqCst);
        }
    }
    Ok(())
}

/// Starts the mock; its base URL and the count of turns answered.
fn start_mock(lines: usize) -> Res<(String, Arc<AtomicUsize>)> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let url = format!("http://{}/v1", listener.local_addr()?);
    let turns = Arc::new(AtomicUsize::new(0));
    let shared = Arc::clone(&turns);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let turns = Arc::clone(&shared);
            std::thread::spawn(move || {
                if let Err(e) = serve(stream, &turns, lines) {
                    eprintln!("mock: {e}");
                }
            });
        }
    });
    Ok((url, turns))
}

// ---------------------------------------------------------------------
// The measures.

/// Milliseconds of `d`.
fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// (p50, p99, max) of `times`, in ms.
fn percentiles(times: &[Duration]) -> (f64, f64, f64) {
    let mut sorted = times.to_vec();
    sorted.sort();
    let at = |q: f64| {
        let i = ((sorted.len() as f64 - 1.0) * q).round() as usize;
        sorted.get(i).map_or(f64::NAN, |d| ms(*d))
    };
    (at(0.5), at(0.99), at(1.0))
}

/// Types `keys` x's, each timed until its echo, each followed by a
/// Backspace (untimed, its frame waited for when `frames`).
fn keystrokes(pty: &mut Pty, keys: usize, frames: bool, timeout: Duration) -> Res<Vec<Duration>> {
    let mut times = Vec::with_capacity(keys);
    for _ in 0..keys {
        let from = pty.offset();
        let sent = pty.write(b"x")?;
        let (seen, end) = pty.wait_for(b"x", from, timeout)?;
        times.push(seen - sent);
        if frames {
            pty.wait_for(FRAME_END, end, timeout)?;
        }
        let from = pty.offset();
        pty.write(b"\x7f")?;
        if frames {
            pty.wait_for(FRAME_END, from, timeout)?;
        } else {
            pty.wait_for(b"\x7f", from, timeout)?;
        }
    }
    Ok(times)
}

/// Presses `key` `count` times, each timed until its frame ends.
fn pages(pty: &mut Pty, key: &[u8], count: usize, timeout: Duration) -> Res<Vec<Duration>> {
    let mut times = Vec::with_capacity(count);
    for _ in 0..count {
        let from = pty.offset();
        let sent = pty.write(key)?;
        let (seen, _) = pty.wait_for(FRAME_END, from, timeout)?;
        times.push(seen - sent);
    }
    Ok(times)
}

/// (utime + stime in clock ticks, schedstat ns over threads, context
/// switches over threads) of process `pid`.
fn cpu_of(pid: u32) -> Res<(u64, u64, u64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // Fields after the command's closing parenthesis: state is field 3,
    // utime 14 and stime 15.
    let rest = stat.rsplit_once(')').ok_or("bad stat")?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = fields[11].parse::<u64>()? + fields[12].parse::<u64>()?;
    let (mut ns, mut switches) = (0u64, 0u64);
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))? {
        let dir = task?.path();
        let sched = std::fs::read_to_string(dir.join("schedstat")).unwrap_or_default();
        ns += sched
            .split_whitespace()
            .next()
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0);
        let status = std::fs::read_to_string(dir.join("status")).unwrap_or_default();
        for line in status.lines() {
            if line.contains("ctxt_switches:") {
                switches += line
                    .split_whitespace()
                    .last()
                    .and_then(|v| v.parse::<u64>().ok())
                    .unwrap_or(0);
            }
        }
    }
    Ok((ticks, ns, switches))
}

/// Idle CPU of `pid` over `secs`: (% of a core by stat, % by
/// schedstat, context switches per second).
fn idle_cpu(pid: u32, secs: u64) -> Res<(f64, f64, f64)> {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let before = cpu_of(pid)?;
    let started = Instant::now();
    std::thread::sleep(Duration::from_secs(secs));
    let after = cpu_of(pid)?;
    let wall = started.elapsed().as_secs_f64();
    let by_stat = (after.0 - before.0) as f64 / hz / wall * 100.0;
    let by_sched = (after.1 - before.1) as f64 / 1e9 / wall * 100.0;
    let switches = (after.2 - before.2) as f64 / wall;
    Ok((by_stat, by_sched, switches))
}

// ---------------------------------------------------------------------
// The agent's sandbox and the run.

/// A fresh project, home and XDG directories under a temporary root,
/// the project's config pointing the `local` provider at `url`.
fn sandbox(url: &str) -> Res<PathBuf> {
    let root = std::env::temp_dir().join(format!("tui-frames-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let project = root.join("project");
    for dir in ["project", "home", "data", "config", "state", "cache"] {
        std::fs::create_dir_all(root.join(dir))?;
    }
    std::fs::write(project.join("README.md"), "# Bench\n")?;
    let config = serde_json::json!({
        "model": "local/bench",
        "provider": {"local": {"options": {"baseURL": url}}},
    });
    std::fs::write(project.join("opencode.json"), config.to_string())?;
    Ok(root)
}

/// `agent tui ARGS` in the sandbox `root`, in a fresh pty.
fn spawn_agent(agent: &Path, root: &Path, args: &[&str]) -> Res<Pty> {
    let mut command = Command::new(agent);
    command
        .arg("tui")
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", root.join("home"))
        .env("XDG_DATA_HOME", root.join("data"))
        .env("XDG_CONFIG_HOME", root.join("config"))
        .env("XDG_STATE_HOME", root.join("state"))
        .env("XDG_CACHE_HOME", root.join("cache"))
        .env("TERM", "xterm-256color")
        .current_dir(root.join("project"));
    let stderr = File::create(root.join("stderr"))?;
    Pty::spawn(command, false, Stdio::from(stderr))
}

/// Sends `turns` prompts, each waited for until the mock answered it and
/// the screen went quiet (no spinner: the turn is over); the seconds from
/// each Enter to the last output of its turn, summed.
fn fill(pty: &mut Pty, turns: &AtomicUsize, o: &Options) -> Res<f64> {
    let mut busy = 0.0;
    for turn in 0..o.turns {
        pty.write(format!("answer {turn}").as_bytes())?;
        pty.settle(Duration::from_millis(100), o.timeout)?;
        let sent = pty.write(b"\r")?;
        let deadline = Instant::now() + o.timeout;
        while turns.load(Ordering::SeqCst) <= turn {
            if Instant::now() > deadline {
                return Err(format!("the model never saw prompt {turn}").into());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        // The spinner redraws every 120 ms while the turn runs.
        pty.settle(Duration::from_millis(800), o.timeout)?;
        busy += pty.last_read().map_or(0.0, |t| (t - sent).as_secs_f64());
    }
    Ok(busy)
}

/// Everything measured in one run.
struct Measures {
    cat: Vec<Duration>,
    agent: Vec<Duration>,
    up: Vec<Duration>,
    down: Vec<Duration>,
    fill_s: f64,
    idle: (f64, f64, f64),
    lines: usize,
    /// The same session reopened with `--continue`: spawn to first frame,
    /// then PgUp and PgDn over entries never drawn before.
    first_frame: Duration,
    cold_up: Vec<Duration>,
    cold_down: Vec<Duration>,
}

/// Waits for the first frame of `pty`; the stderr in the error.
fn first_frame(pty: &Pty, root: &Path, timeout: Duration) -> Res<Instant> {
    match pty.wait_for(FRAME_END, 0, timeout) {
        Ok((at, _)) => Ok(at),
        Err(e) => {
            let stderr = std::fs::read_to_string(root.join("stderr")).unwrap_or_default();
            Err(format!("agent tui drew nothing: {e}; stderr: {stderr}").into())
        }
    }
}

/// Ctrl-D on the empty editor, then waits (10 s at most) for the exit.
fn quit(mut pty: Pty) -> Res<()> {
    pty.write(b"\x04")?;
    let deadline = Instant::now() + Duration::from_secs(10);
    while pty.child.try_wait()?.is_none() {
        if Instant::now() > deadline {
            return Err("agent tui did not quit on Ctrl-D".into());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

/// Runs the agent's measures; the caller has measured `cat`.
fn measure_agent(o: &Options, cat: Vec<Duration>) -> Res<Measures> {
    let per_turn = o.lines.div_ceil(o.turns);
    let (url, turns) = start_mock(per_turn)?;
    let root = sandbox(&url)?;
    let mut pty = spawn_agent(&o.agent, &root, &[])?;
    first_frame(&pty, &root, o.timeout)?;
    pty.settle(Duration::from_millis(300), o.timeout)?;
    let fill_s = fill(&mut pty, &turns, o)?;
    // The answers are on screen, and PgUp scrolls them.
    pty.wait_for(format!("Section {}.", o.turns - 1).as_bytes(), 0, o.timeout)?;
    let agent = keystrokes(&mut pty, o.keys, true, o.timeout)?;
    let from = pty.offset();
    let up = pages(&mut pty, b"\x1b[5~", o.pages, o.timeout)?;
    pty.wait_for(b"more lines (PgDn)", from, o.timeout)?;
    let down = pages(&mut pty, b"\x1b[6~", o.pages, o.timeout)?;
    pty.settle(Duration::from_millis(500), o.timeout)?;
    let idle = idle_cpu(pty.child.id(), o.idle)?;
    quit(pty)?;
    let mut pty = spawn_agent(&o.agent, &root, &["--continue"])?;
    let spawned = Instant::now();
    let first_frame = first_frame(&pty, &root, o.timeout)? - spawned;
    pty.settle(Duration::from_millis(300), o.timeout)?;
    let cold_up = pages(&mut pty, b"\x1b[5~", o.pages, o.timeout)?;
    let cold_down = pages(&mut pty, b"\x1b[6~", o.pages, o.timeout)?;
    quit(pty)?;
    let _ = std::fs::remove_dir_all(&root);
    Ok(Measures {
        cat,
        agent,
        up,
        down,
        fill_s,
        idle,
        lines: markdown(0, per_turn).len() * o.turns,
        first_frame,
        cold_up,
        cold_down,
    })
}

/// `keys` keystrokes echoed by `cat` on a raw pty of the same size.
fn measure_cat(o: &Options) -> Res<Vec<Duration>> {
    let mut pty = Pty::spawn(Command::new("cat"), true, Stdio::null())?;
    std::thread::sleep(Duration::from_millis(100));
    keystrokes(&mut pty, o.keys, false, o.timeout)
}

/// A table row: the name, count, p50, p99, max and the frames over budget.
fn row(name: &str, times: &[Duration]) -> String {
    let (p50, p99, max) = percentiles(times);
    let over = times.iter().filter(|t| **t > BUDGET).count();
    format!(
        "| {name} | {} | {p50:.2} | {p99:.2} | {max:.2} | {over} |",
        times.len()
    )
}

fn report(o: &Options, m: &Measures) {
    let (agent50, agent99, _) = percentiles(&m.agent);
    let (cat50, cat99, _) = percentiles(&m.cat);
    println!("# tui-frames: `agent tui` in a {COLS}×{ROWS} pty\n");
    println!(
        "Binary `{}`; transcript of {} lines of model markdown (with lists and Rust code) over {} turns, streamed by a loopback mock (Enter to the last output of each turn, summed: {:.2} s).\n",
        o.agent.display(),
        m.lines,
        o.turns,
        m.fill_s
    );
    println!("| measure | n | p50 ms | p99 ms | max ms | over 16 ms |");
    println!("| --- | --- | --- | --- | --- | --- |");
    println!(
        "{}",
        row("keystroke to echo: `cat` (raw pty, the floor)", &m.cat)
    );
    println!("{}", row("keystroke to echo: `agent tui`", &m.agent));
    println!("{}", row("PgUp to end of frame", &m.up));
    println!("{}", row("PgDn to end of frame", &m.down));
    println!(
        "{}",
        row("PgUp, reopened with `--continue` (cold)", &m.cold_up)
    );
    println!("{}", row("PgDn, reopened with `--continue`", &m.cold_down));
    println!(
        "\nKeystroke ratio agent / cat: p50 {:.1}×, p99 {:.1}×.\n",
        agent50 / cat50,
        agent99 / cat99
    );
    println!(
        "Reopened with `--continue`: spawn to first frame {:.1} ms (start-up, the session read, the last screen drawn cold).\n",
        ms(m.first_frame)
    );
    let (stat, sched, switches) = m.idle;
    println!(
        "Idle CPU over {} s: {stat:.2}% of one core by utime+stime (`/proc/PID/stat`, {} Hz ticks), {sched:.3}% by `schedstat`; {switches:.1} context switches/s over its threads.",
        o.idle,
        // SAFETY: sysconf has no preconditions.
        unsafe { libc::sysconf(libc::_SC_CLK_TCK) }
    );
    let budget = agent99 <= ms(BUDGET)
        && [&m.up, &m.down, &m.cold_up, &m.cold_down]
            .iter()
            .all(|times| times.iter().all(|t| *t <= BUDGET))
        && stat < 1.0;
    println!(
        "\nBudget (keystroke p99 ≤ 16 ms, no scroll frame over 16 ms, idle ~0): {}.",
        if budget { "met" } else { "NOT met" }
    );
}

fn main() -> Res<()> {
    let Some(o) = options()? else {
        return Ok(());
    };
    if !o.agent.exists() {
        return Err(format!("no agent binary at {} (see --help)", o.agent.display()).into());
    }
    let cat = measure_cat(&o)?;
    let m = measure_agent(&o, cat)?;
    report(&o, &m);
    Ok(())
}
