//! [`Sandbox`]: a policy plus what this machine can enforce, turned into a
//! [`PreparedCommand`] for each call.

use std::collections::HashSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::denial::{Boundary, SandboxDenial, find_denials};
use super::policy::{OnUnsupported, SandboxMode, SandboxPolicy, expand_home};
use super::status::{Guard, SandboxStatus};
use crate::external::EXTERNAL_DIRECTORY;
use crate::request::ToolRequest;

/// Why a command could not be prepared.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SandboxError {
    /// The policy asks for errors where it cannot be enforced, and here it
    /// cannot.
    #[error(
        "the command was not run: {summary}. The sandbox policy says `on_unsupported: error`; run on a Linux kernel with Landlock and user namespaces, or set the sandbox mode to danger-full-access or on_unsupported to warn."
    )]
    Unsupported {
        /// What is and is not enforced.
        summary: String,
    },
    /// The Landlock ruleset could not be built.
    #[error("the sandbox could not build its Landlock ruleset: {0}")]
    Landlock(String),
}

/// The call a command is prepared for: where it runs and what it may write
/// besides the policy's own directories.
#[derive(Debug, Clone, Default)]
pub struct CallScope {
    /// The session (the status is logged once per session).
    pub session_id: String,
    /// The project directory.
    pub directory: PathBuf,
    /// The worktree (ignored when it is `/`, opencode's "no project").
    pub worktree: PathBuf,
    /// Where the command runs.
    pub cwd: PathBuf,
    /// The tool-output (spill) directory.
    pub tool_output: Option<PathBuf>,
    /// Directories an `external_directory` approval opened for this call
    /// (see [`approved_directories`]).
    pub approved: Vec<PathBuf>,
}

/// The directories the `external_directory` requests of a call name (their
/// `dir/*` patterns without the `/*`), for [`CallScope::approved`]. Call it
/// with the requests that were asked and approved.
pub fn approved_directories(requests: &[ToolRequest]) -> Vec<PathBuf> {
    requests
        .iter()
        .filter(|request| request.permission == EXTERNAL_DIRECTORY)
        .flat_map(|request| request.patterns.iter())
        .map(|pattern| {
            let dir = pattern.strip_suffix('*').unwrap_or(pattern);
            let dir = dir
                .strip_suffix('/')
                .filter(|d| !d.is_empty())
                .unwrap_or(dir);
            PathBuf::from(dir)
        })
        .collect()
}

/// A sandbox policy and what this machine enforces of it. Cheap to clone
/// (shared); give one to each tool that spawns processes.
#[derive(Debug, Clone)]
pub struct Sandbox {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    policy: SandboxPolicy,
    status: SandboxStatus,
    base_env: Option<Vec<(OsString, OsString)>>,
    reported: Mutex<HashSet<String>>,
    #[cfg(target_os = "linux")]
    kernel: Arc<super::kernel::KernelLayer>,
}

impl Default for Sandbox {
    fn default() -> Self {
        Sandbox::new(SandboxPolicy::default())
    }
}

impl Sandbox {
    /// A sandbox for `policy`; probes (once per process) what the kernel
    /// supports.
    pub fn new(policy: SandboxPolicy) -> Self {
        #[cfg(target_os = "linux")]
        let kernel = Arc::new(super::kernel::KernelLayer::new(
            &policy,
            &super::namespaces::available(),
        ));
        #[cfg(target_os = "linux")]
        let status = kernel.add_to(detect(&policy));
        #[cfg(not(target_os = "linux"))]
        let status = detect(&policy).without_kernel_layer(policy.mode);
        if status.is_degraded() {
            tracing::warn!(status = %status.summary(), "sandbox degraded");
        }
        Sandbox {
            inner: Arc::new(Inner {
                policy,
                status,
                base_env: None,
                reported: Mutex::new(HashSet::new()),
                #[cfg(target_os = "linux")]
                kernel,
            }),
        }
    }

    /// Commands start from these variables instead of the agent's own
    /// environment (the policy's filter still applies).
    pub fn with_base_environment(
        self,
        vars: impl IntoIterator<Item = (OsString, OsString)>,
    ) -> Self {
        Sandbox {
            inner: Arc::new(Inner {
                policy: self.inner.policy.clone(),
                status: self.inner.status.clone(),
                base_env: Some(vars.into_iter().collect()),
                reported: Mutex::new(HashSet::new()),
                #[cfg(target_os = "linux")]
                kernel: self.inner.kernel.clone(),
            }),
        }
    }

    /// The policy.
    pub fn policy(&self) -> &SandboxPolicy {
        &self.inner.policy
    }

    /// What this machine enforces of the policy.
    pub fn status(&self) -> &SandboxStatus {
        &self.inner.status
    }

    /// Logs a degraded status the first time a session asks; true then.
    fn report(&self, session_id: &str) -> bool {
        if !self.inner.status.is_degraded() {
            return false;
        }
        let first = match self.inner.reported.lock() {
            Ok(mut seen) => seen.insert(session_id.to_string()),
            Err(poisoned) => poisoned.into_inner().insert(session_id.to_string()),
        };
        if first {
            tracing::warn!(
                session = session_id,
                status = %self.inner.status.summary(),
                "the sandbox cannot enforce everything its policy asks on this machine"
            );
        }
        first
    }

    /// Prepares a command for `scope`: its environment, and (on Linux) what
    /// its child does between fork and exec.
    pub fn prepare(&self, scope: &CallScope) -> Result<PreparedCommand, SandboxError> {
        let policy = &self.inner.policy;
        let status = &self.inner.status;
        let first_report = self.report(&scope.session_id);
        if status.is_degraded() && policy.on_unsupported == OnUnsupported::Error {
            return Err(SandboxError::Unsupported {
                summary: status.summary(),
            });
        }
        let base = match &self.inner.base_env {
            Some(vars) => vars.clone(),
            None => std::env::vars_os().collect(),
        };
        let env = policy.env.apply(base);
        let home = home_dir(&env);
        let all_denied = denied_paths(policy, home.as_deref());
        let writable = match policy.mode {
            SandboxMode::DangerFullAccess => None,
            SandboxMode::ReadOnly => Some(Vec::new()),
            _ => Some(writable_roots(policy, scope, home.as_deref(), &all_denied)),
        };
        let (denied, unenforced): (Vec<PathBuf>, Vec<PathBuf>) =
            all_denied.into_iter().partition(|path| {
                !writable
                    .as_deref()
                    .is_some_and(|roots| roots.iter().any(|r| path.starts_with(r)))
            });
        // Where a mount namespace is available, those are masked instead.
        #[cfg(target_os = "linux")]
        let masked = self.inner.kernel.masks();
        #[cfg(not(target_os = "linux"))]
        let masked = false;
        for path in unenforced.iter().filter(|_| !masked) {
            tracing::debug!(
                path = %path.display(),
                "sandbox: a denied path inside a writable directory stays readable"
            );
        }
        let filesystem = matches!(status.filesystem, Guard::Enforced { .. });
        let network_off = matches!(status.network, Guard::Enforced { .. });
        #[cfg(target_os = "linux")]
        let plan = {
            let landlock = if filesystem {
                super::landlock::ruleset(&denied, writable.as_deref().unwrap_or_default())
                    .map_err(|error| SandboxError::Landlock(error.to_string()))?
            } else {
                None
            };
            let pid = matches!(status.descendants, Guard::Enforced { .. });
            Some(super::child::ChildPlan::new(
                super::namespaces::Namespaces::new(pid, network_off),
                policy.mode.restricts_files(),
                landlock,
                self.inner.kernel.plan(pid, &unenforced),
            ))
        };
        Ok(PreparedCommand {
            env,
            #[cfg(target_os = "linux")]
            plan,
            cwd: scope.cwd.clone(),
            writable: writable.filter(|_| filesystem),
            denied: match (filesystem, masked) {
                (true, true) => denied.into_iter().chain(unenforced).collect(),
                (true, false) => denied,
                (false, _) => Vec::new(),
            },
            network_off,
            status: status.clone(),
            first_report,
        })
    }
}

/// A command's sandbox, ready to apply to a `tokio::process::Command`.
#[derive(Debug)]
pub struct PreparedCommand {
    env: Vec<(OsString, OsString)>,
    #[cfg(target_os = "linux")]
    plan: Option<super::child::ChildPlan>,
    cwd: PathBuf,
    writable: Option<Vec<PathBuf>>,
    denied: Vec<PathBuf>,
    network_off: bool,
    status: SandboxStatus,
    first_report: bool,
}

impl PreparedCommand {
    /// Applies the sandbox to `command`: the filtered environment, its own
    /// session and process group, and on Linux the namespaces, reaper and
    /// Landlock ruleset between fork and exec. Call once, before spawning.
    pub fn apply(&mut self, command: &mut tokio::process::Command) {
        command.env_clear();
        command.envs(self.env.iter().map(|(k, v)| (k, v)));
        #[cfg(target_os = "linux")]
        if let Some(plan) = self.plan.take() {
            plan.install(command.as_std_mut());
            return;
        }
        #[cfg(unix)]
        command.process_group(0);
    }

    /// The writable roots (canonical), when writes are restricted.
    pub fn writable(&self) -> Option<&[PathBuf]> {
        self.writable.as_deref()
    }

    /// The sandbox denials visible in a command's `output`.
    pub fn denials(&self, output: &str) -> Vec<SandboxDenial> {
        if self.writable.is_none() && self.denied.is_empty() && !self.network_off {
            return Vec::new();
        }
        find_denials(
            output,
            &Boundary {
                cwd: &self.cwd,
                writable: self.writable.as_deref(),
                denied: &self.denied,
                network_off: self.network_off,
                could_write: agent_could_write,
            },
        )
    }

    /// The note for the model about `denials` (and, on the first call of a
    /// session, a degraded status); `None` when there is nothing to say.
    pub fn note(&self, denials: &[SandboxDenial]) -> Option<String> {
        let mut lines: Vec<String> = denials.iter().map(SandboxDenial::message).collect();
        if !denials.is_empty() {
            lines.push(
                "The sandbox limits commands to the workspace; do not retry the same action. \
                 If it is needed, ask the user to allow it."
                    .to_string(),
            );
        }
        if self.first_report {
            lines.push(self.status.summary());
        }
        (!lines.is_empty()).then(|| lines.join("\n"))
    }

    /// The `sandbox` entry of the call's metadata: status and denials.
    pub fn metadata(&self, denials: &[SandboxDenial]) -> Value {
        json!({
            "status": serde_json::to_value(&self.status).unwrap_or(Value::Null),
            "denials": serde_json::to_value(denials).unwrap_or(Value::Null),
        })
    }
}

/// Whether this (unsandboxed) process could write `path`, or create it in
/// its nearest existing ancestor.
fn agent_could_write(path: &Path) -> bool {
    #[cfg(target_os = "linux")]
    {
        let existing = path.ancestors().find(|p| p.exists());
        existing.is_some_and(super::sys::can_write)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = path;
        true
    }
}

/// What the policy asks that this machine can enforce.
fn detect(policy: &SandboxPolicy) -> SandboxStatus {
    #[cfg(target_os = "linux")]
    {
        let filesystem = if !policy.mode.restricts_files() {
            Guard::NotRequested
        } else {
            match super::landlock::abi() {
                Some(abi) => Guard::Enforced {
                    by: format!("landlock (ABI {abi}) and no_new_privs"),
                },
                None => Guard::Unavailable {
                    reason: "this kernel has no Landlock (Linux 5.13+ with landlock enabled)"
                        .to_string(),
                },
            }
        };
        let namespaces = super::namespaces::available();
        let network = if policy.network_allowed() {
            Guard::NotRequested
        } else {
            match &namespaces {
                Ok(()) => Guard::Enforced {
                    by: "a network namespace".to_string(),
                },
                Err(reason) => Guard::Unavailable {
                    reason: reason.clone(),
                },
            }
        };
        let root = super::sys::geteuid() == 0;
        let wants_pid = root || policy.mode.restricts_files() || !policy.network_allowed();
        let descendants = match (&namespaces, wants_pid) {
            (Ok(()), true) => Guard::Enforced {
                by: "a PID namespace".to_string(),
            },
            (Err(reason), _) => Guard::Unavailable {
                reason: format!("{reason}; only the process group is ended"),
            },
            (Ok(()), false) => Guard::Unavailable {
                reason: "danger-full-access runs a non-root user's commands without namespaces; only the process group is ended".to_string(),
            },
        };
        SandboxStatus::new(policy.mode, filesystem, network, descendants)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let unavailable = || Guard::Unavailable {
            reason: "the sandbox needs Linux (Landlock and namespaces)".to_string(),
        };
        let filesystem = if policy.mode.restricts_files() {
            unavailable()
        } else {
            Guard::NotRequested
        };
        let network = if policy.network_allowed() {
            Guard::NotRequested
        } else {
            unavailable()
        };
        SandboxStatus::new(policy.mode, filesystem, network, unavailable())
    }
}

fn home_dir(env: &[(OsString, OsString)]) -> Option<PathBuf> {
    std::env::var_os("HOME")
        .or_else(|| {
            env.iter()
                .find(|(name, _)| name == "HOME")
                .map(|(_, value)| value.clone())
        })
        .map(PathBuf::from)
}

/// The canonical writable roots of `workspace-write` for `scope`. A
/// directory approved for the call that overlaps a denied path is left out:
/// the host's list wins over a call's approval.
fn writable_roots(
    policy: &SandboxPolicy,
    scope: &CallScope,
    home: Option<&Path>,
    denied: &[PathBuf],
) -> Vec<PathBuf> {
    let mut candidates: Vec<PathBuf> = vec![scope.directory.clone()];
    if scope.worktree != Path::new("/") && !scope.worktree.as_os_str().is_empty() {
        candidates.push(scope.worktree.clone());
    }
    candidates.extend([
        std::env::temp_dir(),
        PathBuf::from("/tmp"),
        PathBuf::from("/var/tmp"),
        PathBuf::from("/dev/shm"),
    ]);
    if let Some(dir) = &scope.tool_output {
        // The spill directory is created lazily; make sure it exists so it
        // gets its rule.
        let _ = std::fs::create_dir_all(dir);
        candidates.push(dir.clone());
    }
    candidates.extend(policy.writable.iter().map(|p| expand_home(p, home)));
    candidates.extend(
        scope
            .approved
            .iter()
            .filter_map(|dir| dir.canonicalize().ok())
            .filter(|dir| {
                !denied
                    .iter()
                    .any(|d| d.starts_with(dir) || dir.starts_with(d))
            }),
    );
    let mut roots: Vec<PathBuf> = Vec::new();
    for candidate in candidates {
        let Ok(root) = candidate.canonicalize() else {
            continue;
        };
        if root != Path::new("/") && !roots.contains(&root) {
            roots.push(root);
        }
    }
    roots
}

/// The policy's denied paths that exist, canonical. (Those inside a
/// writable root cannot be enforced: Landlock cannot take away what a rule
/// above granted.)
fn denied_paths(policy: &SandboxPolicy, home: Option<&Path>) -> Vec<PathBuf> {
    let mut denied: Vec<PathBuf> = Vec::new();
    for path in &policy.deny_read {
        if let Ok(path) = expand_home(path, home).canonicalize()
            && !denied.contains(&path)
        {
            denied.push(path);
        }
    }
    denied
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approved_directories_come_from_external_directory_patterns() {
        let requests = vec![
            ToolRequest::new(EXTERNAL_DIRECTORY, "/data/in/*", "/data/in/*"),
            ToolRequest::new("bash", "ls", "ls *"),
            ToolRequest::new(EXTERNAL_DIRECTORY, "/*", "/*"),
        ];
        assert_eq!(
            approved_directories(&requests),
            [PathBuf::from("/data/in"), PathBuf::from("/")]
        );
    }

    #[test]
    fn writable_roots_skip_root_worktree_and_missing_dirs() {
        let dir = std::env::temp_dir().canonicalize().unwrap();
        let scope = CallScope {
            directory: dir.clone(),
            worktree: PathBuf::from("/"),
            cwd: dir.clone(),
            approved: vec![PathBuf::from("/nonexistent-approved"), PathBuf::from("/")],
            ..CallScope::default()
        };
        let roots = writable_roots(&SandboxPolicy::default(), &scope, None, &[]);
        assert!(roots.contains(&dir));
        assert!(!roots.iter().any(|r| r == Path::new("/")));
        assert!(!roots.iter().any(|r| r.starts_with("/nonexistent-approved")));
    }
}
