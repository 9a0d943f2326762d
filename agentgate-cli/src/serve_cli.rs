//! `agent serve`: opencode's HTTP API (`opencode serve`) for web and
//! remote hosts and opencode's own clients. The routes, events and
//! security are the library's (`agentgate::server`); this file builds each
//! session's agent the way `agent run` does — the directory's
//! configuration, the model (the demo one when nothing is configured), the
//! sandbox, the file session store and the remembered approvals — and
//! chooses the address and the password.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use agentgate::server::{AgentFactory, AgentSetup, Auth, DEFAULT_USERNAME, FactoryError, Server};
use agentgate::{CodingAgent, TrustPolicy, Workspace};
use agentgate_core::ConfigLoader;
use agentgate_permission::{Action, Rule, Ruleset};
use agentgate_tools::SandboxMode;

use crate::model_choice::{DEMO_NOTICE, choose_model};
use crate::run_cli::sandbox_policy;
use crate::workspace::{approval_store, session_store};

/// What `agent serve` was given.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The port (0: any free one).
    pub port: u16,
    /// The address or name to listen on.
    pub hostname: String,
    /// Origins browsers may call from.
    pub cors: Vec<String>,
    /// `provider/model` to run on.
    pub model: Option<String>,
    /// The sandbox bash commands run in.
    pub sandbox: Option<SandboxMode>,
    /// A PostgreSQL URL: sessions, approvals and pending asks shared with
    /// every `agent serve` on the same database (default: this machine's
    /// SQLite database, asks kept there so they outlive the process).
    pub database: Option<String>,
    /// The PostgreSQL schema the tables live in (default `public`).
    pub database_schema: Option<String>,
    /// Trust the project's configuration for this run (`--trust-project`),
    /// else as `agent trust` recorded it.
    pub trust_project: bool,
    /// How long an ask waits for an answer (`--ask-deadline`).
    pub ask_deadline: Option<std::time::Duration>,
    /// How long a turn waits at an ask in memory before it is dropped from
    /// it, its ask kept in the database (`--park-asks-after`).
    pub park_asks_after: std::time::Duration,
}

/// Where a server keeps its sessions and approvals, and how its asks are
/// seen by other processes.
struct Backing {
    store: Arc<dyn agentgate::SessionStore>,
    approvals: Arc<dyn agentgate_permission::ApprovalStore>,
    relay: Option<Arc<dyn agentgate::store::AskRelay>>,
    /// The audit log of the server's permission decisions.
    audit: Option<Arc<dyn agentgate::store::AuditLog>>,
}

/// The stores `options` name: PostgreSQL (with its relay) for a
/// `postgres://` URL, else the data directory's SQLite database.
async fn backing(options: &ServeOptions) -> Result<Backing, String> {
    let Some(url) = &options.database else {
        let store = session_store().await?;
        // Asks are kept in the database: one raised before a crash or a
        // restart is still listed, and its answer resumes the turn.
        let relay = agentgate::store::SqliteRelay::new((*store).clone());
        return Ok(Backing {
            store,
            approvals: approval_store()?,
            relay: Some(Arc::new(relay)),
            audit: Some(Arc::new(crate::workspace::audit_store()?)),
        });
    };
    if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
        return Err(format!(
            "--database takes a PostgreSQL URL (postgres://user:password@host:port/database); without it sessions are kept in {}",
            agentgate::Workspace::database_path(crate::workspace::APP).display()
        ));
    }
    let mut pg = agentgate::store::PostgresOptions::new(url.clone());
    if let Some(schema) = &options.database_schema {
        pg = pg.schema(schema.clone());
    }
    let host = url.rsplit('@').next().unwrap_or(url.as_str());
    let store = agentgate::store::PostgresStore::connect(pg.clone())
        .await
        .map_err(|e| format!("cannot use the PostgreSQL database at {host}: {e}"))?;
    let relay = agentgate::store::PostgresRelay::connect(pg)
        .await
        .map_err(|e| format!("cannot listen on the PostgreSQL database at {host}: {e}"))?;
    let store = Arc::new(store);
    Ok(Backing {
        store: store.clone(),
        approvals: store.clone(),
        relay: Some(Arc::new(relay)),
        // The chain in the shared database: every server appends to it.
        audit: Some(store),
    })
}

/// Builds each session's agent as `agent run` would in the directory.
struct CliAgents {
    model: Option<String>,
    sandbox: Option<SandboxMode>,
    trust_project: bool,
    ask_deadline: Option<std::time::Duration>,
}

#[agentgate::async_trait]
impl AgentFactory for CliAgents {
    async fn build(&self, setup: AgentSetup) -> Result<CodingAgent, FactoryError> {
        let dir = setup.directory().to_path_buf();
        let workspace = load(&dir, self.trust_project).await?;
        let choice = choose_model(self.model.as_deref(), &workspace, |v| std::env::var(v).ok())?;
        let policy = sandbox_policy(self.sandbox, &workspace.config().value)?;
        let mut builder = CodingAgent::builder(&dir)
            .share_cli_store()
            .model(choice.model)
            .sandbox(policy);
        let contents = crate::telemetry_cli::capture_content();
        builder = builder.engine(move |engine| engine.trace_contents(contents));
        if let Some(deadline) = self.ask_deadline {
            builder = builder.engine(move |engine| engine.ask_deadline(deadline));
        }
        if choice.demo {
            // As in `agent run`: the demo's session asks before any command.
            builder = builder.session_permission(Ruleset::from(vec![Rule::new(
                "bash",
                "*",
                Action::Ask,
            )]));
        }
        Ok(setup.apply(builder.workspace(workspace)).build().await?)
    }

    /// Every session is served from the one directory, as `agent run`
    /// would build it: one engine serves them all.
    fn shares_engine(&self) -> bool {
        true
    }
}

/// `dir`'s workspace: its project trusted when `trust_project`, else as
/// `agent trust` recorded it.
async fn load(dir: &std::path::Path, trust_project: bool) -> Result<Workspace, FactoryError> {
    let dir = dir.to_path_buf();
    Ok(tokio::task::spawn_blocking(move || {
        let loader = ConfigLoader::new(&dir);
        if trust_project {
            Workspace::with_trust(&dir, loader, &TrustPolicy::trust_all())
        } else {
            Workspace::with_loader(&dir, loader)
        }
    })
    .await??)
}

/// The address `hostname` names (an IP address, `localhost`, or a name
/// resolved now).
async fn address(hostname: &str, port: u16) -> Result<SocketAddr, String> {
    if hostname.eq_ignore_ascii_case("localhost") {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    if let Ok(ip) = hostname.trim_matches(['[', ']']).parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, port));
    }
    tokio::net::lookup_host((hostname, port))
        .await
        .map_err(|e| format!("cannot resolve --hostname {hostname}: {e}"))?
        .next()
        .ok_or_else(|| format!("--hostname {hostname} resolves to no address"))
}

/// The password from the environment (opencode's variable first), else a
/// generated one for a non-loopback address, printed once on stderr.
fn auth(address: &SocketAddr, env: impl Fn(&str) -> Option<String>) -> Result<Auth, String> {
    let username = env("OPENCODE_SERVER_USERNAME")
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| DEFAULT_USERNAME.to_string());
    if let Some(password) = env("OPENCODE_SERVER_PASSWORD")
        .or_else(|| env("AGENT_SERVER_PASSWORD"))
        .filter(|p| !p.is_empty())
    {
        return Ok(Auth::Basic { username, password });
    }
    if address.ip().is_loopback() {
        return Ok(Auth::None);
    }
    let Auth::Basic { password, .. } =
        Auth::generated().map_err(|e| format!("cannot generate a password: {e}"))?
    else {
        return Err("cannot generate a password".into());
    };
    eprintln!(
        "agent: {address} is not a loopback address, so clients must log in: user {username}, password {password} (shown once; set OPENCODE_SERVER_PASSWORD to choose it)"
    );
    Ok(Auth::Basic { username, password })
}

/// Serves until Ctrl-C.
pub async fn serve(options: ServeOptions) -> Result<(), String> {
    let dir =
        std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
    // The configuration and the model are checked now, so a broken setup
    // fails at start rather than at the first prompt.
    let workspace = load(&dir, options.trust_project)
        .await
        .map_err(|e| e.to_string())?;
    for warning in &workspace.config().warnings {
        eprintln!(
            "agent: warning: {}",
            crate::terminal_text::Untrusted::new(warning)
        );
    }
    if !workspace.trust_state().is_trusted() {
        eprintln!(
            "agent: the project is served untrusted (its page says what was set aside); `agent trust` or `agent serve --trust-project` trusts it"
        );
    }
    let choice = choose_model(options.model.as_deref(), &workspace, |v| {
        std::env::var(v).ok()
    })?;
    if choice.demo {
        eprintln!("{DEMO_NOTICE}");
    }
    sandbox_policy(options.sandbox, &workspace.config().value)?;
    let address = address(&options.hostname, options.port).await?;
    let auth = auth(&address, |v| std::env::var(v).ok())?;
    let factory = CliAgents {
        model: options.model.clone(),
        sandbox: options.sandbox,
        trust_project: options.trust_project,
        ask_deadline: options.ask_deadline,
    };
    let backing = backing(&options).await?;
    let mut builder = Server::builder(Arc::new(factory), &dir)
        .store(backing.store)
        .approvals(backing.approvals)
        .config(workspace.config().clone())
        .commands(workspace.commands().clone())
        .trust(workspace.trust_state().clone())
        .address(address)
        .auth(auth)
        .park_asks_after(options.park_asks_after);
    if let Some(audit) = backing.audit {
        builder = builder.audit(audit);
    }
    if let Some(relay) = backing.relay {
        builder = builder.relay(relay);
    }
    for origin in options.cors {
        builder = builder.cors(origin);
    }
    let bound = builder
        .build()
        .map_err(|e| e.to_string())?
        .bind()
        .await
        .map_err(|e| e.to_string())?;
    println!("agent server listening on http://{}", bound.local_addr());
    use std::io::Write;
    let _ = std::io::stdout().flush();
    bound
        .serve(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn loopback_needs_no_password_and_others_get_one() {
        let local = SocketAddr::from(([127, 0, 0, 1], 4096));
        assert_eq!(auth(&local, env(&[])).unwrap(), Auth::None);
        let public = SocketAddr::from(([0, 0, 0, 0], 4096));
        assert!(
            matches!(auth(&public, env(&[])).unwrap(), Auth::Basic { username, .. } if username == "opencode")
        );
        assert_eq!(
            auth(
                &public,
                env(&[
                    ("OPENCODE_SERVER_PASSWORD", "pw"),
                    ("AGENT_SERVER_PASSWORD", "other")
                ])
            )
            .unwrap(),
            Auth::password("pw")
        );
        assert_eq!(
            auth(
                &local,
                env(&[
                    ("AGENT_SERVER_PASSWORD", "pw2"),
                    ("OPENCODE_SERVER_USERNAME", "me")
                ])
            )
            .unwrap(),
            Auth::Basic {
                username: "me".into(),
                password: "pw2".into()
            }
        );
    }

    #[tokio::test]
    async fn hostnames_resolve_to_addresses() {
        assert_eq!(
            address("localhost", 1).await.unwrap(),
            SocketAddr::from(([127, 0, 0, 1], 1))
        );
        assert_eq!(
            address("0.0.0.0", 2).await.unwrap(),
            SocketAddr::from(([0, 0, 0, 0], 2))
        );
        assert!(address("[::1]", 3).await.unwrap().ip().is_loopback());
    }
}
