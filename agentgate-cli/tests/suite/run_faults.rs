//! `agent run` against local servers that misbehave: a stalled stream
//! ends the run with exit status 1 and a message naming the timeout and
//! the setting that changes it; `--max-time` and `--max-retries` bound a
//! run; a misspelt provider option is warned about. The servers are raw
//! loopback sockets; the timeouts are made short through the config.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::run_cli::{Sandbox, text};

/// What the server answers every request with.
#[derive(Clone, Copy)]
enum Reply {
    /// A 200 stream with one text delta, then silence.
    StallAfterText,
    /// A 500.
    ServerError,
}

/// Serves `reply` to every connection; returns the base URL and the count
/// of requests.
async fn serve(reply: Reply) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let requests = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&requests);
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let counter = Arc::clone(&counter);
            tokio::spawn(async move {
                if read_request(&mut socket).await {
                    counter.fetch_add(1, Ordering::SeqCst);
                    answer(&mut socket, reply).await;
                }
            });
        }
    });
    (format!("http://{addr}/v1"), requests)
}

/// Reads a request's head and `content-length` body; false when the client
/// went away first.
async fn read_request(socket: &mut TcpStream) -> bool {
    let mut request = Vec::new();
    let mut buf = vec![0u8; 65536];
    loop {
        let Ok(read) = socket.read(&mut buf).await else {
            return false;
        };
        if read == 0 {
            return false;
        }
        request.extend_from_slice(&buf[..read]);
        let head = String::from_utf8_lossy(&request);
        if let Some(end) = head.find("\r\n\r\n") {
            let length = head[..end]
                .lines()
                .find_map(|line| {
                    let (name, value) = line.split_once(':')?;
                    name.eq_ignore_ascii_case("content-length")
                        .then(|| value.trim().parse::<usize>().ok())?
                })
                .unwrap_or(0);
            if request.len() >= end + 4 + length {
                return true;
            }
        }
    }
}

async fn answer(socket: &mut TcpStream, reply: Reply) {
    match reply {
        Reply::StallAfterText => {
            let event =
                "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"partial\"}}]}\n\n";
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n{:x}\r\n{event}\r\n",
                event.len()
            );
            let _ = socket.write_all(head.as_bytes()).await;
            let _ = socket.flush().await;
            // Silent until the client hangs up.
            let mut buf = [0u8; 1024];
            while matches!(socket.read(&mut buf).await, Ok(n) if n > 0) {}
        }
        Reply::ServerError => {
            let body = "upstream exploded";
            let head = format!(
                "HTTP/1.1 500 Internal Server Error\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = socket.write_all(head.as_bytes()).await;
            let _ = socket.flush().await;
        }
    }
}

fn config(sandbox: &Sandbox, base: &str, options: &str) {
    sandbox.config(&format!(
        r#"{{"model": "local/m", "provider": {{"local": {{"options": {{"baseURL": "{base}"{options}}}}}}}}}"#
    ));
}

#[tokio::test]
async fn a_stalled_stream_ends_the_run_naming_the_timeout() {
    let sandbox = Sandbox::new("stalled-stream");
    let (base, requests) = serve(Reply::StallAfterText).await;
    config(
        &sandbox,
        &base,
        r#", "chunkTimeout": 1000, "chunktimeout": 1000"#,
    );
    let start = Instant::now();
    let out = sandbox.agent(&["run", "say hi"], &[]).await;
    let took = start.elapsed();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "no data for 1 s from local (chunkTimeout); raise provider.local.options.chunkTimeout"
        ),
        "{stderr}"
    );
    // The misspelt option is not silently ignored.
    assert!(
        stderr.contains("provider.local.options.chunktimeout")
            && stderr.contains("did you mean \"chunkTimeout\""),
        "{stderr}"
    );
    // Text had reached the user: not retried.
    assert_eq!(requests.load(Ordering::SeqCst), 1);
    assert!(took < Duration::from_secs(20), "took {took:?}");
}

#[tokio::test]
async fn max_time_ends_a_run_that_would_wait_for_minutes() {
    let sandbox = Sandbox::new("max-time");
    let (base, _) = serve(Reply::StallAfterText).await;
    // The default chunk timeout is 5 minutes; the run's deadline is 1 s.
    config(&sandbox, &base, "");
    let start = Instant::now();
    let out = sandbox
        .agent(&["run", "--max-time", "1", "say hi"], &[])
        .await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("time limit of 1 s"), "{stderr}");
    assert!(stderr.contains("--max-time"), "{stderr}");
    assert!(start.elapsed() < Duration::from_secs(20));
}

#[tokio::test]
async fn max_retries_bounds_the_attempts_and_each_retry_is_announced() {
    let sandbox = Sandbox::new("max-retries");
    let (base, requests) = serve(Reply::ServerError).await;
    config(&sandbox, &base, "");
    let out = sandbox
        .agent(&["run", "--max-retries", "1", "say hi"], &[])
        .await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(requests.load(Ordering::SeqCst), 2, "{stderr}");
    assert!(
        stderr.contains("retrying in 2 s (attempt 2 of 2): provider error (HTTP 500)"),
        "{stderr}"
    );
    assert!(stderr.contains("gave up after 2 attempts"), "{stderr}");
}

#[tokio::test]
async fn a_failed_connection_is_reported_once_with_the_setting_to_check() {
    let sandbox = Sandbox::new("refused-connection");
    // A port nothing listens on: bind, note the address, close.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    config(
        &sandbox,
        &format!("http://{addr}/v1"),
        r#", "timeout": 5000"#,
    );
    let out = sandbox
        .agent(&["run", "--max-retries", "0", "say hi"], &[])
        .await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.matches("could not connect").count(), 1, "{stderr}");
    assert!(stderr.contains("provider.<id>.options.baseURL"), "{stderr}");
    assert!(
        stderr.contains("agent: the turn failed (the error above)"),
        "{stderr}"
    );
}

#[tokio::test]
async fn an_agents_unknown_model_is_explained_in_config_words() {
    let sandbox = Sandbox::new("agent-model-unknown");
    sandbox.config(r#"{"agent": {"build": {"model": "nope/x"}}}"#);
    let out = sandbox.agent(&["run", "say hi"], &[]).await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(r#"model "nope/x" is not available: unknown provider "nope""#),
        "{stderr}"
    );
    assert!(!stderr.contains("Builder"), "{stderr}");
}

#[tokio::test]
async fn an_unknown_session_is_named_with_where_to_find_the_real_ones() {
    let sandbox = Sandbox::new("unknown-session");
    let out = sandbox
        .agent(&["run", "--session", "ses_nope", "say hi"], &[])
        .await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--session ses_nope: no such session; `agent sessions list`"),
        "{stderr}"
    );
    assert_eq!(stderr.matches("ses_nope").count(), 1, "{stderr}");
}
