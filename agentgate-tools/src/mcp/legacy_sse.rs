//! [`LegacySseTransport`]: the HTTP+SSE transport of MCP's 2024-11-05
//! revision, which opencode falls back to when streamable HTTP fails and
//! which rmcp no longer ships. The client opens `GET <url>` as a
//! server-sent-event stream; the first `endpoint` event names the URL to
//! POST messages to; every `message` event carries one JSON-RPC message.

use std::sync::Arc;

use futures::StreamExt;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap};
use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

/// A failure of the legacy SSE transport.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct SseError(String);

/// A connected legacy SSE session.
pub(crate) struct LegacySseTransport {
    client: reqwest::Client,
    endpoint: Arc<str>,
    headers: HeaderMap,
    messages: mpsc::Receiver<RxJsonRpcMessage<RoleClient>>,
    reader: JoinHandle<()>,
}

impl Drop for LegacySseTransport {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

impl LegacySseTransport {
    /// Opens the event stream at `url` and waits for its `endpoint` event.
    pub(crate) async fn connect(url: &str, headers: HeaderMap) -> Result<Self, String> {
        let base = reqwest::Url::parse(url).map_err(|e| format!("invalid url {url:?}: {e}"))?;
        let client = reqwest::Client::new();
        let response = client
            .get(base.clone())
            .headers(headers.clone())
            .header(ACCEPT, "text/event-stream")
            .send()
            .await
            .map_err(|e| format!("GET {url}: {e}"))?;
        let status = response.status();
        if !status.is_success() {
            return Err(format!("GET {url} answered {status}"));
        }
        let (endpoint_tx, endpoint_rx) = oneshot::channel();
        let (messages_tx, messages) = mpsc::channel(64);
        let reader = tokio::spawn(read_events(response, endpoint_tx, messages_tx));
        let endpoint = match endpoint_rx.await {
            Ok(endpoint) => endpoint,
            Err(_) => {
                reader.abort();
                return Err(format!(
                    "GET {url}: the event stream ended before its `endpoint` event"
                ));
            }
        };
        let endpoint = base
            .join(&endpoint)
            .map_err(|e| format!("invalid endpoint {endpoint:?}: {e}"))?;
        // The configured headers (a bearer token) go to the server's own
        // origin only.
        if endpoint.origin() != base.origin() {
            reader.abort();
            return Err(format!(
                "the endpoint {endpoint} is not on the origin of {url}: refused"
            ));
        }
        Ok(LegacySseTransport {
            client,
            endpoint: endpoint.as_str().into(),
            headers,
            messages,
            reader,
        })
    }
}

impl Transport<RoleClient> for LegacySseTransport {
    type Error = SseError;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let client = self.client.clone();
        let endpoint = Arc::clone(&self.endpoint);
        let headers = self.headers.clone();
        async move {
            let body = serde_json::to_vec(&item).map_err(|e| SseError(e.to_string()))?;
            let response = client
                .post(&*endpoint)
                .headers(headers)
                .header(CONTENT_TYPE, "application/json")
                .body(body)
                .send()
                .await
                .map_err(|e| SseError(format!("POST {endpoint}: {e}")))?;
            let status = response.status();
            if status.is_success() {
                Ok(())
            } else {
                Err(SseError(format!("POST {endpoint} answered {status}")))
            }
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.messages.recv()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.reader.abort();
        Ok(())
    }
}

/// Reads the event stream: the first `endpoint` event goes to `endpoint`,
/// `message` events are decoded and forwarded; undecodable messages are
/// skipped. Ends when the stream ends or the receiver is gone.
async fn read_events(
    response: reqwest::Response,
    endpoint: oneshot::Sender<String>,
    messages: mpsc::Sender<RxJsonRpcMessage<RoleClient>>,
) {
    let mut endpoint = Some(endpoint);
    let mut parser = EventParser::default();
    let mut body = response.bytes_stream();
    while let Some(Ok(chunk)) = body.next().await {
        for (event, data) in parser.feed(&chunk) {
            match event.as_str() {
                "endpoint" => {
                    if let Some(sender) = endpoint.take() {
                        let _ = sender.send(data);
                    }
                }
                "message" => {
                    if let Ok(message) = serde_json::from_str(&data)
                        && messages.send(message).await.is_err()
                    {
                        return;
                    }
                }
                _ => {}
            }
        }
    }
}

/// A server-sent-events parser: `(event, data)` per dispatched event.
#[derive(Default)]
struct EventParser {
    pending: Vec<u8>,
    event: String,
    data: Vec<String>,
}

impl EventParser {
    fn feed(&mut self, bytes: &[u8]) -> Vec<(String, String)> {
        self.pending.extend_from_slice(bytes);
        let mut events = Vec::new();
        while let Some(end) = self.pending.iter().position(|&b| b == b'\n') {
            let raw: Vec<u8> = self.pending.drain(..=end).collect();
            let line = String::from_utf8_lossy(&raw);
            let line = line.trim_end_matches(['\n', '\r']);
            if line.is_empty() {
                if !self.data.is_empty() {
                    let event = if self.event.is_empty() {
                        "message".to_string()
                    } else {
                        std::mem::take(&mut self.event)
                    };
                    events.push((event, self.data.join("\n")));
                }
                self.event.clear();
                self.data.clear();
                continue;
            }
            if line.starts_with(':') {
                continue;
            }
            let (field, value) = match line.split_once(':') {
                Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
                None => (line, ""),
            };
            match field {
                "event" => self.event = value.to_string(),
                "data" => self.data.push(value.to_string()),
                _ => {}
            }
        }
        events
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_split_across_chunks_and_lines() {
        let mut parser = EventParser::default();
        assert!(
            parser
                .feed(b"event: endpoint\r\ndata: /message?sessionId=1")
                .is_empty()
        );
        assert_eq!(
            parser.feed(b"\r\n\r\n: comment\n\ndata: {\"a\":\ndata: 1}\n\n"),
            [
                ("endpoint".to_string(), "/message?sessionId=1".to_string()),
                ("message".to_string(), "{\"a\":\n1}".to_string()),
            ]
        );
    }
}
