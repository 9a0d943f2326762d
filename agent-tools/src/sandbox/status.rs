//! What the sandbox enforces on this machine, per guarantee, so a host can
//! show it, log it or refuse to run without it.

use serde::Serialize;

use super::policy::SandboxMode;

/// The state of one guarantee of the sandbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Guard {
    /// Enforced by the kernel.
    Enforced {
        /// The mechanism, e.g. `landlock (ABI 5)` or `network namespace`.
        by: String,
    },
    /// The policy does not ask for it (e.g. network on).
    NotRequested,
    /// The policy asks for it but this machine cannot enforce it.
    Unavailable {
        /// Why, in words a user can act on.
        reason: String,
    },
}

impl Guard {
    fn describe(&self) -> String {
        match self {
            Guard::Enforced { by } => format!("enforced by {by}"),
            Guard::NotRequested => "not requested".to_string(),
            Guard::Unavailable { reason } => format!("NOT enforced: {reason}"),
        }
    }
}

/// What the sandbox of a [`Sandbox`](super::Sandbox) enforces here. Every
/// bash call's metadata carries it under `sandbox.status`, and the first
/// call of each session logs it through `tracing` when it
/// [is degraded](SandboxStatus::is_degraded).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct SandboxStatus {
    /// The requested mode.
    pub mode: SandboxMode,
    /// The file system boundary (writes outside the writable set, reads of
    /// denied paths).
    pub filesystem: Guard,
    /// Network off.
    pub network: Guard,
    /// Every descendant ends with its call (including those that left the
    /// process group with `setsid` or a double fork).
    pub descendants: Guard,
    /// The writable set and the denied paths are fixed on a project's
    /// first call and held as opened descriptors, so a command that
    /// replaces a path with a symbolic link moves nothing.
    pub fixed_roots: Guard,
    /// The protected paths inside the workspace (`.git`, `opencode.json`,
    /// `opencode.jsonc`, `.opencode`) are read-only to commands. Not part
    /// of [`is_degraded`](Self::is_degraded): the file tools ask
    /// `protected_path` before changing them either way.
    pub protected_paths: Guard,
}

impl SandboxStatus {
    /// A status from its parts.
    pub fn new(mode: SandboxMode, filesystem: Guard, network: Guard, descendants: Guard) -> Self {
        SandboxStatus {
            mode,
            filesystem,
            network,
            descendants,
            fixed_roots: Guard::NotRequested,
            protected_paths: Guard::NotRequested,
        }
    }

    /// Sets the state of the fixed roots and of the protected paths.
    pub fn with_roots(mut self, fixed_roots: Guard, protected_paths: Guard) -> Self {
        self.fixed_roots = fixed_roots;
        self.protected_paths = protected_paths;
        self
    }

    /// Whether something the policy asks for is not enforced.
    pub fn is_degraded(&self) -> bool {
        [&self.filesystem, &self.network, &self.descendants]
            .iter()
            .any(|guard| matches!(guard, Guard::Unavailable { .. }))
    }

    /// One line for logs and tool output.
    pub fn summary(&self) -> String {
        format!(
            "sandbox {}: file system {}; network off {}; descendants ended with the call {}; fixed roots {}; protected paths read-only to commands {}",
            self.mode,
            self.filesystem.describe(),
            self.network.describe(),
            self.descendants.describe(),
            self.fixed_roots.describe(),
            self.protected_paths.describe()
        )
    }
}
