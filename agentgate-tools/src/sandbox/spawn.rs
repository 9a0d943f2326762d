//! [`Sandbox`]: a policy plus what this machine can enforce, turned into a
//! [`PreparedCommand`] for each call.

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{Value, json};

use super::denial::{Boundary, SandboxDenial, find_denials};
use super::policy::{OnUnsupported, SandboxPolicy};
pub use super::protected_changes::ProtectedChange;
use super::roots::{DeniedSet, FixedRoots, Held, RootInputs};
use super::status::{Guard, SandboxStatus};
use crate::files::external::EXTERNAL_DIRECTORY;
use crate::files::request::ToolRequest;

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
    /// The tool-output (spill) directory. It is never a writable root: the
    /// agent writes it itself (without following links), and commands read
    /// it like any other readable path.
    pub tool_output: Option<PathBuf>,
    /// Directories a person granted to the sandbox for this call: the
    /// `external_directory` requests answered with
    /// [`Reply::Grant`](agentgate_permission::Reply::Grant) (see
    /// [`approved_directories`]). An approval by a rule, by `--auto` or by
    /// any `once`/`always` answer never lands here; the policy's
    /// [`writable`](SandboxPolicy::writable) list opens directories ahead
    /// of time.
    pub approved: Vec<PathBuf>,
}

/// The directories the `external_directory` requests of a call name (their
/// `dir/*` patterns without the `/*`), for [`CallScope::approved`]. Call it
/// with the requests a person granted to the sandbox (answered
/// [`Reply::Grant`](agentgate_permission::Reply::Grant)), never with every
/// request that was allowed.
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
    /// What this machine enforces of the policy: probed on the first
    /// [`Sandbox::status`] or [`Sandbox::prepare`] (so before any command
    /// is spawned), not when the sandbox is built; shared with the
    /// sandboxes [`Sandbox::with_base_environment`] derives.
    probed: Arc<OnceLock<Probed>>,
    base_env: Option<Vec<(OsString, OsString)>>,
    reported: Mutex<HashSet<String>>,
    /// The denied paths and read rules, resolved on the first call.
    denied: OnceLock<DeniedSet>,
    /// Each session's roots, resolved on its first call.
    roots: Mutex<HashMap<RootsKey, Arc<FixedRoots>>>,
    /// Each project's protected names below its directory, walked and
    /// watched from its first call in `workspace-write`.
    #[cfg(target_os = "linux")]
    nested: Mutex<HashMap<RootsKey, Arc<super::nested::NestedIndex>>>,
}

/// What the kernel supports for one policy: the status and (on Linux)
/// the kernel layer, built from the once-per-process probes.
#[derive(Debug)]
struct Probed {
    status: SandboxStatus,
    #[cfg(target_os = "linux")]
    kernel: Arc<super::kernel::KernelLayer>,
}

impl Probed {
    /// Probes what this machine enforces of `policy` (each kernel probe
    /// runs once per process; a second policy reuses them).
    fn probe(policy: &SandboxPolicy) -> Probed {
        #[cfg(target_os = "linux")]
        let kernel = Arc::new(super::kernel::KernelLayer::new(
            policy,
            &super::namespaces::available(),
        ));
        #[cfg(target_os = "linux")]
        let status = {
            let mut status = kernel.add_to(detect(policy));
            let enforced = |guard: &Guard| matches!(guard, Guard::Enforced { .. });
            if policy.mode == super::policy::SandboxMode::WorkspaceWrite
                && kernel.mounts()
                && enforced(&status.filesystem)
                && enforced(&status.descendants)
            {
                status.protected_paths = Guard::Enforced {
                    by: "read-only bind mounts in the command's mount namespace, of those that exist when the call starts, at any depth of the worktree, in folders pinned in place; what a command creates is asked as protected_path after it ended (the file tools ask it before)".to_string(),
                };
            }
            status
        };
        #[cfg(not(target_os = "linux"))]
        let status = detect(policy).without_kernel_layer(policy.mode);
        if status.is_degraded() {
            tracing::warn!(status = %status.summary(), "sandbox degraded");
        }
        Probed {
            status,
            #[cfg(target_os = "linux")]
            kernel,
        }
    }
}

/// Whose roots: one project (directory and worktree as the host gives
/// them), for every session of this sandbox.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct RootsKey {
    directory: PathBuf,
    worktree: PathBuf,
}

/// At most this many projects' roots are held (a few descriptors each);
/// past it they are all let go, and each project's next call resolves its
/// roots again.
const MAX_HELD_PROJECTS: usize = 128;

impl Default for Sandbox {
    fn default() -> Self {
        Sandbox::new(SandboxPolicy::default())
    }
}

impl Sandbox {
    /// A sandbox for `policy`. What the kernel supports is probed (once
    /// per process, by spawning `true` under each part) on the first
    /// [`status`](Sandbox::status) or [`prepare`](Sandbox::prepare), so
    /// building an agent does not wait for it; every command is still
    /// prepared after the probe.
    pub fn new(policy: SandboxPolicy) -> Self {
        Sandbox {
            inner: Arc::new(Inner {
                policy,
                probed: Arc::new(OnceLock::new()),
                base_env: None,
                reported: Mutex::new(HashSet::new()),
                denied: OnceLock::new(),
                roots: Mutex::new(HashMap::new()),
                #[cfg(target_os = "linux")]
                nested: Mutex::new(HashMap::new()),
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
                probed: Arc::clone(&self.inner.probed),
                base_env: Some(vars.into_iter().collect()),
                reported: Mutex::new(HashSet::new()),
                denied: OnceLock::new(),
                roots: Mutex::new(HashMap::new()),
                #[cfg(target_os = "linux")]
                nested: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// The policy.
    pub fn policy(&self) -> &SandboxPolicy {
        &self.inner.policy
    }

    /// What this machine enforces of the policy (probed on the first
    /// call, see [`Sandbox::new`]).
    pub fn status(&self) -> &SandboxStatus {
        &self.probed().status
    }

    /// The probe's result: filled once, by whichever thread asks first
    /// (the others wait for it).
    fn probed(&self) -> &Probed {
        self.inner
            .probed
            .get_or_init(|| Probed::probe(&self.inner.policy))
    }

    /// Whether the kernel has been probed for this sandbox yet.
    #[cfg(test)]
    fn is_probed(&self) -> bool {
        self.inner.probed.get().is_some()
    }

    /// Whether a person can grant a directory to a call
    /// ([`CallScope::approved`]): writes are restricted to the workspace
    /// and that is enforced here.
    pub fn offers_grants(&self) -> bool {
        self.inner.policy.mode == super::policy::SandboxMode::WorkspaceWrite
            && matches!(self.status().filesystem, Guard::Enforced { .. })
    }

    /// Logs a degraded status the first time a session asks; true then.
    fn report(&self, session_id: &str) -> bool {
        if !self.status().is_degraded() {
            return false;
        }
        let first = match self.inner.reported.lock() {
            Ok(mut seen) => seen.insert(session_id.to_string()),
            Err(poisoned) => poisoned.into_inner().insert(session_id.to_string()),
        };
        if first {
            tracing::warn!(
                session = session_id,
                status = %self.status().summary(),
                "the sandbox cannot enforce everything its policy asks on this machine"
            );
        }
        first
    }

    /// The denied paths and read rules, resolved on the first call.
    fn denied_set(&self, home: Option<&Path>) -> &DeniedSet {
        self.inner
            .denied
            .get_or_init(|| DeniedSet::resolve(&self.inner.policy, home))
    }

    /// The roots of `scope`'s project: resolved and opened on the first
    /// call there, held for every later one of any session (a new sandbox,
    /// for a changed policy, resolves them again).
    fn roots(&self, scope: &CallScope, home: Option<&Path>) -> Arc<FixedRoots> {
        let key = RootsKey {
            directory: scope.directory.clone(),
            worktree: scope.worktree.clone(),
        };
        let mut held = match self.inner.roots.lock() {
            Ok(held) => held,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some(roots) = held.get(&key) {
            return Arc::clone(roots);
        }
        let roots = Arc::new(FixedRoots::resolve(
            &RootInputs {
                policy: &self.inner.policy,
                directory: &scope.directory,
                worktree: &scope.worktree,
                home,
            },
            self.denied_set(home),
        ));
        if held.len() >= MAX_HELD_PROJECTS {
            held.clear();
        }
        held.insert(key, Arc::clone(&roots));
        roots
    }

    /// The index of protected names below `scope`'s project: walked and
    /// watched on its first call, held for every later one. Its folders
    /// are the project directory and the worktree where they are writable
    /// roots (the worktree alone when it holds the directory).
    #[cfg(target_os = "linux")]
    fn nested(
        &self,
        scope: &CallScope,
        roots: &FixedRoots,
        opened: &[PathBuf],
    ) -> Arc<super::nested::NestedIndex> {
        let key = RootsKey {
            directory: scope.directory.clone(),
            worktree: scope.worktree.clone(),
        };
        let mut held = match self.inner.nested.lock() {
            Ok(held) => held,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some(index) = held.get(&key) {
            return Arc::clone(index);
        }
        let writable = roots.writable_paths().unwrap_or_default();
        let is_writable = |dir: &Path| {
            dir.canonicalize()
                .is_ok_and(|canonical| writable.contains(&canonical))
        };
        let folders: Vec<PathBuf> =
            if scope.directory.starts_with(&scope.worktree) && is_writable(&scope.worktree) {
                vec![scope.worktree.clone()]
            } else {
                [&scope.directory, &scope.worktree]
                    .into_iter()
                    .filter(|dir| is_writable(dir))
                    .cloned()
                    .collect()
            };
        let index = Arc::new(super::nested::NestedIndex::new(
            folders,
            super::protected_roots(&scope.directory, &scope.worktree),
            opened.to_vec(),
        ));
        if held.len() >= MAX_HELD_PROJECTS {
            held.clear();
        }
        held.insert(key, Arc::clone(&index));
        index
    }

    /// The writable roots of `scope`'s project (resolved on its first call,
    /// held since), when writes are restricted.
    pub fn writable_roots(&self, scope: &CallScope) -> Option<Vec<PathBuf>> {
        let env: Vec<(OsString, OsString)> = Vec::new();
        self.roots(scope, home_dir(&env).as_deref())
            .writable_paths()
    }

    /// Prepares a command for `scope`: its environment, and (on Linux) what
    /// its child does between fork and exec. The writable set and the
    /// denied paths are those fixed on the project's first call; a path
    /// replaced since (by a symbolic link, say) moves nothing.
    pub fn prepare(&self, scope: &CallScope) -> Result<PreparedCommand, SandboxError> {
        let policy = &self.inner.policy;
        // The probe, before anything of the command is prepared.
        let probed = self.probed();
        let status = &probed.status;
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
        let roots = self.roots(scope, home.as_deref());
        let granted = granted_roots(&scope.approved, &roots);
        let unenforced = roots.unenforced.clone();
        // Where a mount namespace is available, those are masked instead.
        #[cfg(target_os = "linux")]
        let masked = probed.kernel.masks();
        #[cfg(not(target_os = "linux"))]
        let masked = false;
        for path in unenforced.iter().filter(|_| !masked) {
            tracing::debug!(
                path = %path.display(),
                "sandbox: a denied path inside a writable directory stays readable"
            );
        }
        let writable = roots.writable_paths().map(|mut paths| {
            paths.extend(granted.iter().map(|g| g.path.clone()));
            paths
        });
        let denied = roots.denied.clone();
        let filesystem = matches!(status.filesystem, Guard::Enforced { .. });
        let network_off = matches!(status.network, Guard::Enforced { .. });
        let protects = filesystem && policy.mode == super::policy::SandboxMode::WorkspaceWrite;
        let opened = if protects {
            opened_protected(policy, scope, home.as_deref())
        } else {
            Vec::new()
        };
        // Protected names below the project: those that exist are mounted
        // read-only with the top-level ones, what the command makes is
        // read from the index's watch once it ended.
        #[cfg(target_os = "linux")]
        let (nested, nested_existing) = if protects {
            let (hold, existing) = self.nested(scope, &roots, &opened).begin();
            (Some(hold), existing)
        } else {
            (None, Vec::new())
        };
        #[cfg(not(target_os = "linux"))]
        let call_bounds = super::bounds::CallBounds::default();
        #[cfg(target_os = "linux")]
        let (plan, call_bounds) = {
            let landlock = if filesystem {
                let held = roots.writable.iter().flatten().chain(&granted);
                let denied_set = self.denied_set(home.as_deref());
                super::landlock::ruleset(&denied_set.readable, &denied_set.listable, held)
                    .map_err(|error| SandboxError::Landlock(error.to_string()))?
            } else {
                None
            };
            let pid = matches!(status.descendants, Guard::Enforced { .. });
            let namespaces = super::namespaces::Namespaces::new(pid, network_off);
            let (bounds, limits) =
                super::bounds::prepare(&policy.limits, namespaces.user_namespace());
            let plan = super::child::ChildPlan::new(
                namespaces,
                policy.mode.restricts_files(),
                landlock,
                {
                    let mut readonly = protected_paths(policy, scope, home.as_deref());
                    for path in nested_existing {
                        if !readonly.contains(&path) {
                            readonly.push(path);
                        }
                    }
                    let pinned = pinned_folders(&readonly, scope);
                    probed
                        .kernel
                        .plan(pid, &unenforced, &readonly, &pinned, Some(&scope.cwd))
                },
                limits,
            );
            (Some(plan), bounds)
        };
        let watched = if protects {
            watch_protected(scope, &opened)
        } else {
            Vec::new()
        };
        Ok(PreparedCommand {
            env,
            watched,
            #[cfg(target_os = "linux")]
            nested,
            settled: std::sync::atomic::AtomicBool::new(false),
            taken: Mutex::new(Vec::new()),
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
            bounds: call_bounds,
        })
    }
}

/// The watches on the protected names of `scope`'s project (the fixed
/// ones and those git derives), whose changes the command's end reports.
fn watch_protected(
    scope: &CallScope,
    opened: &[PathBuf],
) -> Vec<super::protected_changes::Watched> {
    let roots = super::protected_roots(&scope.directory, &scope.worktree);
    let derived: Vec<PathBuf> = crate::git::protected_paths(&scope.directory, &scope.worktree)
        .into_iter()
        .map(|entry| entry.path)
        .collect();
    super::protected_changes::watch(&roots, &derived, opened)
}

impl Drop for PreparedCommand {
    /// A call dropped before it asked about its protected changes (its
    /// future dropped while the command ran; the command's process group
    /// is killed first) asks nothing and keeps nothing: what it created is
    /// moved aside, as a cancelled call's is.
    fn drop(&mut self) {
        if self.settled.load(std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        let taken: Vec<ProtectedChange> = match self.taken.lock() {
            Ok(mut taken) => std::mem::take(&mut *taken),
            Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
        };
        let mut changes = self.protected_changes();
        for change in taken {
            if !changes.contains(&change) {
                changes.push(change);
            }
        }
        for change in changes {
            // Only what is still there: one already undone is gone.
            if std::fs::symlink_metadata(&change.path).is_err() {
                continue;
            }
            if let Err(error) = change.undo() {
                tracing::warn!(%error, "sandbox: a protected change of a dropped call");
            }
        }
    }
}

/// A command's sandbox, ready to apply to a `tokio::process::Command`.
#[derive(Debug)]
pub struct PreparedCommand {
    env: Vec<(OsString, OsString)>,
    watched: Vec<super::protected_changes::Watched>,
    /// The project's index of protected names below its directory, held
    /// while the command runs.
    #[cfg(target_os = "linux")]
    nested: Option<super::nested::InFlight>,
    /// Whether the caller has settled the protected changes
    /// ([`settled`](Self::settled)); if not when this is dropped (the
    /// call's future was dropped mid-command or mid-ask), they are undone
    /// then.
    settled: std::sync::atomic::AtomicBool,
    /// The changes handed out so far (the watch reports each once).
    taken: Mutex<Vec<ProtectedChange>>,
    #[cfg(target_os = "linux")]
    plan: Option<super::child::ChildPlan>,
    cwd: PathBuf,
    writable: Option<Vec<PathBuf>>,
    denied: Vec<PathBuf>,
    network_off: bool,
    status: SandboxStatus,
    first_report: bool,
    /// The call's ceilings (its cgroup leaf, removed when this drops).
    bounds: super::bounds::CallBounds,
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

    /// Starts `program` with `args` in `cwd` under this sandbox: standard
    /// input from `/dev/null`, standard output and error piped
    /// ([`SandboxedChild::stdout`](super::SandboxedChild::stdout)), the
    /// sandbox's environment, its own session and process group (its pid).
    /// Dropping the child before it was waited for kills it. Call once;
    /// `program` without a `/` is looked up on the command's `PATH`.
    ///
    /// Where the command gets a PID namespace and loses its capabilities
    /// (`read-only` and `workspace-write` on Linux 5.3 or later, x86-64 and
    /// AArch64), nothing of the agent is copied: its init and the command
    /// are cloned sharing the agent's memory, each on a stack of its own,
    /// and take the same steps as under [`apply`](Self::apply) (see the
    /// repository's `docs/sandbox.md`). Elsewhere this is
    /// [`apply`](Self::apply) on a `tokio::process::Command`, spawned. Must
    /// be called within a tokio runtime with I/O enabled.
    ///
    /// ```
    /// use agentgate_tools::{CallScope, Sandbox, SandboxPolicy};
    /// use tokio::io::AsyncReadExt;
    ///
    /// # fn main() -> std::io::Result<()> {
    /// # let project = std::env::temp_dir().join("agentgate-spawn-doc");
    /// # std::fs::create_dir_all(&project)?;
    /// # tokio::runtime::Runtime::new()?.block_on(async {
    /// let sandbox = Sandbox::new(SandboxPolicy::default()); // workspace-write
    /// let scope = CallScope {
    ///     session_id: "ses_1".into(),
    ///     directory: project.clone(),
    ///     worktree: project.clone(),
    ///     cwd: project.clone(),
    ///     ..CallScope::default()
    /// };
    /// let mut prepared = sandbox.prepare(&scope).map_err(std::io::Error::other)?;
    /// let mut child = prepared.spawn("bash".as_ref(), ["-c", "echo hi; exit 3"], &project)?;
    /// let mut output = String::new();
    /// if let Some(mut stdout) = child.stdout.take() {
    ///     stdout.read_to_string(&mut output).await?;
    /// }
    /// let status = child.wait().await?;
    /// // Ask about (or undo) what it did to protected names, then:
    /// prepared.settled();
    /// assert_eq!((output.as_str(), status.code()), ("hi\n", Some(3)));
    /// # Ok(())
    /// # })
    /// # }
    /// ```
    pub fn spawn<I, S>(
        &mut self,
        program: &Path,
        args: I,
        cwd: &Path,
    ) -> std::io::Result<super::SandboxedChild>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        // Checked before anything starts: the child's pipes and its end
        // are watched by the runtime's reactor.
        if let Err(error) = tokio::runtime::Handle::try_current() {
            return Err(std::io::Error::other(format!(
                "PreparedCommand::spawn must be called within a tokio runtime: {error}"
            )));
        }
        let args: Vec<OsString> = args.into_iter().map(|a| a.as_ref().to_owned()).collect();
        #[cfg(all(
            target_os = "linux",
            any(target_arch = "x86_64", target_arch = "aarch64")
        ))]
        if let Some(plan) = self.plan.as_ref().filter(|plan| plan.can_start_by_clone())
            && super::clone_launch::supported()
        {
            use super::clone_launch::{ExecSpec, LaunchError, launch};
            let spec = ExecSpec::new(program, &args, &self.env, cwd)?;
            match launch(plan, &spec) {
                Ok(launched) => {
                    self.plan = None;
                    return super::SandboxedChild::from_launched(launched);
                }
                // This kernel refuses the clone: fork as before.
                Err(LaunchError::Unsupported) => {}
                Err(LaunchError::Failed(error)) => return Err(error),
            }
        }
        let mut command = tokio::process::Command::new(program);
        command
            .args(&args)
            .current_dir(cwd)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        self.apply(&mut command);
        command.spawn().map(super::SandboxedChild::from_tokio)
    }

    /// The protected names ([`PROTECTED_NAMES`](super::PROTECTED_NAMES))
    /// the command created, or replaced where they were links: call it
    /// once the command has ended. Those that existed are read-only to it;
    /// these it could write, and the next run would trust them, so the
    /// caller asks `protected_path` for each and
    /// [undoes](ProtectedChange::undo) what is not allowed. Empty outside
    /// `workspace-write` or where writes are not restricted.
    ///
    /// Call [`settled`](Self::settled) once each is asked and kept or
    /// undone; until then, dropping this undoes them all (a call dropped
    /// mid-ask keeps nothing).
    pub fn protected_changes(&self) -> Vec<ProtectedChange> {
        let mut changes: Vec<ProtectedChange> =
            self.watched.iter().filter_map(|w| w.changed()).collect();
        #[cfg(target_os = "linux")]
        if let Some(nested) = &self.nested {
            let fresh = nested.changes();
            match self.taken.lock() {
                Ok(mut taken) => taken.extend(fresh.iter().cloned()),
                Err(poisoned) => poisoned.into_inner().extend(fresh.iter().cloned()),
            }
            changes.extend(fresh);
        }
        changes
    }

    /// The caller has asked about every protected change and kept or
    /// undone each: dropping this no longer undoes them.
    pub fn settled(&self) {
        self.settled
            .store(true, std::sync::atomic::Ordering::SeqCst);
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
        lines.extend(self.limit_reached().map(|reached| reached.message()));
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
            "limit": serde_json::to_value(self.limit_reached()).unwrap_or(Value::Null),
        })
    }

    /// The ceiling (`sandbox.limits`) the command reached, if any: once it
    /// has, the caller ends the call ([`limit_watch`](Self::limit_watch)
    /// says when). Known where the call runs in a cgroup leaf of its own
    /// (see [`SandboxStatus::limits`]); where resource limits stand in, a
    /// fork or an allocation past them fails inside the command instead.
    pub fn limit_reached(&self) -> Option<super::LimitReached> {
        self.bounds.reached()
    }

    /// Resolves once the command reached a ceiling (checked every 25 ms);
    /// never where that cannot be seen. Select on it with the command's
    /// end, and end the call (kill its process group) when it resolves:
    /// a fork bomb at the process ceiling does not end by itself.
    pub async fn limit_watch(&self) -> super::LimitReached {
        if !self.bounds.watched() {
            return std::future::pending().await;
        }
        loop {
            tokio::time::sleep(std::time::Duration::from_millis(25)).await;
            if let Some(reached) = self.bounds.reached() {
                return reached;
            }
        }
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
        let (fixed_roots, protected_paths) = roots_guards(policy, &filesystem);
        let user_namespace =
            !root && matches!(descendants, Guard::Enforced { .. }) && namespaces.is_ok();
        let limits = super::bounds::guard(&policy.limits, user_namespace);
        SandboxStatus::new(policy.mode, filesystem, network, descendants)
            .with_roots(fixed_roots, protected_paths)
            .with_limits(limits)
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

/// The state of the fixed roots and of the protected paths, given the
/// file system guard.
#[cfg(target_os = "linux")]
fn roots_guards(policy: &SandboxPolicy, filesystem: &Guard) -> (Guard, Guard) {
    if !matches!(filesystem, Guard::Enforced { .. }) {
        return (filesystem.clone(), filesystem.clone());
    }
    let fixed = Guard::Enforced {
        by:
            "Landlock rules built from descriptors opened once per project, without following links"
                .to_string(),
    };
    let protected = if policy.mode == super::policy::SandboxMode::WorkspaceWrite {
        Guard::Unavailable {
            reason: "commands can still write .git, opencode.json, .opencode and what the git configuration runs inside the project (Landlock cannot take them out of the writable project); the file tools ask protected_path".to_string(),
        }
    } else {
        Guard::Enforced {
            by: "read-only mode".to_string(),
        }
    };
    (fixed, protected)
}

/// The protected paths ([`PROTECTED_NAMES`](super::PROTECTED_NAMES)) of
/// the call's project and worktree, and those of
/// [`protected_paths`](crate::protected_paths) (top-level names, what the
/// repository's git configuration runs or loads), that exist now, canonical: bound
/// read-only for its command in `workspace-write` (in `read-only` nothing
/// is writable anyway). One the policy's `writable` list names exactly
/// (`"writable": [".git"]`, relative to the project, lets commands commit)
/// stays writable: the user opened it knowingly.
#[cfg(target_os = "linux")]
fn protected_paths(policy: &SandboxPolicy, scope: &CallScope, home: Option<&Path>) -> Vec<PathBuf> {
    if policy.mode != super::policy::SandboxMode::WorkspaceWrite {
        return Vec::new();
    }
    let opened: Vec<PathBuf> = policy
        .writable
        .iter()
        .filter_map(|dir| {
            let dir = super::policy::expand_home(dir, home);
            scope.directory.join(dir).canonicalize().ok()
        })
        .collect();
    let named = super::protected_roots(&scope.directory, &scope.worktree)
        .into_iter()
        .flat_map(|root| {
            super::PROTECTED_NAMES
                .iter()
                .map(move |name| root.join(name))
        });
    let derived = crate::git::protected_paths(&scope.directory, &scope.worktree)
        .into_iter()
        .map(|entry| entry.path);
    // A link that leads to the project itself, or above it, is not bound:
    // that would make the whole project read-only.
    let project: Vec<PathBuf> = [&scope.directory, &scope.worktree]
        .into_iter()
        .filter_map(|dir| dir.canonicalize().ok())
        .collect();
    // The names share a few folders: each is resolved once.
    let mut canonical = super::canonical::CanonicalPaths::default();
    let mut found: Vec<PathBuf> = Vec::new();
    for path in named.chain(derived) {
        // One already bound covers what is below it (`.git/hooks/…` named
        // by `core.fsmonitor`).
        if let Some(path) = canonical.of(&path)
            && !project.iter().any(|dir| dir.starts_with(&path))
            && !found.iter().any(|bound| path.starts_with(bound))
            && !opened.contains(&path)
        {
            found.push(path);
        }
    }
    found
}

/// The folders that hold `readonly` (canonical protected entries), from
/// each entry's parent up to the project's outermost folder
/// ([`protected_folders`](super::protected_folders)), inclusive: bound onto
/// themselves, they cannot be renamed, so no entry moves away from where
/// the next run looks for it.
#[cfg(target_os = "linux")]
fn pinned_folders(readonly: &[PathBuf], scope: &CallScope) -> Vec<PathBuf> {
    let outermost: Vec<PathBuf> = super::protected_folders(&scope.directory, &scope.worktree)
        .into_iter()
        .filter_map(|folder| folder.canonicalize().ok())
        .collect();
    let mut pinned: Vec<PathBuf> = Vec::new();
    for entry in readonly {
        let Some(top) = outermost.iter().find(|top| entry.starts_with(top)) else {
            continue;
        };
        for folder in entry.ancestors().skip(1) {
            if !folder.starts_with(top) {
                break;
            }
            if !pinned.iter().any(|p| p == folder) {
                pinned.push(folder.to_path_buf());
            }
        }
    }
    pinned
}

/// The paths the policy's `writable` list names, as written (joined to the
/// project directory) and canonical where they exist.
fn opened_protected(
    policy: &SandboxPolicy,
    scope: &CallScope,
    home: Option<&Path>,
) -> Vec<PathBuf> {
    let mut opened = Vec::new();
    for dir in &policy.writable {
        let joined = scope.directory.join(super::policy::expand_home(dir, home));
        if let Ok(canonical) = joined.canonicalize() {
            opened.push(canonical);
        }
        opened.push(joined);
    }
    opened
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

/// The directories granted for one call, opened now; those that overlap
/// a denied path, are `/` or are already writable are left out (the host's
/// lists win over a call's grant).
fn granted_roots(approved: &[PathBuf], roots: &FixedRoots) -> Vec<Held> {
    if roots.writable.is_none() {
        return Vec::new();
    }
    let denied = roots.denied.iter().chain(&roots.unenforced);
    let denied: Vec<&PathBuf> = denied.collect();
    approved
        .iter()
        .filter_map(|dir| Held::open(dir))
        .filter(|held| held.dir && held.path != Path::new("/"))
        .filter(|held| {
            !denied
                .iter()
                .any(|d| d.starts_with(&held.path) || held.path.starts_with(d))
        })
        .collect()
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
        let sandbox = Sandbox::new(SandboxPolicy::default());
        let scope = CallScope {
            session_id: "s".into(),
            directory: dir.clone(),
            worktree: PathBuf::from("/"),
            cwd: dir.clone(),
            ..CallScope::default()
        };
        let roots = sandbox.writable_roots(&scope).unwrap();
        assert!(roots.contains(&dir));
        assert!(!roots.iter().any(|r| r == Path::new("/")));
        let held = sandbox.roots(&scope, None);
        let granted = granted_roots(
            &[PathBuf::from("/nonexistent-approved"), PathBuf::from("/")],
            &held,
        );
        assert!(granted.is_empty());
    }

    #[test]
    fn the_kernel_is_probed_once_on_the_first_prepare_not_when_built() {
        let dir = std::env::temp_dir().canonicalize().unwrap();
        let policy = SandboxPolicy {
            on_unsupported: OnUnsupported::Warn,
            ..SandboxPolicy::default()
        };
        let sandbox = Sandbox::new(policy);
        let derived = sandbox
            .clone()
            .with_base_environment([(OsString::from("PATH"), OsString::from("/usr/bin:/bin"))]);
        assert!(!sandbox.is_probed(), "building a sandbox probes nothing");
        assert!(!derived.is_probed());
        let scope = CallScope {
            session_id: "s".into(),
            directory: dir.clone(),
            worktree: dir.clone(),
            cwd: dir,
            ..CallScope::default()
        };
        // The first prepare (which every spawn goes through) probes,
        // before it returns the command.
        let prepared = derived.prepare(&scope).unwrap();
        assert!(derived.is_probed());
        // The slot is shared: the sandbox it was derived from and every
        // thread see the one result.
        assert!(sandbox.is_probed());
        let first: *const SandboxStatus = sandbox.status();
        let seen: Vec<usize> = std::thread::scope(|threads| {
            let handles: Vec<_> = (0..4)
                .map(|_| threads.spawn(|| derived.status() as *const SandboxStatus as usize))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(seen.iter().all(|&p| p == first as usize));
        assert_eq!(prepared.status.summary(), sandbox.status().summary());
    }
}
