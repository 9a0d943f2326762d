//! [`Connection`]: one running MCP client session (a child process over
//! stdio, or a streamable-HTTP endpoint), with its tool list, its
//! instructions, and every request bounded by a timeout and cancellable.

use std::collections::HashMap;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation,
    ReadResourceRequestParams,
};
use rmcp::service::{MaybeSendFuture, NotificationContext, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, Peer, RoleClient, ServiceError, ServiceExt};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::config::{McpServerConfig, McpTimeouts, McpTransport};
use super::error::McpError;
use super::http_client::streamable_http_client;
use super::legacy_sse::LegacySseTransport;
use super::process_group::ProcessGroup;
use super::stderr_tail::StderrTail;

/// One tool a server offers, as listed.
#[derive(Debug, Clone, PartialEq)]
pub struct McpToolInfo {
    /// The server's name for it (what `tools/call` takes).
    pub name: String,
    /// Its description.
    pub description: String,
    /// Its argument schema, normalised as opencode does (an object schema
    /// with `properties` and `additionalProperties: false`).
    pub input_schema: Value,
}

/// Called when something about a server changed: its tool list
/// (`notifications/tools/list_changed`) or its liveness.
pub(crate) type ChangeCallback = Arc<dyn Fn(Change) + Send + Sync>;

/// What changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Change {
    /// The server announced a new tool list.
    ToolsChanged,
    /// The connection ended.
    Closed,
}

/// Receives server notifications.
struct Handler {
    on_change: ChangeCallback,
}

impl ClientHandler for Handler {
    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        (self.on_change)(Change::ToolsChanged);
        std::future::ready(())
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("agent-sdk", env!("CARGO_PKG_VERSION")),
        )
    }
}

/// A started server.
pub(crate) struct Connection {
    name: String,
    peer: Peer<RoleClient>,
    shutdown: CancellationToken,
    /// A local server's process group, killed with the connection.
    group: ProcessGroup,
    closed: Arc<Mutex<Option<String>>>,
    stderr: StderrTail,
    timeouts: McpTimeouts,
    instructions: Option<String>,
    has_resources: bool,
    tools: RwLock<Vec<McpToolInfo>>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.shutdown.cancel();
        self.group.kill();
    }
}

/// Why a request failed.
#[derive(Debug)]
pub(crate) enum RequestError {
    /// The caller's token fired; the request was withdrawn
    /// (`notifications/cancelled` was sent).
    Cancelled,
    /// Anything else.
    Failed(McpError),
}

impl Connection {
    /// Starts `config` (spawns or connects, initialises, lists the tools),
    /// all within the startup time limit.
    pub(crate) async fn start(
        name: &str,
        config: &McpServerConfig,
        directory: &Path,
        on_change: ChangeCallback,
    ) -> Result<Connection, McpError> {
        let stderr = StderrTail::default();
        let shutdown = CancellationToken::new();
        let startup = config.timeouts.startup;
        let handler = Handler {
            on_change: Arc::clone(&on_change),
        };
        // Spawned first, so the group guard outlives the handshake: every
        // way out of this function without a connection (an error, the
        // timeout, the caller dropping the start) kills the process group.
        let (mut local, group) = match &config.transport {
            McpTransport::Local {
                command,
                environment,
                cwd,
            } => match spawn(name, command, environment, cwd, directory, &stderr) {
                Ok((transport, group)) => (Some(Ok(transport)), group),
                Err(message) => (Some(Err(message)), ProcessGroup::default()),
            },
            McpTransport::Remote { .. } => (None, ProcessGroup::default()),
        };
        let connecting = async {
            match &config.transport {
                McpTransport::Local { .. } => {
                    let transport = local
                        .take()
                        .unwrap_or_else(|| Err("the server was not spawned".into()))?;
                    handler
                        .serve_with_ct(transport, shutdown.clone())
                        .await
                        .map_err(|e| e.to_string())
                }
                McpTransport::Remote { url, headers } => {
                    let headers = http_headers(headers)?;
                    let config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
                        .custom_headers(headers.clone());
                    let transport = StreamableHttpClientTransport::with_client(
                        streamable_http_client()?,
                        config,
                    );
                    let streamable = match handler.serve_with_ct(transport, shutdown.clone()).await
                    {
                        Ok(running) => return Ok(running),
                        Err(e) => e.to_string(),
                    };
                    // opencode's fallback: the older HTTP+SSE transport.
                    let handler = Handler {
                        on_change: Arc::clone(&on_change),
                    };
                    let header_map = headers.into_iter().collect();
                    let sse = match LegacySseTransport::connect(url, header_map).await {
                        Ok(transport) => handler
                            .serve_with_ct(transport, shutdown.clone())
                            .await
                            .map_err(|e| e.to_string()),
                        Err(e) => Err(e),
                    };
                    sse.map_err(|sse| format!("streamable HTTP: {streamable}; SSE: {sse}"))
                }
            }
        };
        let running = match tokio::time::timeout(startup, connecting).await {
            Ok(Ok(running)) => running,
            Ok(Err(message)) => {
                shutdown.cancel();
                // Give the stderr reader a moment to collect the last words
                // of a process that died during the handshake.
                settle().await;
                return Err(McpError::Start {
                    server: name.to_string(),
                    message,
                    stderr: stderr.text(),
                });
            }
            Err(_) => {
                shutdown.cancel();
                return Err(McpError::Timeout {
                    server: name.to_string(),
                    during: "starting".into(),
                    after: startup,
                    stderr: stderr.text(),
                });
            }
        };
        let peer = running.peer().clone();
        let (instructions, has_resources) = match peer.peer_info() {
            Some(info) => (
                info.instructions.clone().filter(|i| !i.trim().is_empty()),
                info.capabilities.resources.is_some(),
            ),
            None => (None, false),
        };
        let closed = Arc::new(Mutex::new(None));
        watch(running, Arc::clone(&closed), on_change);
        let connection = Connection {
            name: name.to_string(),
            peer,
            shutdown,
            group,
            closed,
            stderr,
            timeouts: config.timeouts,
            instructions,
            has_resources,
            tools: RwLock::new(Vec::new()),
        };
        connection.refresh_tools_within(startup).await?;
        Ok(connection)
    }

    /// The server's instructions (from `initialize`), if any.
    pub(crate) fn instructions(&self) -> Option<&str> {
        self.instructions.as_deref()
    }

    /// Whether the server offers resources.
    pub(crate) fn has_resources(&self) -> bool {
        self.has_resources
    }

    /// The tools as last listed.
    pub(crate) fn tools(&self) -> Vec<McpToolInfo> {
        self.tools.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Why the connection ended, if it did.
    pub(crate) fn closed_reason(&self) -> Option<String> {
        self.closed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The last lines the server wrote to stderr.
    pub(crate) fn stderr_tail(&self) -> String {
        self.stderr.text()
    }

    /// Ends the session (kills a local server's process group).
    pub(crate) fn shutdown(&self) {
        self.shutdown.cancel();
        self.group.kill();
    }

    /// Lists the tools again (after `tools/list_changed`).
    pub(crate) async fn refresh_tools(&self) -> Result<(), McpError> {
        self.refresh_tools_within(self.timeouts.request).await
    }

    async fn refresh_tools_within(&self, limit: Duration) -> Result<(), McpError> {
        let listed = self
            .request("listing tools", limit, &CancellationToken::new(), async {
                self.peer.list_all_tools().await
            })
            .await
            .map_err(|e| match e {
                RequestError::Failed(e) => e,
                RequestError::Cancelled => self.closed_error("listing tools was cancelled"),
            })?;
        let tools = listed
            .into_iter()
            .map(|tool| McpToolInfo {
                name: tool.name.to_string(),
                description: tool
                    .description
                    .as_deref()
                    .map(str::to_string)
                    .unwrap_or_default(),
                input_schema: normalise_schema(Value::Object((*tool.input_schema).clone())),
            })
            .collect();
        *self.tools.write().unwrap_or_else(|e| e.into_inner()) = tools;
        Ok(())
    }

    /// Calls `tool` with `arguments`; the result as JSON.
    pub(crate) async fn call_tool(
        &self,
        tool: &str,
        arguments: Map<String, Value>,
        cancel: &CancellationToken,
    ) -> Result<Value, RequestError> {
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
        let during = format!("calling tool {tool:?}");
        let result = self
            .request(&during, self.timeouts.request, cancel, async {
                self.peer.call_tool(params).await
            })
            .await?;
        self.to_json(&during, &result)
    }

    /// Every resource (all pages), as JSON.
    pub(crate) async fn list_resources(
        &self,
        cancel: &CancellationToken,
    ) -> Result<Vec<Value>, RequestError> {
        let during = "listing resources";
        let resources = self
            .request(during, self.timeouts.request, cancel, async {
                self.peer.list_all_resources().await
            })
            .await?;
        self.to_json(during, &resources)
            .map(|v| v.as_array().cloned().unwrap_or_default())
    }

    /// Every resource template (all pages), as JSON.
    pub(crate) async fn list_resource_templates(
        &self,
        cancel: &CancellationToken,
    ) -> Result<Vec<Value>, RequestError> {
        let during = "listing resource templates";
        let templates = self
            .request(during, self.timeouts.request, cancel, async {
                self.peer.list_all_resource_templates().await
            })
            .await?;
        self.to_json(during, &templates)
            .map(|v| v.as_array().cloned().unwrap_or_default())
    }

    /// Reads the resource at `uri`; the result as JSON.
    pub(crate) async fn read_resource(
        &self,
        uri: &str,
        cancel: &CancellationToken,
    ) -> Result<Value, RequestError> {
        let during = format!("reading resource {uri:?}");
        let params = ReadResourceRequestParams::new(uri);
        let result = self
            .request(&during, self.timeouts.request, cancel, async {
                self.peer.read_resource(params).await
            })
            .await?;
        self.to_json(&during, &result)
    }

    /// Runs one request under `limit` and `cancel`. Dropping the request
    /// (timeout, cancellation) makes rmcp send `notifications/cancelled`.
    async fn request<T>(
        &self,
        during: &str,
        limit: Duration,
        cancel: &CancellationToken,
        request: impl Future<Output = Result<T, ServiceError>>,
    ) -> Result<T, RequestError> {
        if let Some(reason) = self.closed_reason() {
            return Err(RequestError::Failed(self.closed_error(&reason)));
        }
        let outcome = tokio::select! {
            outcome = tokio::time::timeout(limit, request) => outcome,
            () = cancel.cancelled() => return Err(RequestError::Cancelled),
        };
        match outcome {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(error)) => Err(RequestError::Failed(self.service_error(during, error))),
            Err(_) => Err(RequestError::Failed(McpError::Timeout {
                server: self.name.clone(),
                during: during.to_string(),
                after: limit,
                stderr: self.stderr.text(),
            })),
        }
    }

    fn to_json<T: serde::Serialize>(&self, during: &str, value: &T) -> Result<Value, RequestError> {
        serde_json::to_value(value).map_err(|e| {
            RequestError::Failed(McpError::Protocol {
                server: self.name.clone(),
                during: during.to_string(),
                message: e.to_string(),
            })
        })
    }

    fn service_error(&self, during: &str, error: ServiceError) -> McpError {
        match error {
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
                let reason = format!("the connection closed while {during} ({error})");
                self.mark_closed(&reason);
                self.closed_error(&reason)
            }
            ServiceError::Timeout { timeout } => McpError::Timeout {
                server: self.name.clone(),
                during: during.to_string(),
                after: timeout,
                stderr: self.stderr.text(),
            },
            ServiceError::McpError(data) => McpError::Protocol {
                server: self.name.clone(),
                during: during.to_string(),
                message: data.message.to_string(),
            },
            other => McpError::Protocol {
                server: self.name.clone(),
                during: during.to_string(),
                message: other.to_string(),
            },
        }
    }

    fn mark_closed(&self, reason: &str) {
        let mut closed = self.closed.lock().unwrap_or_else(|e| e.into_inner());
        if closed.is_none() {
            *closed = Some(reason.to_string());
        }
    }

    fn closed_error(&self, reason: &str) -> McpError {
        McpError::Closed {
            server: self.name.clone(),
            message: reason.to_string(),
            stderr: self.stderr.text(),
        }
    }
}

/// Waits for the session to end and records why.
fn watch<S>(
    running: RunningService<RoleClient, S>,
    closed: Arc<Mutex<Option<String>>>,
    on_change: ChangeCallback,
) where
    S: rmcp::Service<RoleClient>,
{
    tokio::spawn(async move {
        let reason = match running.waiting().await {
            Ok(rmcp::service::QuitReason::Cancelled) => "the client shut it down".to_string(),
            Ok(_) => "the connection closed (the server exited or hung up)".to_string(),
            Err(e) => format!("the client task failed: {e}"),
        };
        // Let the stderr reader catch the last lines.
        settle().await;
        {
            let mut closed = closed.lock().unwrap_or_else(|e| e.into_inner());
            if closed.is_none() {
                *closed = Some(reason);
            }
        }
        on_change(Change::Closed);
    });
}

/// A short pause so a background reader can drain a pipe that just closed.
async fn settle() {
    for _ in 0..5 {
        tokio::task::yield_now().await;
    }
    tokio::time::sleep(Duration::from_millis(20)).await;
}

fn spawn(
    name: &str,
    command: &[String],
    environment: &indexmap::IndexMap<String, String>,
    cwd: &Option<std::path::PathBuf>,
    directory: &Path,
    stderr: &StderrTail,
) -> Result<(TokioChildProcess, ProcessGroup), String> {
    let Some((program, args)) = command.split_first() else {
        return Err("the command is empty".into());
    };
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args).envs(environment).kill_on_drop(true);
    // A group of its own: the terminal's Ctrl-C is the agent's to handle
    // (it cancels a turn in `agent chat`), not a kill of every server.
    #[cfg(unix)]
    cmd.process_group(0);
    cmd.current_dir(match cwd {
        Some(cwd) => directory.join(cwd),
        None => directory.to_path_buf(),
    });
    let (transport, pipe) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {program:?} for {name:?}: {e}"))?;
    let group = ProcessGroup::led_by(transport.id());
    if let Some(pipe) = pipe {
        stderr.follow(pipe);
    }
    Ok((transport, group))
}

fn http_headers(
    headers: &indexmap::IndexMap<String, String>,
) -> Result<HashMap<HeaderName, HeaderValue>, String> {
    let mut custom = HashMap::new();
    for (name, value) in headers {
        let header = HeaderName::from_bytes(name.as_bytes())
            .map_err(|e| format!("invalid header name {name:?}: {e}"))?;
        let value = HeaderValue::from_str(value)
            .map_err(|e| format!("invalid value for header {name:?}: {e}"))?;
        custom.insert(header, value);
    }
    Ok(custom)
}

/// opencode's normalisation of a tool's input schema: the server's schema
/// with `type: "object"`, `properties` (empty when absent) and
/// `additionalProperties: false`.
pub(crate) fn normalise_schema(schema: Value) -> Value {
    let mut map = match schema {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    map.insert("type".into(), Value::String("object".into()));
    let properties = map
        .remove("properties")
        .filter(Value::is_object)
        .unwrap_or_else(|| Value::Object(Map::new()));
    map.insert("properties".into(), properties);
    map.insert("additionalProperties".into(), Value::Bool(false));
    Value::Object(map)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn schemas_become_closed_objects() {
        assert_eq!(
            normalise_schema(
                json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]})
            ),
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": false})
        );
        assert_eq!(
            normalise_schema(json!({})),
            json!({"type": "object", "properties": {}, "additionalProperties": false})
        );
    }
}
