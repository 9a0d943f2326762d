//! Stream decoding throughput per provider: a large
//! stream in each provider's recorded shape (the fixtures' field sets, ~8
//! MiB of text deltas), measured three ways on the same bytes:
//!
//! - `decode_scan/<provider>`: a plain byte scan counting newlines, the
//!   memory-bandwidth bound any parser is compared against;
//! - `decode_sse/<provider>`: `agentgate_providers::SseParser` alone (public),
//!   fed in 16 KiB chunks as a socket delivers them;
//! - `decode_client/<provider>`: the provider client end to end (HTTP over
//!   loopback from a local server, SSE, the provider's JSON decoder into
//!   `StreamEvent`s), since the decoders themselves are private.
//!
//! Throughput is in bytes of the stream; `benches/run-all.sh` prints the
//! ratios against the scan.

#![allow(missing_docs)]

use std::hint::black_box;
use std::sync::Arc;

use agentgate_core::{LanguageModel, ModelRequest};
use agentgate_providers::{Anthropic, Gemini, OpenAiCompatible, OpenAiResponses, SseParser};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use futures::StreamExt;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

const TARGET_BYTES: usize = 8 << 20;
const CHUNK: usize = 16 << 10;
const DELTA: &str = "fn main() { println!(\\\"hello, world\\\"); } // ok";

fn repeat(head: &str, event: &str, tail: &str) -> String {
    let mut body = String::with_capacity(TARGET_BYTES + 4096);
    body.push_str(head);
    while body.len() < TARGET_BYTES {
        body.push_str(event);
    }
    body.push_str(tail);
    body
}

fn openai_body() -> String {
    let chunk = |delta: &str, finish: &str| {
        format!(
            "data: {{\"id\":\"chatcmpl-Cq7fT2mZ0aXb\",\"object\":\"chat.completion.chunk\",\"created\":1764455000,\"model\":\"gpt-4.1-2025-04-14\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_b3f1157249\",\"choices\":[{{\"index\":0,\"delta\":{delta},\"logprobs\":null,\"finish_reason\":{finish}}}],\"usage\":null,\"obfuscation\":\"q3\"}}\n\n"
        )
    };
    repeat(
        &chunk("{\"role\":\"assistant\",\"content\":\"\"}", "null"),
        &chunk(&format!("{{\"content\":\"{DELTA}\"}}"), "null"),
        &(chunk("{}", "\"stop\"")
            + "data: {\"id\":\"chatcmpl-Cq7fT2mZ0aXb\",\"object\":\"chat.completion.chunk\",\"created\":1764455000,\"model\":\"gpt-4.1-2025-04-14\",\"choices\":[],\"usage\":{\"prompt_tokens\":812,\"completion_tokens\":58,\"total_tokens\":870}}\n\ndata: [DONE]\n\n"),
    )
}

fn anthropic_body() -> String {
    repeat(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_01XFDUDYJgAACzvnptvVoYEL\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5-20250929\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":24,\"output_tokens\":1}}}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
        &format!(
            "event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"text_delta\",\"text\":\"{DELTA}\"}}}}\n\n"
        ),
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\nevent: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":90}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
    )
}

fn gemini_body() -> String {
    let chunk = |finish: &str| {
        format!(
            "data: {{\"candidates\": [{{\"content\": {{\"parts\": [{{\"text\": \"{DELTA}\"}}],\"role\": \"model\"}}{finish},\"index\": 0}}],\"usageMetadata\": {{\"promptTokenCount\": 412,\"candidatesTokenCount\": 7,\"totalTokenCount\": 419}},\"modelVersion\": \"gemini-2.5-flash\",\"responseId\": \"qpc2afWVFJK4vr0Pq6WiyAU\"}}\r\n\r\n"
        )
    };
    repeat("", &chunk(""), &chunk(",\"finishReason\": \"STOP\""))
}

fn responses_body() -> String {
    repeat(
        "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"resp_0a1b2c3d4e5f\",\"object\":\"response\",\"status\":\"in_progress\",\"model\":\"gpt-5-2025-08-07\",\"output\":[]}}\n\nevent: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"sequence_number\":1,\"output_index\":0,\"item\":{\"id\":\"msg_0a1b2c3d4e5f03\",\"type\":\"message\",\"status\":\"in_progress\",\"content\":[],\"role\":\"assistant\"}}\n\n",
        &format!(
            "event: response.output_text.delta\ndata: {{\"type\":\"response.output_text.delta\",\"sequence_number\":2,\"item_id\":\"msg_0a1b2c3d4e5f03\",\"output_index\":0,\"content_index\":0,\"delta\":\"{DELTA}\",\"logprobs\":[],\"obfuscation\":\"Zr0k\"}}\n\n"
        ),
        "event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"sequence_number\":3,\"output_index\":0,\"item\":{\"id\":\"msg_0a1b2c3d4e5f03\",\"type\":\"message\",\"status\":\"completed\",\"content\":[],\"role\":\"assistant\"}}\n\nevent: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":4,\"response\":{\"id\":\"resp_0a1b2c3d4e5f\",\"object\":\"response\",\"status\":\"completed\",\"model\":\"gpt-5-2025-08-07\",\"output\":[],\"usage\":{\"input_tokens\":1520,\"output_tokens\":96,\"total_tokens\":1616}}}\n\n",
    )
}

/// Serves `body` to every request on a loopback port, from its own thread.
fn serve(body: Arc<String>) -> String {
    let listener =
        std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("bind: {e}"));
    let addr = listener
        .local_addr()
        .unwrap_or_else(|e| panic!("addr: {e}"));
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("server runtime: {e}"));
        runtime.block_on(async move {
            listener
                .set_nonblocking(true)
                .unwrap_or_else(|e| panic!("nonblocking: {e}"));
            let listener = tokio::net::TcpListener::from_std(listener)
                .unwrap_or_else(|e| panic!("listener: {e}"));
            loop {
                let Ok((mut socket, _)) = listener.accept().await else {
                    continue;
                };
                let body = Arc::clone(&body);
                tokio::spawn(async move {
                    let mut request = Vec::new();
                    let mut buf = vec![0u8; 16384];
                    loop {
                        let Ok(n) = socket.read(&mut buf).await else {
                            return;
                        };
                        if n == 0 {
                            return;
                        }
                        request.extend_from_slice(&buf[..n]);
                        let text = String::from_utf8_lossy(&request);
                        if let Some(end) = text.find("\r\n\r\n") {
                            let length = text[..end]
                                .lines()
                                .find_map(|l| {
                                    let (k, v) = l.split_once(':')?;
                                    k.eq_ignore_ascii_case("content-length")
                                        .then(|| v.trim().parse::<usize>().ok())?
                                })
                                .unwrap_or(0);
                            if request.len() >= end + 4 + length {
                                break;
                            }
                        }
                    }
                    let head = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                        body.len()
                    );
                    let _ = socket.write_all(head.as_bytes()).await;
                    let _ = socket.write_all(body.as_bytes()).await;
                    let _ = socket.shutdown().await;
                });
            }
        });
    });
    format!("http://{addr}")
}

fn client(name: &str, base: &str) -> Arc<dyn LanguageModel> {
    match name {
        "openai" => Arc::new(OpenAiCompatible::new(
            "openai",
            "gpt-4.1",
            format!("{base}/v1"),
        )),
        "anthropic" => {
            Arc::new(Anthropic::new("claude-sonnet-4-5", "k").with_base_url(format!("{base}/v1")))
        }
        "gemini" => {
            Arc::new(Gemini::new("gemini-2.5-flash", "k").with_base_url(format!("{base}/v1beta")))
        }
        _ => Arc::new(OpenAiResponses::new("gpt-5", "k").with_base_url(format!("{base}/v1"))),
    }
}

fn decode(c: &mut Criterion) {
    let bodies = [
        ("openai", openai_body()),
        ("anthropic", anthropic_body()),
        ("gemini", gemini_body()),
        ("responses", responses_body()),
    ];
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    for (name, body) in bodies {
        let bytes = body.len() as u64;

        let mut group = c.benchmark_group("decode_scan");
        group.throughput(Throughput::Bytes(bytes));
        group.sample_size(20);
        group.bench_function(name, |b| {
            b.iter(|| {
                black_box(body.as_bytes())
                    .iter()
                    .filter(|&&byte| byte == b'\n')
                    .count()
            })
        });
        group.finish();

        let mut group = c.benchmark_group("decode_sse");
        group.throughput(Throughput::Bytes(bytes));
        group.sample_size(20);
        group.bench_function(name, |b| {
            b.iter(|| {
                let mut parser = SseParser::new();
                let mut events = 0usize;
                for chunk in black_box(body.as_bytes()).chunks(CHUNK) {
                    events += parser.push(chunk).len();
                }
                events
            })
        });
        group.finish();

        let base = serve(Arc::new(body.clone()));
        let model = client(name, &base);
        // Check once that the whole stream decodes to a finish.
        let check = runtime.block_on(async {
            let stream = model
                .stream(ModelRequest::default(), CancellationToken::new())
                .await
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            stream.collect::<Vec<_>>().await
        });
        let last = check.last().map(|item| format!("{item:?}"));
        assert!(
            last.as_deref().is_some_and(|l| l.contains("Finish")),
            "{name}: the stream does not decode to a finish: {last:?} ({} items)",
            check.len()
        );
        let mut group = c.benchmark_group("decode_client");
        group.throughput(Throughput::Bytes(bytes));
        group.sample_size(10);
        group.bench_function(name, |b| {
            b.iter(|| {
                runtime.block_on(async {
                    let stream = model
                        .stream(ModelRequest::default(), CancellationToken::new())
                        .await
                        .unwrap_or_else(|e| panic!("{name}: {e}"));
                    stream.fold(0usize, |n, _| async move { n + 1 }).await
                })
            })
        });
        group.finish();
    }
}

criterion_group!(benches, decode);
criterion_main!(benches);
