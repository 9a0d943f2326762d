//! The MCP resource tools (§7.2): `list_mcp_resources`,
//! `list_mcp_resource_templates` and `read_mcp_resource`. They ask the
//! `read` permission (§5 maps them to it) with opencode's patterns:
//! `mcp:<server>:<uri>` for a read (always `mcp:<server>:*`), and
//! `mcp:<server>:*` for the listed server, or for every resource server
//! (sorted) when none is named.

use std::sync::Arc;

use agentgate_core::{ToolContext, ToolError, ToolOutput, TypedTool};
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::connection::{Connection, RequestError};
use super::content;
use super::servers::Servers;

/// The permission the resource tools ask.
const READ: &str = "read";

/// Arguments of the two listing tools.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListResourcesArgs {
    /// Only this MCP server's entries; every server that offers resources
    /// when omitted.
    #[serde(default)]
    pub server: Option<String>,
}

/// Arguments of `read_mcp_resource`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReadResourceArgs {
    /// The MCP server that offers the resource.
    pub server: String,
    /// The resource URI (from `list_mcp_resources`, or a template filled in).
    pub uri: String,
}

/// `list_mcp_resources`: the resources of one or every MCP server.
pub struct ListResourcesTool {
    servers: Arc<Servers>,
}

/// `list_mcp_resource_templates`: the resource templates of one or every
/// MCP server.
pub struct ListResourceTemplatesTool {
    servers: Arc<Servers>,
}

/// `read_mcp_resource`: the contents of one resource.
pub struct ReadResourceTool {
    servers: Arc<Servers>,
}

impl ListResourcesTool {
    pub(crate) fn new(servers: Arc<Servers>) -> Self {
        ListResourcesTool { servers }
    }
}

impl ListResourceTemplatesTool {
    pub(crate) fn new(servers: Arc<Servers>) -> Self {
        ListResourceTemplatesTool { servers }
    }
}

impl ReadResourceTool {
    pub(crate) fn new(servers: Arc<Servers>) -> Self {
        ReadResourceTool { servers }
    }
}

/// Which listing.
#[derive(Clone, Copy)]
enum Listing {
    Resources,
    Templates,
}

impl Listing {
    fn key(self) -> &'static str {
        match self {
            Listing::Resources => "resources",
            Listing::Templates => "resourceTemplates",
        }
    }
}

#[async_trait]
impl TypedTool for ListResourcesTool {
    type Args = ListResourcesArgs;

    fn id(&self) -> &str {
        "list_mcp_resources"
    }

    fn description(&self) -> &str {
        "Lists the resources (files, documents, records) that connected MCP servers offer, with their URIs. Pass `server` to list one server's resources. Read one with read_mcp_resource."
    }

    async fn run(
        &self,
        args: ListResourcesArgs,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        list(&self.servers, Listing::Resources, args.server, ctx).await
    }
}

#[async_trait]
impl TypedTool for ListResourceTemplatesTool {
    type Args = ListResourcesArgs;

    fn id(&self) -> &str {
        "list_mcp_resource_templates"
    }

    fn description(&self) -> &str {
        "Lists the resource templates (parameterised URIs such as `db://table/{name}`) that connected MCP servers offer. Pass `server` to list one server's templates. Fill one in and read it with read_mcp_resource."
    }

    async fn run(
        &self,
        args: ListResourcesArgs,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        list(&self.servers, Listing::Templates, args.server, ctx).await
    }
}

#[async_trait]
impl TypedTool for ReadResourceTool {
    type Args = ReadResourceArgs;

    fn id(&self) -> &str {
        "read_mcp_resource"
    }

    fn description(&self) -> &str {
        "Reads one resource of an MCP server by its URI and returns its contents."
    }

    async fn run(
        &self,
        args: ReadResourceArgs,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let connection = resource_server(&self.servers, &args.server).await?;
        ctx.ask(
            READ,
            [format!("mcp:{}:{}", args.server, args.uri)],
            [format!("mcp:{}:*", args.server)],
            json!({"server": args.server, "uri": args.uri}),
        )
        .await?;
        let result = connection
            .read_resource(&args.uri, &ctx.cancel)
            .await
            .map_err(request_error)?;
        let mut metadata = Map::new();
        metadata.insert("server".into(), Value::String(args.server.clone()));
        metadata.insert("uri".into(), Value::String(args.uri.clone()));
        Ok(content::resource_contents(&result, &args.uri, metadata))
    }
}

async fn list(
    servers: &Arc<Servers>,
    listing: Listing,
    server: Option<String>,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolError> {
    let targets: Vec<(String, Arc<Connection>)> = match server {
        Some(name) => vec![(name.clone(), resource_server(servers, &name).await?)],
        None => {
            let mut all: Vec<_> = servers
                .connected()
                .into_iter()
                .filter(|(_, c)| c.has_resources())
                .map(|(n, c)| (n.to_string(), c))
                .collect();
            all.sort_by(|a, b| a.0.cmp(&b.0));
            all
        }
    };
    if targets.is_empty() {
        return Err(ToolError::failed(
            "no connected MCP server offers resources",
        ));
    }
    let patterns: Vec<String> = targets
        .iter()
        .map(|(name, _)| format!("mcp:{name}:*"))
        .collect();
    ctx.ask(
        READ,
        patterns.clone(),
        patterns,
        json!({"servers": targets.iter().map(|(n, _)| n).collect::<Vec<_>>()}),
    )
    .await?;
    let mut entries = Vec::new();
    let mut errors = Vec::new();
    for (name, connection) in &targets {
        let listed = match listing {
            Listing::Resources => connection.list_resources(&ctx.cancel).await,
            Listing::Templates => connection.list_resource_templates(&ctx.cancel).await,
        };
        match listed {
            Ok(items) => {
                for item in items {
                    let mut entry = Map::new();
                    entry.insert("server".into(), Value::String(name.clone()));
                    if let Value::Object(fields) = item {
                        entry.extend(fields);
                    }
                    entries.push(Value::Object(entry));
                }
            }
            Err(RequestError::Cancelled) => return Err(ToolError::Cancelled),
            Err(RequestError::Failed(error)) => {
                errors.push(json!({"server": name, "error": error.to_string()}));
            }
        }
    }
    let count = entries.len();
    let mut body = Map::new();
    body.insert(listing.key().into(), Value::Array(entries));
    if !errors.is_empty() {
        body.insert("errors".into(), Value::Array(errors));
    }
    let text = serde_json::to_string_pretty(&Value::Object(body))
        .map_err(|e| ToolError::failed(e.to_string()))?;
    Ok(ToolOutput::text(text)
        .with_title(format!("{count} {}", listing.key()))
        .with_metadata(json!({"count": count})))
}

/// The connection of a server that offers resources.
async fn resource_server(servers: &Arc<Servers>, name: &str) -> Result<Arc<Connection>, ToolError> {
    let connection = servers
        .connection(name)
        .await
        .map_err(|e| ToolError::failed(e.to_string()))?;
    if !connection.has_resources() {
        return Err(ToolError::failed(format!(
            "MCP server {name:?} does not offer resources"
        )));
    }
    Ok(connection)
}

fn request_error(error: RequestError) -> ToolError {
    match error {
        RequestError::Cancelled => ToolError::Cancelled,
        RequestError::Failed(error) => ToolError::failed(error.to_string()),
    }
}
