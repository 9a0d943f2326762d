//! Shared helpers of the MCP tests: a streamable-HTTP MCP server written
//! with rmcp's server side (it logs every call it receives), the path of
//! the npm reference server, permission setups that record what was asked,
//! and an agent loop driven by a scripted model.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use agentgate_core::permission::{Approver, PermissionGate, PermissionRequest, Reply, Ruleset};
use agentgate_core::testing::{Script, ScriptedModel};
use agentgate_core::{
    AgentSpec, ContentPart, Engine, Session, StopReason, ToolContext, ToolRegistry,
};
use agentgate_tools::mcp::McpManager;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, Resource, ResourceContents, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// The environment variable naming the reference server's entry point
/// (`.../@modelcontextprotocol/server-everything/dist/index.js`); `.ci/run`
/// installs the package with npm and sets it.
pub const EVERYTHING_ENV: &str = "AGENT_MCP_SERVER_EVERYTHING";

/// `["node", <entry point>, "stdio"]`, or `None` (with a printed reason)
/// when the variable is unset.
pub fn everything_command() -> Option<Vec<String>> {
    match std::env::var(EVERYTHING_ENV) {
        Ok(path) if !path.is_empty() => {
            assert!(
                std::path::Path::new(&path).is_file(),
                "{EVERYTHING_ENV}={path} does not exist: run .ci/run's install step"
            );
            Some(vec!["node".into(), path, "stdio".into()])
        }
        _ => {
            println!(
                "SKIPPED: {EVERYTHING_ENV} is not set; .ci/run installs @modelcontextprotocol/server-everything with npm and sets it"
            );
            None
        }
    }
}

/// A fresh temporary directory.
pub fn temp_dir(name: &str) -> PathBuf {
    agentgate_testing::scratch_dir(&format!("agentgate-tools-mcp-{name}"))
}

/// A ruleset from opencode's `permission` config form.
pub fn rules(config: Value) -> Ruleset {
    let config: agentgate_core::permission::PermissionConfig =
        serde_json::from_value(config).unwrap();
    agentgate_core::permission::from_config(&config)
}

/// An approver that records every request and answers with `reply`.
pub struct Recorder {
    pub asked: Mutex<Vec<PermissionRequest>>,
    reply: Reply,
}

impl Recorder {
    pub fn new(reply: Reply) -> Arc<Self> {
        Arc::new(Recorder {
            asked: Mutex::new(Vec::new()),
            reply,
        })
    }

    /// `(permission, patterns, always)` of each request so far.
    pub fn requests(&self) -> Vec<(String, Vec<String>, Vec<String>)> {
        self.asked
            .lock()
            .unwrap()
            .iter()
            .map(|r| (r.permission.clone(), r.patterns.clone(), r.always.clone()))
            .collect()
    }
}

#[async_trait::async_trait]
impl Approver for Recorder {
    async fn approve(&self, request: &PermissionRequest) -> Reply {
        self.asked.lock().unwrap().push(request.clone());
        self.reply.clone()
    }
}

/// A tool context whose asks go to `approver`, under `ruleset`.
pub fn context(approver: Arc<dyn Approver>, ruleset: Ruleset) -> ToolContext {
    let permissions = PermissionGate::new();
    permissions.set_approver(approver);
    ToolContext::new("ses_mcp", "msg_1", "call_1", permissions).with_ruleset(Arc::new(ruleset))
}

/// The tool results the model saw in its second request: `(output, is_error)`.
pub struct LoopRun {
    pub results: Vec<(String, bool)>,
    pub done: bool,
}

/// Runs one turn: the model makes `calls` (id, tool, input) in one step,
/// then replies "Done."; the agent's rules are `permission`.
pub async fn run_loop(
    manager: &McpManager,
    permission: Ruleset,
    approver: Arc<dyn Approver>,
    calls: Vec<(&str, &str, Value)>,
) -> LoopRun {
    let model = Arc::new(ScriptedModel::new([
        Script::calls(calls),
        Script::reply("Done."),
    ]));
    let mut registry = ToolRegistry::new();
    manager.register(&mut registry).await;
    let permissions = PermissionGate::new();
    permissions.set_approver(approver);
    let dir = std::env::temp_dir();
    let engine = Engine::builder(model.clone())
        .agent(AgentSpec::new("build").with_permission(permission))
        .permissions(permissions)
        .tools(registry)
        .build();
    let session = engine
        .create_session(Session::new("build", dir))
        .await
        .unwrap();
    let turn = engine.prompt(&session.id, "use the tools").await.unwrap();
    let done = matches!(turn.stop, StopReason::Done { .. });
    let requests = model.requests();
    let results = requests
        .get(1)
        .map(|request| {
            request
                .messages
                .iter()
                .flat_map(|m| m.content.iter())
                .filter_map(|part| match part {
                    ContentPart::ToolResult {
                        output, is_error, ..
                    } => Some((output.clone(), *is_error)),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    LoopRun { results, done }
}

/// The tools of the HTTP test server, in listing order.
fn tool_list(extra: bool) -> Vec<Tool> {
    let schema = |props: Value| {
        let Value::Object(map) = json!({"type": "object", "properties": props}) else {
            unreachable!()
        };
        map
    };
    let mut tools = vec![
        Tool::new(
            "echo",
            "Repeats the text.",
            schema(json!({"text": {"type": "string"}})),
        ),
        Tool::new(
            "delete.everything",
            "Deletes everything.",
            schema(json!({})),
        ),
        Tool::new("hang", "Never answers.", schema(json!({}))),
        Tool::new("picture", "Returns an image.", schema(json!({}))),
        Tool::new("fail", "Reports an error.", schema(json!({}))),
        Tool::new(
            "grow",
            "Adds the tool `extra` and announces it.",
            schema(json!({})),
        ),
    ];
    if extra {
        tools.push(Tool::new("extra", "Appears after grow.", schema(json!({}))));
    }
    tools
}

/// A streamable-HTTP MCP server that records every call it receives.
#[derive(Clone, Default)]
pub struct LoggingServer {
    /// `tools/call` names received, in order.
    pub calls: Arc<Mutex<Vec<String>>>,
    /// How many `tools/list` requests arrived.
    pub lists: Arc<Mutex<usize>>,
    /// The `Authorization` header of each call, if any.
    pub authorizations: Arc<Mutex<Vec<Option<String>>>>,
    extra: Arc<Mutex<bool>>,
}

impl ServerHandler for LoggingServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_resources()
            .build();
        ServerConfig::new(capabilities)
            .with_instructions("Call echo before anything else.\nNever call hang.")
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        *self.lists.lock().unwrap() += 1;
        Ok(ListToolsResult::with_all_items(tool_list(
            *self.extra.lock().unwrap(),
        )))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.calls.lock().unwrap().push(request.name.to_string());
        let authorization = context
            .extensions
            .get::<hyper::http::request::Parts>()
            .and_then(|parts| parts.headers.get("authorization"))
            .and_then(|value| value.to_str().ok())
            .map(str::to_string);
        self.authorizations.lock().unwrap().push(authorization);
        let args = request.arguments.unwrap_or_default();
        let result = match request.name.as_ref() {
            "echo" => {
                let text = args.get("text").and_then(Value::as_str).unwrap_or("");
                CallToolResult::success(vec![ContentBlock::text(format!("echo: {text}"))])
            }
            "hang" => {
                context.ct.cancelled().await;
                return Err(ErrorData::internal_error("cancelled", None));
            }
            "picture" => CallToolResult::success(vec![
                ContentBlock::text("a dot"),
                ContentBlock::image("iVBORw0KGgo=", "image/png"),
            ]),
            "fail" => CallToolResult::error(vec![ContentBlock::text("the database is down")]),
            "grow" => {
                *self.extra.lock().unwrap() = true;
                let _ = context.peer.notify_tool_list_changed().await;
                CallToolResult::success(vec![ContentBlock::text("grown")])
            }
            other => CallToolResult::success(vec![ContentBlock::text(format!("ran {other}"))]),
        };
        Ok(CallToolResponse::Complete(result))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(vec![Resource::new(
            "memo://notes",
            "notes",
        )]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        Ok(ReadResourceResponse::Complete(ReadResourceResult::new(
            vec![ResourceContents::text(
                format!("contents of {}", request.uri),
                request.uri,
            )],
        )))
    }
}

/// Serves `server` on a loopback port; returns its URL and a token that
/// stops it.
pub async fn serve_http(server: LoggingServer) -> (String, CancellationToken) {
    let stop = CancellationToken::new();
    let mut config = StreamableHttpServerConfig::default();
    config.cancellation_token = stop.child_token();
    let service: StreamableHttpService<LoggingServer, LocalSessionManager> =
        StreamableHttpService::new(move || Ok(server.clone()), Default::default(), config);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let accept_stop = stop.clone();
    tokio::spawn(async move {
        loop {
            let stream = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => stream,
                    Err(_) => break,
                },
                () = accept_stop.cancelled() => break,
            };
            let service = TowerToHyperService::new(service.clone());
            let conn_stop = accept_stop.clone();
            tokio::spawn(async move {
                let conn = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service);
                tokio::select! {
                    _ = conn => {}
                    () = conn_stop.cancelled() => {}
                }
            });
        }
    });
    (format!("http://{addr}/mcp"), stop)
}
