//! One module per subject; `conformance` prints the
//! `conformance[agentgate-permission]: …` line.

#[cfg(feature = "gate")]
mod approval_store;
#[cfg(feature = "gate")]
mod approvals_hold;
#[cfg(feature = "gate")]
mod audit_trail;
#[cfg(feature = "gate")]
mod common;
mod compiled_alloc;
mod compiled_equivalence;
#[cfg(feature = "gate")]
mod conformance;
#[cfg(feature = "gate")]
mod deny_wins;
#[cfg(feature = "gate")]
mod gate;
mod properties;
mod survivors;
