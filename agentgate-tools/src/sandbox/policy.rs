//! The sandbox policy: which mode, whether commands reach the network,
//! which extra directories they may write and which paths they may not
//! read. This is the `sandbox` configuration key; it is plain data, turned
//! into a per-call boundary by [`Sandbox::prepare`](super::Sandbox::prepare).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::env::EnvFilter;
use super::limits::SandboxLimits;

/// How much a spawned command may do, named as codex names its modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum SandboxMode {
    /// Read everywhere (except the denied paths), write nowhere but the
    /// null-like devices; no network unless the policy turns it on.
    ReadOnly,
    /// Read everywhere (except the denied paths); write only in the
    /// project directory, the worktree, the temporary and tool-output
    /// directories, the policy's extra writable directories and the
    /// directories an `external_directory` approval opened for the call.
    #[default]
    WorkspaceWrite,
    /// No file system or network restriction (the environment filter and
    /// the ending of every descendant still apply).
    DangerFullAccess,
}

impl SandboxMode {
    /// The name used in configuration and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::ReadOnly => "read-only",
            SandboxMode::WorkspaceWrite => "workspace-write",
            SandboxMode::DangerFullAccess => "danger-full-access",
        }
    }

    /// Whether this mode restricts the file system at all.
    pub fn restricts_files(self) -> bool {
        !matches!(self, SandboxMode::DangerFullAccess)
    }
}

impl std::fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A mode name that is not one of the three.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown sandbox mode `{0}`: use read-only, workspace-write or danger-full-access")]
pub struct UnknownSandboxMode(pub String);

impl std::str::FromStr for SandboxMode {
    type Err = UnknownSandboxMode;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "read-only" => Ok(SandboxMode::ReadOnly),
            "workspace-write" => Ok(SandboxMode::WorkspaceWrite),
            "danger-full-access" => Ok(SandboxMode::DangerFullAccess),
            other => Err(UnknownSandboxMode(other.to_string())),
        }
    }
}

/// What to do when the requested mode cannot be enforced on this machine
/// (no Landlock, no namespaces, not Linux). Never a silent downgrade: with
/// `warn` the first call of each session logs a warning and every call's
/// metadata carries the [`SandboxStatus`](super::SandboxStatus); with
/// `error` every call fails with an error that says why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum OnUnsupported {
    /// Run the command with what can be enforced, and say so.
    #[default]
    Warn,
    /// Refuse to run the command.
    Error,
}

/// The `sandbox` configuration key. Each field changes only what it
/// names: a key that sets the network leaves the default credential
/// denials ([`SECRET_PATHS`]) in place; they go only when the key says so
/// (`"default_deny_read": false`, or a path in `allow_read`).
///
/// ```json
/// {"sandbox": {"mode": "workspace-write", "network": false,
///              "writable": ["~/.cache"], "deny_read": ["~/private"],
///              "allow_read": ["~/.kube"], "on_unsupported": "error",
///              "limits": {"processes": 4096, "memory": "8GiB"}}}
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SandboxPolicy {
    /// The mode (default `workspace-write`).
    pub mode: SandboxMode,
    /// Whether commands may use the network; unset means the mode's default
    /// (off for `read-only`, on otherwise).
    pub network: Option<bool>,
    /// Directories writable in `workspace-write` besides the project
    /// directory, worktree, temporary and tool-output directories. A
    /// leading `~/` is the home directory.
    pub writable: Vec<PathBuf>,
    /// Paths commands may not read (file or directory; a leading `~/` is the
    /// home directory), besides [`SECRET_PATHS`] while
    /// [`default_deny_read`](Self::default_deny_read) is on. Enforced
    /// outside the writable directories; see `docs/sandbox.md` for the one
    /// limit.
    pub deny_read: Vec<PathBuf>,
    /// Whether [`SECRET_PATHS`] are denied too (default `true`). Turning it
    /// off is the explicit way to drop every default denial.
    pub default_deny_read: bool,
    /// Paths taken out of the denied set, written as in
    /// [`SECRET_PATHS`] or [`deny_read`](Self::deny_read) (`~/.kube`): the
    /// explicit way to drop one default denial.
    pub allow_read: Vec<PathBuf>,
    /// What to do where the mode cannot be enforced.
    pub on_unsupported: OnUnsupported,
    /// Which environment variables reach commands.
    pub env: EnvFilter,
    /// Let commands create unix-domain sockets (`socket(AF_UNIX, …)`),
    /// and so reach daemons outside the sandbox through theirs: the ssh
    /// agent, docker, a terminal multiplexer, a database. Off by default:
    /// the seccomp filter refuses them (`socketpair` always works).
    pub allow_unix_sockets: bool,
    /// The ceilings of each call: how many processes and how much memory
    /// (`{"processes": 4096, "memory": "8GiB"}`); see [`SandboxLimits`].
    pub limits: SandboxLimits,
}

impl Default for SandboxPolicy {
    fn default() -> Self {
        SandboxPolicy {
            mode: SandboxMode::default(),
            network: None,
            writable: Vec::new(),
            deny_read: Vec::new(),
            default_deny_read: true,
            allow_read: Vec::new(),
            on_unsupported: OnUnsupported::default(),
            env: EnvFilter::default(),
            allow_unix_sockets: false,
            limits: SandboxLimits::default(),
        }
    }
}

impl SandboxPolicy {
    /// A policy with this mode and every other setting at its default
    /// (the [`SECRET_PATHS`] denied).
    pub fn new(mode: SandboxMode) -> Self {
        SandboxPolicy {
            mode,
            ..SandboxPolicy::default()
        }
    }

    /// Turns the network on or off (instead of the mode's default).
    pub fn with_network(mut self, allowed: bool) -> Self {
        self.network = Some(allowed);
        self
    }

    /// Adds a writable directory.
    pub fn with_writable(mut self, dir: impl Into<PathBuf>) -> Self {
        self.writable.push(dir.into());
        self
    }

    /// Adds a path commands may not read.
    pub fn with_deny_read(mut self, path: impl Into<PathBuf>) -> Self {
        self.deny_read.push(path.into());
        self
    }

    /// Denies the usual credential stores of the home directory,
    /// [`SECRET_PATHS`] (the default; this turns
    /// [`default_deny_read`](Self::default_deny_read) back on).
    pub fn with_default_secret_paths(mut self) -> Self {
        self.default_deny_read = true;
        self
    }

    /// Stops denying [`SECRET_PATHS`] by default (the paths in
    /// [`deny_read`](Self::deny_read) stay denied).
    pub fn without_default_secret_paths(mut self) -> Self {
        self.default_deny_read = false;
        self
    }

    /// Takes `path` out of the denied set (see
    /// [`allow_read`](Self::allow_read)).
    pub fn with_allow_read(mut self, path: impl Into<PathBuf>) -> Self {
        self.allow_read.push(path.into());
        self
    }

    /// The paths commands may not read, as written (`~/` not expanded):
    /// [`SECRET_PATHS`] unless turned off, then
    /// [`deny_read`](Self::deny_read), less [`allow_read`](Self::allow_read),
    /// without duplicates.
    pub fn denied_read(&self) -> Vec<PathBuf> {
        let defaults = SECRET_PATHS
            .iter()
            .map(|path| PathBuf::from(*path))
            .filter(|_| self.default_deny_read);
        let mut denied: Vec<PathBuf> = Vec::new();
        for path in defaults.chain(self.deny_read.iter().cloned()) {
            if !denied.contains(&path) && !self.allow_read.contains(&path) {
                denied.push(path);
            }
        }
        denied
    }

    /// Sets what happens where the mode cannot be enforced.
    pub fn with_on_unsupported(mut self, action: OnUnsupported) -> Self {
        self.on_unsupported = action;
        self
    }

    /// Replaces the environment filter.
    pub fn with_env(mut self, env: EnvFilter) -> Self {
        self.env = env;
        self
    }

    /// Lets commands create unix-domain sockets (see
    /// [`allow_unix_sockets`](Self::allow_unix_sockets)).
    pub fn with_unix_sockets(mut self, allowed: bool) -> Self {
        self.allow_unix_sockets = allowed;
        self
    }

    /// Sets the ceilings of each call.
    pub fn with_limits(mut self, limits: SandboxLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Whether commands may use the network under this policy.
    pub fn network_allowed(&self) -> bool {
        self.network
            .unwrap_or(!matches!(self.mode, SandboxMode::ReadOnly))
    }
}

/// Credential stores every policy denies unless it says otherwise
/// ([`SandboxPolicy::default_deny_read`], [`SandboxPolicy::allow_read`]).
pub const SECRET_PATHS: &[&str] = &[
    "~/.ssh",
    "~/.gnupg",
    "~/.aws",
    "~/.azure",
    "~/.config/gcloud",
    "~/.config/gh",
    "~/.docker/config.json",
    "~/.kube",
    "~/.netrc",
    "~/.git-credentials",
    "~/.npmrc",
    "~/.pypirc",
    "~/.cargo/credentials.toml",
];

/// `~/rest` → `$HOME/rest`; anything else unchanged.
pub(crate) fn expand_home(path: &Path, home: Option<&Path>) -> PathBuf {
    match (path.strip_prefix("~"), home) {
        (Ok(rest), Some(home)) => home.join(rest),
        _ => path.to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_use_codex_names() {
        for (mode, name) in [
            (SandboxMode::ReadOnly, "\"read-only\""),
            (SandboxMode::WorkspaceWrite, "\"workspace-write\""),
            (SandboxMode::DangerFullAccess, "\"danger-full-access\""),
        ] {
            assert_eq!(serde_json::to_string(&mode).unwrap(), name);
            assert_eq!(name.trim_matches('"').parse::<SandboxMode>(), Ok(mode));
        }
        assert!("full".parse::<SandboxMode>().is_err());
    }

    #[test]
    fn config_key_parses_and_defaults() {
        let policy: SandboxPolicy = serde_json::from_value(serde_json::json!({
            "mode": "read-only",
            "deny_read": ["~/.ssh"],
            "on_unsupported": "error",
        }))
        .unwrap();
        assert_eq!(policy.mode, SandboxMode::ReadOnly);
        assert!(!policy.network_allowed());
        assert_eq!(policy.on_unsupported, OnUnsupported::Error);
        let default: SandboxPolicy = serde_json::from_value(serde_json::json!({})).unwrap();
        assert_eq!(default.mode, SandboxMode::WorkspaceWrite);
        assert!(default.network_allowed());
        assert!(serde_json::from_value::<SandboxPolicy>(serde_json::json!({"mdoe": "x"})).is_err());
    }

    #[test]
    fn a_key_naming_other_fields_keeps_the_default_denials() {
        let policy: SandboxPolicy =
            serde_json::from_value(serde_json::json!({"network": false, "deny_read": ["~/p"]}))
                .unwrap();
        let denied = policy.denied_read();
        for secret in SECRET_PATHS {
            assert!(denied.contains(&PathBuf::from(secret)), "{secret} kept");
        }
        assert!(denied.contains(&PathBuf::from("~/p")));
        assert_eq!(
            SandboxPolicy::default().denied_read().len(),
            SECRET_PATHS.len()
        );

        let one_less: SandboxPolicy =
            serde_json::from_value(serde_json::json!({"allow_read": ["~/.kube"]})).unwrap();
        let denied = one_less.denied_read();
        assert!(!denied.contains(&PathBuf::from("~/.kube")));
        assert_eq!(denied.len(), SECRET_PATHS.len() - 1);

        let none: SandboxPolicy = serde_json::from_value(
            serde_json::json!({"default_deny_read": false, "deny_read": ["~/p"]}),
        )
        .unwrap();
        assert_eq!(none.denied_read(), [PathBuf::from("~/p")]);
    }

    #[test]
    fn home_expansion() {
        let home = Path::new("/home/u");
        assert_eq!(
            expand_home(Path::new("~/.ssh"), Some(home)),
            Path::new("/home/u/.ssh")
        );
        assert_eq!(
            expand_home(Path::new("/etc"), Some(home)),
            Path::new("/etc")
        );
        assert_eq!(expand_home(Path::new("~/.ssh"), None), Path::new("~/.ssh"));
    }
}
