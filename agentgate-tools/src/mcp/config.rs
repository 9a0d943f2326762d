//! opencode's `mcp` configuration: which servers to start and how.
//!
//! ```json
//! "mcp": {
//!   "everything": { "type": "local", "command": ["npx", "-y", "@modelcontextprotocol/server-everything"],
//!                   "environment": { "LOG_LEVEL": "info" }, "timeout": 10000 },
//!   "github": { "type": "remote", "url": "https://api.example.com/mcp",
//!               "headers": { "Authorization": "Bearer {env:GITHUB_TOKEN}" }, "enabled": false }
//! }
//! ```
//!
//! Each entry is parsed on its own: a malformed entry is kept as
//! [`McpServerEntry::Invalid`] (reported as that server's failure) and the
//! other servers still start.

use std::path::PathBuf;
use std::time::Duration;

use indexmap::IndexMap;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// How long starting a server (spawn or connect, `initialize`, first
/// `tools/list`) may take unless the config says otherwise.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// How long one request (a tool call, a resource read) may take unless the
/// config says otherwise: the MCP TypeScript SDK's default, which opencode's
/// tool calls use.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// The `mcp` section: server name → server, in config order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct McpConfig {
    /// The servers, keyed by the name their tools are prefixed with.
    pub servers: IndexMap<String, McpServerEntry>,
}

/// One entry of the `mcp` section.
#[derive(Debug, Clone, PartialEq)]
pub enum McpServerEntry {
    /// A well-formed server.
    Valid(McpServerConfig),
    /// An entry that could not be parsed; the message says why.
    Invalid(String),
}

/// One server: how to reach it, whether it is on, and its time limits.
#[derive(Debug, Clone, PartialEq)]
pub struct McpServerConfig {
    /// stdio child process or remote URL.
    pub transport: McpTransport,
    /// `false` keeps the server in the config without starting it.
    pub enabled: bool,
    /// Time limits.
    pub timeouts: McpTimeouts,
}

/// How the client talks to a server.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum McpTransport {
    /// `"type": "local"`: a child process speaking MCP over stdin/stdout.
    Local {
        /// Program and arguments.
        command: Vec<String>,
        /// Extra environment variables (added to the inherited ones).
        environment: IndexMap<String, String>,
        /// Working directory; relative paths resolve from the manager's
        /// directory, absent means the manager's directory.
        cwd: Option<PathBuf>,
    },
    /// `"type": "remote"`: streamable HTTP.
    Remote {
        /// The endpoint.
        url: String,
        /// Headers sent with every request (e.g. `Authorization`).
        headers: IndexMap<String, String>,
    },
}

/// Time limits of one server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct McpTimeouts {
    /// Spawning or connecting, `initialize` and the first `tools/list`.
    pub startup: Duration,
    /// Each request afterwards (tool calls, resource reads, re-listing).
    pub request: Duration,
}

impl Default for McpTimeouts {
    fn default() -> Self {
        McpTimeouts {
            startup: DEFAULT_STARTUP_TIMEOUT,
            request: DEFAULT_REQUEST_TIMEOUT,
        }
    }
}

impl McpServerConfig {
    /// A local server running `command` (program first).
    pub fn local<I, S>(command: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        McpServerConfig {
            transport: McpTransport::Local {
                command: command.into_iter().map(Into::into).collect(),
                environment: IndexMap::new(),
                cwd: None,
            },
            enabled: true,
            timeouts: McpTimeouts::default(),
        }
    }

    /// A remote server at `url`.
    pub fn remote(url: impl Into<String>) -> Self {
        McpServerConfig {
            transport: McpTransport::Remote {
                url: url.into(),
                headers: IndexMap::new(),
            },
            enabled: true,
            timeouts: McpTimeouts::default(),
        }
    }

    /// Adds an environment variable (local servers) or a header (remote
    /// servers).
    pub fn with_var(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        match &mut self.transport {
            McpTransport::Local { environment, .. } => {
                environment.insert(key.into(), value.into());
            }
            McpTransport::Remote { headers, .. } => {
                headers.insert(key.into(), value.into());
            }
        }
        self
    }

    /// Sets the time limits.
    pub fn with_timeouts(mut self, timeouts: McpTimeouts) -> Self {
        self.timeouts = timeouts;
        self
    }

    /// Sets `enabled`.
    pub fn with_enabled(mut self, enabled: bool) -> Self {
        self.enabled = enabled;
        self
    }
}

impl McpConfig {
    /// An empty config.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) a server.
    pub fn with_server(mut self, name: impl Into<String>, server: McpServerConfig) -> Self {
        self.servers
            .insert(name.into(), McpServerEntry::Valid(server));
        self
    }

    /// Parses the value of an `mcp` key. Anything but an object gives an
    /// empty config; each entry is parsed on its own.
    pub fn from_value(value: &Value) -> Self {
        let mut servers = IndexMap::new();
        if let Value::Object(map) = value {
            for (name, entry) in map {
                let parsed = match serde_json::from_value::<RawServer>(entry.clone()) {
                    Ok(raw) => raw.into_config(),
                    Err(error) => Err(error.to_string()),
                };
                let entry = match parsed {
                    Ok(config) => McpServerEntry::Valid(config),
                    Err(error) => {
                        McpServerEntry::Invalid(format!("invalid `mcp.{name}` config: {error}"))
                    }
                };
                servers.insert(name.clone(), entry);
            }
        }
        McpConfig { servers }
    }

    /// The `mcp` section of a whole opencode config (`opencode.json`'s
    /// parsed value); empty when it has none.
    pub fn from_opencode(config: &Value) -> Self {
        config.get("mcp").map(Self::from_value).unwrap_or_default()
    }

    /// Replaces every `{env:NAME}` in URLs, headers, commands and
    /// environment values with `lookup(NAME)` (the empty string when it
    /// gives `None`), as opencode does when it loads its config.
    pub fn substitute_env(mut self, lookup: &dyn Fn(&str) -> Option<String>) -> Self {
        for entry in self.servers.values_mut() {
            let McpServerEntry::Valid(server) = entry else {
                continue;
            };
            match &mut server.transport {
                McpTransport::Local {
                    command,
                    environment,
                    ..
                } => {
                    for part in command.iter_mut() {
                        *part = substitute_env(part, lookup);
                    }
                    for value in environment.values_mut() {
                        *value = substitute_env(value, lookup);
                    }
                }
                McpTransport::Remote { url, headers } => {
                    *url = substitute_env(url, lookup);
                    for value in headers.values_mut() {
                        *value = substitute_env(value, lookup);
                    }
                }
            }
        }
        self
    }

    /// [`substitute_env`](Self::substitute_env) with the process
    /// environment.
    pub fn substitute_process_env(self) -> Self {
        self.substitute_env(&|name| std::env::var(name).ok())
    }
}

impl<'de> Deserialize<'de> for McpConfig {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Ok(McpConfig::from_value(&value))
    }
}

/// Replaces each `{env:NAME}` in `text` with `lookup(NAME)`, or nothing when
/// the variable is unset. Text without a closing `}` is kept as is.
pub fn substitute_env(text: &str, lookup: &dyn Fn(&str) -> Option<String>) -> String {
    const OPEN: &str = "{env:";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(OPEN) {
        let after = &rest[start + OPEN.len()..];
        let Some(end) = after.find('}') else {
            break;
        };
        out.push_str(&rest[..start]);
        out.push_str(&lookup(&after[..end]).unwrap_or_default());
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

/// The wire form of one entry (opencode's v1 schema, plus v2's `disabled`,
/// `cwd` and split `timeout`).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawServer {
    #[serde(rename = "type")]
    kind: Option<String>,
    command: Option<Vec<String>>,
    #[serde(default)]
    environment: IndexMap<String, String>,
    cwd: Option<PathBuf>,
    url: Option<String>,
    #[serde(default)]
    headers: IndexMap<String, String>,
    enabled: Option<bool>,
    disabled: Option<bool>,
    timeout: Option<RawTimeout>,
    /// OAuth settings are accepted and ignored (out of scope: bearer
    /// headers work).
    #[serde(default)]
    #[allow(dead_code)]
    oauth: Option<Value>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawTimeout {
    /// opencode v1: milliseconds for starting the server and listing tools.
    Millis(u64),
    /// opencode v2: `{startup, request}` in milliseconds.
    Split {
        startup: Option<u64>,
        request: Option<u64>,
    },
}

impl RawServer {
    fn into_config(self) -> Result<McpServerConfig, String> {
        let enabled = match (self.enabled, self.disabled) {
            (Some(enabled), _) => enabled,
            (None, Some(disabled)) => !disabled,
            (None, None) => true,
        };
        let mut timeouts = McpTimeouts::default();
        match self.timeout {
            Some(RawTimeout::Millis(ms)) => timeouts.startup = positive(ms)?,
            Some(RawTimeout::Split { startup, request }) => {
                if let Some(ms) = startup {
                    timeouts.startup = positive(ms)?;
                }
                if let Some(ms) = request {
                    timeouts.request = positive(ms)?;
                }
            }
            None => {}
        }
        let transport = match self.kind.as_deref() {
            Some("local") => {
                let command = self.command.unwrap_or_default();
                if command.is_empty() {
                    return Err("a local server needs a non-empty `command` array".into());
                }
                McpTransport::Local {
                    command,
                    environment: self.environment,
                    cwd: self.cwd,
                }
            }
            Some("remote") => {
                let Some(url) = self.url else {
                    return Err("a remote server needs a `url`".into());
                };
                McpTransport::Remote {
                    url,
                    headers: self.headers,
                }
            }
            Some(other) => {
                return Err(format!(
                    "unknown server type {other:?}: use \"local\" or \"remote\""
                ));
            }
            None => return Err("missing `type`: use \"local\" or \"remote\"".into()),
        };
        Ok(McpServerConfig {
            transport,
            enabled,
            timeouts,
        })
    }
}

fn positive(ms: u64) -> Result<Duration, String> {
    if ms == 0 {
        return Err("`timeout` must be a positive number of milliseconds".into());
    }
    Ok(Duration::from_millis(ms))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_opencode_entries_one_by_one() {
        let config = McpConfig::from_value(&json!({
            "local": {"type": "local", "command": ["node", "server.js"], "environment": {"A": "1"}, "timeout": 1500},
            "remote": {"type": "remote", "url": "http://127.0.0.1:1/mcp", "headers": {"X": "y"}, "enabled": false,
                       "timeout": {"request": 2000}},
            "broken": {"type": "local"},
            "odd": {"type": "socket"}
        }));
        let McpServerEntry::Valid(local) = &config.servers["local"] else {
            panic!("local should parse");
        };
        assert!(local.enabled);
        assert_eq!(local.timeouts.startup, Duration::from_millis(1500));
        assert_eq!(local.timeouts.request, DEFAULT_REQUEST_TIMEOUT);
        let McpServerEntry::Valid(remote) = &config.servers["remote"] else {
            panic!("remote should parse");
        };
        assert!(!remote.enabled);
        assert_eq!(remote.timeouts.request, Duration::from_millis(2000));
        assert!(
            matches!(&config.servers["broken"], McpServerEntry::Invalid(e) if e.contains("mcp.broken") && e.contains("command"))
        );
        assert!(
            matches!(&config.servers["odd"], McpServerEntry::Invalid(e) if e.contains("socket"))
        );
        let keys: Vec<_> = config.servers.keys().collect();
        assert_eq!(keys, ["local", "remote", "broken", "odd"]);
    }

    #[test]
    fn disabled_is_the_opposite_of_enabled() {
        let config = McpConfig::from_value(&json!({
            "a": {"type": "remote", "url": "u", "disabled": true}
        }));
        assert!(matches!(&config.servers["a"], McpServerEntry::Valid(s) if !s.enabled));
    }

    #[test]
    fn env_placeholders_are_replaced_or_emptied() {
        let lookup = |name: &str| (name == "TOKEN").then(|| "s3cret".to_string());
        assert_eq!(
            substitute_env("Bearer {env:TOKEN}", &lookup),
            "Bearer s3cret"
        );
        assert_eq!(substitute_env("{env:NOPE}x{env:TOKEN}", &lookup), "xs3cret");
        assert_eq!(substitute_env("{env:TOKEN", &lookup), "{env:TOKEN");
        let config = McpConfig::from_value(&json!({
            "r": {"type": "remote", "url": "http://h/{env:TOKEN}", "headers": {"Authorization": "Bearer {env:TOKEN}"}}
        }))
        .substitute_env(&lookup);
        let McpServerEntry::Valid(server) = &config.servers["r"] else {
            panic!("should parse");
        };
        assert_eq!(
            server.transport,
            McpTransport::Remote {
                url: "http://h/s3cret".into(),
                headers: [("Authorization".to_string(), "Bearer s3cret".to_string())]
                    .into_iter()
                    .collect(),
            }
        );
    }
}
