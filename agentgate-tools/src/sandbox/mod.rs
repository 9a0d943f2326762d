//! The OS sandbox under spawned commands: what the permission rules cannot
//! see (`python -c`, a script written a moment ago, a program's own
//! subprocesses), the kernel stops.
//!
//! A [`SandboxPolicy`] (the `sandbox` configuration key) names a
//! [`SandboxMode`] — `read-only`, `workspace-write` (the default) or
//! `danger-full-access`, as codex names them — whether the network is on,
//! extra writable directories and paths nobody may read. A [`Sandbox`]
//! probes once what this machine can enforce ([`SandboxStatus`]) and turns
//! the policy into a [`PreparedCommand`] per call, which starts the bash
//! tool's command ([`PreparedCommand::spawn`]: cloned without a copy of
//! the agent where it can be, `clone_launch`) and applies before exec:
//!
//! - its own session and process group, in its own PID namespace under a
//!   tiny init, so every descendant ends with the call (`reaper`);
//! - a network namespace when the network is off (`namespaces`);
//! - `no_new_privs` and a Landlock ruleset: read everywhere except the
//!   denied paths, write only in the writable set (`landlock`);
//! - in `read-only` and `workspace-write`, the kernel layer (`kernel`): a
//!   private `/proc` and a minimal `/dev` in a mount namespace, with empty
//!   read-only mounts over denied paths inside writable roots (`mounts`);
//!   no capabilities, even for root; abstract unix sockets scoped by
//!   Landlock; and a seccomp filter refusing `ptrace`, new unix sockets and
//!   a few more calls (`seccomp`);
//! - an environment of the core variables and what the policy names
//!   (`env`);
//! - a ceiling on its processes and memory (`limits`, `bounds`): a cgroup
//!   leaf per call where the agent can make one (`cgroup`), resource
//!   limits otherwise; a call that reaches one is ended.
//!
//! The agent process itself is never restricted. Where something cannot be
//! enforced the status says so, the first call of each session logs it, and
//! [`OnUnsupported`] decides between running anyway and failing. After the
//! run, denials visible in the output become a clear note for the model
//! ([`SandboxDenial`]).

mod bounds;
mod denial;
mod env;
mod limits;
mod policy;
mod protected_changes;
// The fixed protected names and the project's folders they are looked for
// in; the derivation from git's configuration (`crate::git`) uses both.
pub(crate) mod protected_names;
pub(crate) mod roots;
mod sandboxed_child;
mod spawn;
mod status;

#[cfg(target_os = "linux")]
mod canonical;
#[cfg(target_os = "linux")]
mod cgroup;
#[cfg(target_os = "linux")]
mod child;
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
mod clone_launch;
mod handles;
#[cfg(target_os = "linux")]
mod kernel;
#[cfg(target_os = "linux")]
mod landlock;
#[cfg(target_os = "linux")]
mod mounts;
#[cfg(target_os = "linux")]
mod namespaces;
#[cfg(target_os = "linux")]
mod nested;
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
mod raw_syscall;
#[cfg(target_os = "linux")]
mod reaper;
#[cfg(target_os = "linux")]
mod seccomp;
#[cfg(target_os = "linux")]
mod sys;

pub use bounds::LimitReached;
pub use denial::{DenialKind, SandboxDenial};
pub use env::{CORE_VARIABLES, DEFAULT_EXCLUDES, DEFAULT_KEEP, EnvFilter, EnvInherit};
#[cfg(target_os = "linux")]
pub(crate) use handles::create_new_file;
pub use limits::{
    Ceiling, DEFAULT_MEMORY_SHARE, DEFAULT_PROCESSES, InvalidLimit, SandboxLimits, parse_memory,
    parse_processes,
};
pub use policy::{OnUnsupported, SECRET_PATHS, SandboxMode, SandboxPolicy, UnknownSandboxMode};
pub use protected_names::{PROTECTED_AT_ANY_DEPTH, ProtectedName, TOP_LEVEL_NAMES};
pub use roots::{PROTECTED_NAMES, protected_folders, protected_roots};
pub use sandboxed_child::{CommandOutput, SandboxedChild};
pub use spawn::{
    CallScope, PreparedCommand, ProtectedChange, Sandbox, SandboxError, approved_directories,
};
pub use status::{Guard, SandboxStatus};
