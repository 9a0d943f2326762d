//! A server that sends one event and then goes silent: the idle timeout
//! and cancellation must both end the stream promptly.

#![allow(clippy::expect_used)]

use std::time::Duration;

use agentgate_providers::OpenAiCompatible;
use agentgate_providers::core::{LanguageModel, ModelError, ModelRequest, StreamEvent};
use futures::StreamExt;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

/// Serves one connection: a 200 with one SSE event, then silence.
async fn stalling_server() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.expect("accept");
        let mut buf = vec![0u8; 65536];
        let _ = socket.read(&mut buf).await;
        let event = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n";
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n{:x}\r\n{event}\r\n",
            event.len()
        );
        socket.write_all(head.as_bytes()).await.expect("write");
        socket.flush().await.expect("flush");
        tokio::time::sleep(Duration::from_secs(60)).await;
    });
    format!("http://{addr}/v1")
}

#[tokio::test]
async fn idle_timeout_interrupts_a_silent_stream() {
    let base = stalling_server().await;
    let model = OpenAiCompatible::new("vllm", "m", base)
        .with_idle_timeout(Duration::from_millis(200))
        .with_http_client(super::common::http());
    let stream = model
        .stream(ModelRequest::default(), CancellationToken::new())
        .await
        .expect("call starts");
    let items: Vec<_> = tokio::time::timeout(Duration::from_secs(10), stream.collect::<Vec<_>>())
        .await
        .expect("the idle timeout ends the stream");
    assert!(matches!(items[0], Ok(StreamEvent::TextStart { .. })));
    assert!(matches!(items[1], Ok(StreamEvent::TextDelta { .. })));
    match &items[2] {
        Err(ModelError::TimedOut { message }) => {
            assert!(message.contains("(chunkTimeout)"), "{message}")
        }
        other => panic!("expected a chunk timeout, got {other:?}"),
    }
    assert_eq!(items.len(), 3);
}

#[tokio::test]
async fn cancelling_mid_stream_ends_it_with_cancelled() {
    let base = stalling_server().await;
    let model = OpenAiCompatible::new("vllm", "m", base).with_http_client(super::common::http());
    let cancel = CancellationToken::new();
    let mut stream = model
        .stream(ModelRequest::default(), cancel.clone())
        .await
        .expect("call starts");
    assert!(matches!(
        stream.next().await,
        Some(Ok(StreamEvent::TextStart { .. }))
    ));
    assert!(matches!(
        stream.next().await,
        Some(Ok(StreamEvent::TextDelta { .. }))
    ));
    cancel.cancel();
    let rest: Vec<_> = tokio::time::timeout(Duration::from_secs(10), stream.collect::<Vec<_>>())
        .await
        .expect("cancellation ends the stream");
    assert_eq!(rest, vec![Err(ModelError::Cancelled)]);
}
