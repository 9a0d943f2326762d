//! The ceilings of one call (`sandbox.limits`) as this machine enforces
//! them: a cgroup leaf (`cgroup`) where the agent can make one, resource
//! limits set in the command before exec otherwise, and what to tell the
//! model when a call reached one.

use serde::Serialize;

use super::limits::{MEMORY_KEY, PROCESSES_KEY, SandboxLimits, human_bytes};
use super::status::Guard;

/// A ceiling a call reached; the call was ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct LimitReached {
    /// `processes` or `memory`.
    pub limit: &'static str,
    /// The configuration key that sets it (`sandbox.limits.processes`).
    pub key: &'static str,
    /// The ceiling: processes, or bytes.
    pub value: u64,
}

impl LimitReached {
    /// The note for the model and the person: which limit, and the key.
    pub fn message(&self) -> String {
        match self.limit {
            "processes" => format!(
                "The command reached the sandbox's process limit ({} processes and threads at once) and was ended. \
                 If the work needs more, ask the user to raise `{}`.",
                self.value, self.key
            ),
            _ => format!(
                "The command reached the sandbox's memory limit ({}) and was ended. \
                 If the work needs more, ask the user to raise `{}`.",
                human_bytes(self.value),
                self.key
            ),
        }
    }
}

/// One call's ceilings, held while it runs.
#[derive(Debug, Default)]
pub(super) struct CallBounds {
    #[cfg(target_os = "linux")]
    leaf: Option<super::cgroup::Leaf>,
    processes: Option<u64>,
    memory: Option<u64>,
}

impl CallBounds {
    /// Whether a leaf counts the call's events, so that reaching a
    /// ceiling can be seen (and the call ended) while it runs.
    pub(super) fn watched(&self) -> bool {
        #[cfg(target_os = "linux")]
        {
            self.leaf.is_some()
        }
        #[cfg(not(target_os = "linux"))]
        {
            false
        }
    }

    /// The ceiling the call reached, if its leaf says so.
    pub(super) fn reached(&self) -> Option<LimitReached> {
        #[cfg(target_os = "linux")]
        {
            use super::cgroup::Reached;
            match self.leaf.as_ref()?.reached()? {
                Reached::Processes => Some(LimitReached {
                    limit: "processes",
                    key: PROCESSES_KEY,
                    value: self.processes?,
                }),
                Reached::Memory => Some(LimitReached {
                    limit: "memory",
                    key: MEMORY_KEY,
                    value: self.memory?,
                }),
            }
        }
        #[cfg(not(target_os = "linux"))]
        {
            None
        }
    }
}

/// What the call's processes do about the ceilings before exec: join the
/// leaf (write `0` to each `cgroup.procs`), and set the resource limits
/// that stand in where there is no leaf.
#[cfg(target_os = "linux")]
#[derive(Debug, Default)]
pub(super) struct LimitPlan {
    cgroups: Vec<std::os::fd::OwnedFd>,
    rlimits: Vec<(super::sys::Rlimit, u64)>,
}

#[cfg(target_os = "linux")]
impl LimitPlan {
    /// Moves the caller (the call's first process) into the leaf. System
    /// calls only.
    pub(super) fn join(&self) -> std::io::Result<()> {
        use std::os::fd::AsRawFd;
        for fd in &self.cgroups {
            super::sys::write_fd(fd.as_raw_fd(), b"0")?;
        }
        Ok(())
    }

    /// Sets the stand-in resource limits on the caller (the command,
    /// before exec). System calls only.
    pub(super) fn set_rlimits(&self) -> std::io::Result<()> {
        for (which, value) in &self.rlimits {
            super::sys::set_rlimit(*which, *value)?;
        }
        Ok(())
    }
}

/// The bounds of a call and what its processes do about them. A leaf
/// that cannot be made (the cgroup went away) falls back to the resource
/// limits. `user_namespace`: the command runs in a user namespace of its
/// own, where `RLIMIT_NPROC` counts the call's processes alone.
#[cfg(target_os = "linux")]
pub(super) fn prepare(limits: &SandboxLimits, user_namespace: bool) -> (CallBounds, LimitPlan) {
    let processes = limits.processes_max();
    let memory = limits.memory_max();
    let mut bounds = CallBounds {
        leaf: None,
        processes,
        memory,
    };
    let mut plan = LimitPlan::default();
    if processes.is_none() && memory.is_none() {
        return (bounds, plan);
    }
    let layout = super::cgroup::layout();
    let (by_leaf_processes, by_leaf_memory) = match super::cgroup::Leaf::create(
        layout, processes, memory,
    ) {
        Ok((leaf, fds)) => {
            bounds.leaf = Some(leaf);
            plan.cgroups = fds;
            (layout.processes(), layout.memory())
        }
        Err(error) => {
            tracing::debug!(%error, "sandbox: no cgroup leaf for the call; resource limits instead");
            (false, false)
        }
    };
    plan.rlimits = stand_ins(
        processes,
        memory,
        (by_leaf_processes, by_leaf_memory),
        user_namespace,
    );
    (bounds, plan)
}

/// The resource limits that stand in for what the leaf does not bound
/// (`by_leaf`: processes, memory): `RLIMIT_NPROC` only in the command's
/// own user namespace (elsewhere it counts every process of the user, and
/// nothing for root), `RLIMIT_DATA` per process.
#[cfg(target_os = "linux")]
fn stand_ins(
    processes: Option<u64>,
    memory: Option<u64>,
    by_leaf: (bool, bool),
    user_namespace: bool,
) -> Vec<(super::sys::Rlimit, u64)> {
    use super::sys::Rlimit;
    let mut rlimits = Vec::new();
    if let (false, true, Some(n)) = (by_leaf.0, user_namespace, processes) {
        rlimits.push((Rlimit::Processes, n));
    }
    if let (false, Some(bytes)) = (by_leaf.1, memory) {
        rlimits.push((Rlimit::Data, bytes));
    }
    rlimits
}

/// How this machine enforces the ceilings, for the status.
#[cfg(target_os = "linux")]
pub(super) fn guard(limits: &SandboxLimits, user_namespace: bool) -> Guard {
    let processes = limits.processes_max();
    let memory = limits.memory_max();
    if processes.is_none() && memory.is_none() {
        return Guard::NotRequested;
    }
    let layout = super::cgroup::layout();
    let processes_by = match (processes, layout.processes(), user_namespace) {
        (None, _, _) => Some("no process ceiling (unlimited)".to_string()),
        (Some(n), true, _) => Some(format!(
            "at most {n} processes by {}",
            layout.describe(true)
        )),
        (Some(n), false, true) => Some(format!(
            "at most {n} processes by RLIMIT_NPROC in the command's user namespace"
        )),
        (Some(_), false, false) => None,
    };
    let memory_by = match (memory, layout.memory()) {
        (None, _) => "no memory ceiling (unlimited)".to_string(),
        (Some(bytes), true) => format!(
            "at most {} of memory by {}",
            human_bytes(bytes),
            layout.describe(false)
        ),
        (Some(bytes), false) => format!(
            "at most {} of memory per process by RLIMIT_DATA",
            human_bytes(bytes)
        ),
    };
    match processes_by {
        Some(processes_by) => Guard::Enforced {
            by: format!("{processes_by}; {memory_by}"),
        },
        None => Guard::Unavailable {
            reason: format!(
                "no writable cgroup with the pids controller, and RLIMIT_NPROC would count every process of this user (or nothing, as root): no process ceiling; {memory_by}"
            ),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_limit_and_the_key() {
        let processes = LimitReached {
            limit: "processes",
            key: PROCESSES_KEY,
            value: 32,
        };
        let text = processes.message();
        assert!(text.contains("process limit (32"), "{text}");
        assert!(text.contains("`sandbox.limits.processes`"), "{text}");
        let memory = LimitReached {
            limit: "memory",
            key: MEMORY_KEY,
            value: 64 << 20,
        };
        let text = memory.message();
        assert!(text.contains("memory limit (64 MiB)"), "{text}");
        assert!(text.contains("`sandbox.limits.memory`"), "{text}");
    }

    #[test]
    fn nothing_reached_without_a_leaf() {
        let bounds = CallBounds::default();
        assert!(!bounds.watched());
        assert_eq!(bounds.reached(), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn resource_limits_stand_in_only_where_they_count_the_call() {
        use super::super::sys::Rlimit::{Data, Processes};
        let (n, m) = (Some(32), Some(64 << 20));
        // (by leaf, user namespace) -> stand-ins
        let table = [
            ((true, true), true, vec![]),
            ((true, true), false, vec![]),
            (
                (false, false),
                true,
                vec![(Processes, 32), (Data, 64 << 20)],
            ),
            // As root, or without a namespace of its own: RLIMIT_NPROC
            // would count the whole user (or nothing), so it is not set.
            ((false, false), false, vec![(Data, 64 << 20)]),
            ((true, false), false, vec![(Data, 64 << 20)]),
            ((false, true), true, vec![(Processes, 32)]),
        ];
        for (by_leaf, userns, expected) in table {
            assert_eq!(
                stand_ins(n, m, by_leaf, userns),
                expected,
                "{by_leaf:?} {userns}"
            );
        }
        assert!(stand_ins(None, None, (false, false), true).is_empty());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn unlimited_asks_nothing_of_the_kernel() {
        use super::super::limits::Ceiling;
        let limits = SandboxLimits::default()
            .with_processes(Ceiling::Unlimited)
            .with_memory(Ceiling::Unlimited);
        let (bounds, plan) = prepare(&limits, true);
        assert!(!bounds.watched());
        assert!(plan.cgroups.is_empty() && plan.rlimits.is_empty());
        assert_eq!(guard(&limits, true), Guard::NotRequested);
    }
}
