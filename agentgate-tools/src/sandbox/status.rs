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
    /// The seccomp filter: `ptrace`, `process_vm_readv`/`writev`, io_uring,
    /// the kernel keyrings, vsock sockets and (unless the policy allows
    /// them) new unix-domain sockets are refused.
    pub seccomp: Guard,
    /// No connection to abstract unix sockets made outside the sandbox.
    pub abstract_unix_sockets: Guard,
    /// A private `/proc` (only the command's own processes; not the agent's
    /// environment) and a minimal `/dev`.
    pub private_proc: Guard,
    /// No capabilities, even when the agent runs as root.
    pub capabilities: Guard,
    /// Denied paths inside writable directories, which Landlock cannot
    /// deny, are covered by empty read-only mounts.
    pub credential_masking: Guard,
    /// The writable set and the denied paths are fixed on a project's
    /// first call and held as opened descriptors, so a command that
    /// replaces a path with a symbolic link moves nothing.
    pub fixed_roots: Guard,
    /// The protected paths inside the workspace (`.git`, `opencode.json`,
    /// `opencode.jsonc`, `.opencode`) are read-only to commands. Not part
    /// of [`is_degraded`](Self::is_degraded): the file tools ask
    /// `protected_path` before changing them either way.
    pub protected_paths: Guard,
    /// Each call's ceilings on processes and memory (`sandbox.limits`).
    /// Not part of [`is_degraded`](Self::is_degraded): they bound
    /// resources, not what a command may reach.
    pub limits: Guard,
}

impl SandboxStatus {
    /// A status from its parts.
    pub fn new(mode: SandboxMode, filesystem: Guard, network: Guard, descendants: Guard) -> Self {
        SandboxStatus {
            mode,
            filesystem,
            network,
            descendants,
            seccomp: Guard::NotRequested,
            abstract_unix_sockets: Guard::NotRequested,
            private_proc: Guard::NotRequested,
            capabilities: Guard::NotRequested,
            credential_masking: Guard::NotRequested,
            fixed_roots: Guard::NotRequested,
            protected_paths: Guard::NotRequested,
            limits: Guard::NotRequested,
        }
    }

    /// The same status with the kernel layer's guarantees (each
    /// `not-requested` in a status from [`new`](Self::new)): seccomp,
    /// abstract unix sockets, private `/proc`, capabilities, credential
    /// masking.
    pub fn with_kernel_layer(
        mut self,
        seccomp: Guard,
        abstract_unix_sockets: Guard,
        private_proc: Guard,
        capabilities: Guard,
        credential_masking: Guard,
    ) -> Self {
        self.seccomp = seccomp;
        self.abstract_unix_sockets = abstract_unix_sockets;
        self.private_proc = private_proc;
        self.capabilities = capabilities;
        self.credential_masking = credential_masking;
        self
    }

    /// Without Linux: the kernel layer is unavailable wherever `mode`
    /// asks for it.
    #[cfg(not(target_os = "linux"))]
    pub(super) fn without_kernel_layer(self, mode: SandboxMode) -> Self {
        if !mode.restricts_files() {
            return self;
        }
        let unavailable = || Guard::Unavailable {
            reason: "seccomp, mount namespaces and capabilities are Linux's".to_string(),
        };
        self.with_kernel_layer(
            unavailable(),
            unavailable(),
            unavailable(),
            unavailable(),
            Guard::NotRequested,
        )
    }

    /// Every guarantee with its name as the status's JSON names it.
    pub fn guards(&self) -> [(&'static str, &Guard); 11] {
        [
            ("filesystem", &self.filesystem),
            ("network", &self.network),
            ("descendants", &self.descendants),
            ("seccomp", &self.seccomp),
            ("abstract_unix_sockets", &self.abstract_unix_sockets),
            ("private_proc", &self.private_proc),
            ("capabilities", &self.capabilities),
            ("credential_masking", &self.credential_masking),
            ("fixed_roots", &self.fixed_roots),
            ("protected_paths", &self.protected_paths),
            ("limits", &self.limits),
        ]
    }

    /// Sets the state of the call ceilings.
    pub fn with_limits(mut self, limits: Guard) -> Self {
        self.limits = limits;
        self
    }

    /// Sets the state of the fixed roots and of the protected paths.
    pub fn with_roots(mut self, fixed_roots: Guard, protected_paths: Guard) -> Self {
        self.fixed_roots = fixed_roots;
        self.protected_paths = protected_paths;
        self
    }

    /// Whether something the policy asks for is not enforced.
    pub fn is_degraded(&self) -> bool {
        // The protected paths are also guarded by the file tools' own ask;
        // the ceilings bound resources, not reach.
        self.guards().iter().any(|(name, guard)| {
            !matches!(*name, "protected_paths" | "limits")
                && matches!(guard, Guard::Unavailable { .. })
        })
    }

    /// One line for logs and tool output.
    pub fn summary(&self) -> String {
        let mut line = format!(
            "sandbox {}: file system {}; network off {}; descendants ended with the call {}",
            self.mode,
            self.filesystem.describe(),
            self.network.describe(),
            self.descendants.describe()
        );
        let kernel = [
            ("system call filter", &self.seccomp),
            ("abstract unix sockets", &self.abstract_unix_sockets),
            ("private /proc", &self.private_proc),
            ("no capabilities", &self.capabilities),
            ("credential masking", &self.credential_masking),
            ("fixed roots", &self.fixed_roots),
            (
                "protected paths read-only to commands",
                &self.protected_paths,
            ),
            ("call ceilings", &self.limits),
        ];
        for (name, guard) in kernel {
            if *guard != Guard::NotRequested {
                line.push_str(&format!("; {name} {}", guard.describe()));
            }
        }
        line
    }
}
