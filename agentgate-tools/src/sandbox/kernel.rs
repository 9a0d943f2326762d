//! The kernel layer under Landlock, in `read-only` and `workspace-write`:
//! a seccomp filter (`seccomp`), abstract unix sockets scoped by Landlock,
//! a private `/proc` and a minimal `/dev` with masks over the denied paths
//! inside writable roots (`mounts`), and no capabilities, even for root.
//!
//! [`KernelLayer::new`] takes what is built once per process — the BPF
//! programs, the scope ruleset, shared by every [`Sandbox`](super::Sandbox)
//! so a server with many sessions holds one descriptor, not one per
//! session — and says per guarantee what this machine enforces (probed once per process
//! by spawning `true` under each part); [`KernelLayer::plan`] hands a call
//! its [`KernelPlan`], which the child applies.

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use landlock::{CompatLevel, Compatible, Ruleset, RulesetAttr, Scope};

use super::mounts::MountPlan;
use super::namespaces::Namespaces;
use super::policy::{SandboxMode, SandboxPolicy};
use super::seccomp::{self, Program};
use super::status::{Guard, SandboxStatus};
use super::{reaper, sys};

/// What the kernel layer enforces, per guarantee, for the status.
#[derive(Debug, Clone)]
struct KernelGuards {
    seccomp: Guard,
    abstract_unix_sockets: Guard,
    private_proc: Guard,
    capabilities: Guard,
    credential_masking: Guard,
}

/// The kernel layer of one sandbox.
#[derive(Debug)]
pub(super) struct KernelLayer {
    seccomp: Option<Arc<Program>>,
    scope: Option<Arc<OwnedFd>>,
    mounts: bool,
    masks: bool,
    bounding_set: Option<bool>,
    guards: KernelGuards,
}

/// What a call's child does of the kernel layer, prepared before the fork.
#[derive(Debug, Default)]
pub(super) struct KernelPlan {
    /// Mounts (needs a mount namespace and the PID namespace).
    pub(super) mounts: Option<MountPlan>,
    seccomp: Option<Arc<Program>>,
    scope: Option<Arc<OwnedFd>>,
    /// Drop capabilities; `true`: the bounding set too.
    bounding_set: Option<bool>,
}

impl KernelPlan {
    /// After `no_new_privs` and the file system ruleset: the abstract-socket
    /// scope, the capabilities, and last the seccomp filter. Runs in the
    /// forked command process: system calls only.
    pub(super) fn enter_last(&self) -> std::io::Result<()> {
        if let Some(scope) = &self.scope {
            sys::landlock_restrict_self(scope.as_raw_fd())?;
        }
        if let Some(bounding_set) = self.bounding_set {
            sys::drop_capabilities(bounding_set)?;
        }
        if let Some(program) = &self.seccomp {
            sys::set_no_new_privs()?;
            sys::seccomp_install(program.instructions())?;
        }
        Ok(())
    }

    /// Whether the command ends up without any capability (so it can
    /// never ptrace, read or write the memory of its init, which keeps
    /// them).
    pub(super) fn drops_capabilities(&self) -> bool {
        self.bounding_set.is_some()
    }

    /// Whether the plan mounts anything (the namespaces then include a
    /// mount namespace).
    pub(super) fn mounts(&self) -> bool {
        self.mounts.is_some()
    }
}

impl KernelLayer {
    /// The layer for `policy`, given whether the PID namespace (and so a
    /// user namespace for a non-root user) is available here.
    pub(super) fn new(policy: &SandboxPolicy, namespaces: &Result<(), String>) -> KernelLayer {
        if !policy.mode.restricts_files() {
            return KernelLayer {
                seccomp: None,
                scope: None,
                mounts: false,
                masks: false,
                bounding_set: None,
                guards: KernelGuards {
                    seccomp: Guard::NotRequested,
                    abstract_unix_sockets: Guard::NotRequested,
                    private_proc: Guard::NotRequested,
                    capabilities: Guard::NotRequested,
                    credential_masking: Guard::NotRequested,
                },
            };
        }
        let support = support();
        let allow_unix = policy.allow_unix_sockets;

        let program = support.seccomp.clone().and_then(|()| program(allow_unix));
        let refused: Vec<&str> = seccomp::REFUSED.iter().map(|(name, _)| *name).collect();
        let seccomp_guard = match &program {
            Ok(_) => Guard::Enforced {
                by: format!(
                    "a seccomp filter refusing {}, vsock sockets and {}",
                    refused.join(", "),
                    if allow_unix {
                        "nothing of unix sockets (allow_unix_sockets)"
                    } else {
                        "new unix-domain sockets (socketpair stays)"
                    }
                ),
            },
            Err(reason) => Guard::Unavailable {
                reason: reason.clone(),
            },
        };

        let scope = abstract_socket_scope();
        let abstract_guard = match (&scope, allow_unix, &program) {
            (Some(_), _, _) => Guard::Enforced {
                by: "landlock (ABI 6) scope: no connection to abstract unix sockets made outside"
                    .to_string(),
            },
            (None, false, Ok(_)) => Guard::Enforced {
                by: "the seccomp filter (no new unix sockets); this kernel has no Landlock ABI 6 to scope abstract sockets as well".to_string(),
            },
            (None, _, _) => Guard::Unavailable {
                reason: "this kernel has no Landlock ABI 6 (Linux 6.12+), which scopes abstract unix sockets, and new unix sockets are allowed".to_string(),
            },
        };

        let mounts = match namespaces {
            Ok(()) => support.mounts.clone(),
            Err(reason) => Err(format!("no namespaces: {reason}")),
        };
        let proc_guard = match &mounts {
            Ok(()) => Guard::Enforced {
                by: "a private /proc of the command's PID namespace and a minimal /dev, in a mount namespace".to_string(),
            },
            Err(reason) => Guard::Unavailable {
                reason: format!("{reason}; commands see the host's /proc and /dev"),
            },
        };
        let wants_masks =
            policy.mode == SandboxMode::WorkspaceWrite && !policy.deny_read.is_empty();
        let masks_guard = match (&mounts, wants_masks) {
            (_, false) => Guard::NotRequested,
            (Ok(()), true) => Guard::Enforced {
                by: "an empty read-only mount over each denied path inside a writable directory"
                    .to_string(),
            },
            (Err(reason), true) => Guard::Unavailable {
                reason: format!(
                    "{reason}; a denied path inside a writable directory stays readable"
                ),
            },
        };

        let root = sys::geteuid() == 0;
        let user_namespace = !root && namespaces.is_ok();
        let bounding_set = root || user_namespace;
        let capabilities = support.capabilities.clone();
        let caps_guard = match (&capabilities, root, user_namespace) {
            (Ok(()), true, _) => Guard::Enforced {
                by: "an empty bounding set, cleared capability sets and locked securebits (root keeps its uid, not its privileges)".to_string(),
            },
            (Ok(()), false, true) => Guard::Enforced {
                by: "a user namespace whose capabilities are dropped (bounding set and all sets) before exec".to_string(),
            },
            (Ok(()), false, false) => Guard::Enforced {
                by: "an unprivileged user with no_new_privs and cleared capability sets".to_string(),
            },
            (Err(reason), _, _) => Guard::Unavailable {
                reason: reason.clone(),
            },
        };

        KernelLayer {
            seccomp: program.ok(),
            scope,
            mounts: mounts.is_ok(),
            masks: wants_masks && mounts.is_ok(),
            bounding_set: capabilities.is_ok().then_some(bounding_set),
            guards: KernelGuards {
                seccomp: seccomp_guard,
                abstract_unix_sockets: abstract_guard,
                private_proc: proc_guard,
                capabilities: caps_guard,
                credential_masking: masks_guard,
            },
        }
    }

    /// `status` with this layer's guarantees.
    pub(super) fn add_to(&self, status: SandboxStatus) -> SandboxStatus {
        let g = self.guards.clone();
        status.with_kernel_layer(
            g.seccomp,
            g.abstract_unix_sockets,
            g.private_proc,
            g.capabilities,
            g.credential_masking,
        )
    }

    /// Whether denied paths inside writable roots are masked.
    pub(super) fn masks(&self) -> bool {
        self.masks
    }

    /// Whether a call with a PID namespace gets its own mounts (a private
    /// `/proc`, masks, read-only protected paths).
    pub(super) fn mounts(&self) -> bool {
        self.mounts
    }

    /// The plan of a call whose denied paths inside writable roots are
    /// `masked` and whose protected paths are `readonly`; `pid` says
    /// whether the call gets a PID namespace (the mounts need one).
    pub(super) fn plan(
        &self,
        pid: bool,
        masked: &[PathBuf],
        readonly: &[PathBuf],
        pinned: &[PathBuf],
        cwd: Option<&std::path::Path>,
    ) -> KernelPlan {
        let masked: &[PathBuf] = if self.masks { masked } else { &[] };
        KernelPlan {
            mounts: (self.mounts && pid).then(|| MountPlan::new(masked, readonly, pinned, cwd)),
            seccomp: self.seccomp.clone(),
            scope: self.scope.clone(),
            bounding_set: self.bounding_set,
        }
    }
}

/// What this kernel and process allow, probed once per process.
#[derive(Debug)]
struct Support {
    seccomp: Result<(), String>,
    mounts: Result<(), String>,
    capabilities: Result<(), String>,
}

fn support() -> &'static Support {
    static SUPPORT: OnceLock<Support> = OnceLock::new();
    SUPPORT.get_or_init(|| {
        let seccomp = Program::new(false).and_then(|program| {
            probe("a seccomp filter", move || {
                sys::set_no_new_privs()?;
                sys::seccomp_install(program.instructions())
            })
        });
        // As the command would: root in place, anyone else in a user
        // namespace where there is one, else without the bounding set
        // (which an unprivileged process cannot change).
        let root = sys::geteuid() == 0;
        let user_namespace = !root && super::namespaces::available().is_ok();
        let capabilities = probe("dropping capabilities", move || {
            if user_namespace {
                Namespaces::new(true, false).enter()?;
            }
            sys::drop_capabilities(root || user_namespace)
        });
        let namespaces = Namespaces::new(true, false).with_mount_namespace();
        let plan = MountPlan::new(&[], &[], &[], None);
        let mounts = probe("a private /proc and /dev in a mount namespace", move || {
            namespaces.enter()?;
            reaper::fork_init_and_command()?;
            plan.enter()
        });
        Support {
            seccomp,
            mounts,
            capabilities,
        }
    })
}

/// Spawns `true` with `setup` between fork and exec: `Ok` when it ran.
fn probe(
    what: &str,
    setup: impl FnMut() -> std::io::Result<()> + Send + Sync + 'static,
) -> Result<(), String> {
    let program = ["/usr/bin/true", "/bin/true"]
        .into_iter()
        .find(|p| std::path::Path::new(p).is_file())
        .ok_or_else(|| format!("no /bin/true to probe {what} with"))?;
    let mut command = std::process::Command::new(program);
    command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    sys::register_pre_exec(&mut command, setup);
    match command.status() {
        Ok(status) if status.success() => Ok(()),
        Ok(status) => Err(format!("the probe of {what} exited with {status}")),
        Err(error) => Err(format!(
            "this kernel or container does not allow {what} ({error})"
        )),
    }
}

/// The seccomp program for commands that may (`true`) or may not open
/// new unix sockets, built once per process: it depends on nothing else.
fn program(allow_unix: bool) -> Result<Arc<Program>, String> {
    static PROGRAMS: [OnceLock<Result<Arc<Program>, String>>; 2] =
        [OnceLock::new(), OnceLock::new()];
    PROGRAMS[usize::from(allow_unix)]
        .get_or_init(|| Program::new(allow_unix).map(Arc::new))
        .clone()
}

/// A Landlock ruleset that only scopes abstract unix sockets, stacked on
/// the file system ruleset in the child; `None` below Landlock ABI 6.
/// Created once per process: the ruleset is never changed after its
/// creation, so every call's child may restrict itself with the same one,
/// and a server holds one such descriptor however many sessions it serves.
fn abstract_socket_scope() -> Option<Arc<OwnedFd>> {
    static SCOPE: OnceLock<Option<Arc<OwnedFd>>> = OnceLock::new();
    SCOPE
        .get_or_init(|| {
            let ruleset = Ruleset::default()
                .set_compatibility(CompatLevel::HardRequirement)
                .scope(Scope::AbstractUnixSocket)
                .and_then(|ruleset| ruleset.create())
                .ok()?;
            Option::<OwnedFd>::from(ruleset).map(Arc::new)
        })
        .clone()
}
