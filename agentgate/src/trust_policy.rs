//! Whether a workspace's project is trusted (issue 39): [`ProjectTrust`],
//! the state, and [`TrustPolicy`], how an embedder decides it.
//!
//! A project's configuration layers are input from whoever wrote the
//! repository. Until its user trusts the project, they are loaded screened
//! (`agentgate_core::project_trust`): no process, no connection the project
//! chose, no provider redirect, no outside secret in a provider, no rule
//! turned into `allow`. Trust is per project directory (the worktree root)
//! and covers what the project's layers could do when it was given: when
//! that changes, the project is untrusted again and the state names the
//! change.

use std::path::Path;
use std::sync::Arc;

use agentgate_core::project_trust::{RiskyPart, TrustStore};

/// Whether a project's configuration layers are trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProjectTrust {
    /// The project's layers set nothing trust would change: they are
    /// loaded as they are.
    NotNeeded,
    /// Trusted: the layers are loaded as opencode loads them.
    Trusted,
    /// Not trusted: these parts were set aside.
    Untrusted {
        /// What the project's layers would do if trusted.
        reasons: Vec<RiskyPart>,
    },
    /// Trusted once, but the layers now do more: these parts are new or
    /// changed since, and every risky part was set aside.
    Changed {
        /// The new or changed parts.
        what: Vec<RiskyPart>,
        /// Every part trust would enable now (what to record).
        all: Vec<RiskyPart>,
    },
}

impl ProjectTrust {
    /// Whether the project's layers are loaded as they are.
    pub fn is_trusted(&self) -> bool {
        matches!(self, ProjectTrust::NotNeeded | ProjectTrust::Trusted)
    }

    /// What the project would do if trusted (for `Changed`, only what is
    /// new), one line each: the key, what it does, its value.
    pub fn lines(&self) -> Vec<String> {
        match self {
            ProjectTrust::Untrusted { reasons } => {
                reasons.iter().map(RiskyPart::describe).collect()
            }
            ProjectTrust::Changed { what, .. } => what.iter().map(RiskyPart::describe).collect(),
            _ => Vec::new(),
        }
    }

    /// Every part trusting now would enable (what [`TrustStore::record`]
    /// should be given); empty when trusted or not needed.
    pub fn parts(&self) -> &[RiskyPart] {
        match self {
            ProjectTrust::Untrusted { reasons } => reasons,
            ProjectTrust::Changed { all, .. } => all,
            _ => &[],
        }
    }
}

/// Asked when a project is not trusted by the record: its directory and
/// state; `true` trusts it for this load (record it to keep it).
pub type TrustCallback = Arc<dyn Fn(&Path, &ProjectTrust) -> bool + Send + Sync>;

/// How a [`Workspace`](crate::Workspace) decides whether its project is
/// trusted. The default ([`TrustPolicy::untrusted`]) trusts nothing.
#[derive(Clone, Default)]
pub struct TrustPolicy {
    trust_all: bool,
    store: Option<TrustStore>,
    ask: Option<TrustCallback>,
}

impl std::fmt::Debug for TrustPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TrustPolicy")
            .field("trust_all", &self.trust_all)
            .field("store", &self.store)
            .field("ask", &self.ask.is_some())
            .finish()
    }
}

impl TrustPolicy {
    /// No project is trusted.
    pub fn untrusted() -> Self {
        TrustPolicy::default()
    }

    /// Every project is trusted, as opencode does (an embedder that loads
    /// only directories it wrote itself).
    pub fn trust_all() -> Self {
        TrustPolicy {
            trust_all: true,
            ..TrustPolicy::default()
        }
    }

    /// A project is trusted when `store` records it and what it can do has
    /// not grown since.
    pub fn recorded(store: TrustStore) -> Self {
        TrustPolicy {
            store: Some(store),
            ..TrustPolicy::default()
        }
    }

    /// The record of `app`'s data directory (where `agent trust` writes
    /// for [`CLI_APP`](crate::CLI_APP)).
    pub fn recorded_for(app: &str) -> Self {
        // `Workspace::data_dir(app)`, read from core directly: the
        // workspace builds on this module, not the other way round.
        let data_dir = agentgate_core::AgentEnvironment::detect(app, ".").data_dir;
        TrustPolicy::recorded(TrustStore::in_data_dir(Path::new(&data_dir)))
    }

    /// When the project is not trusted otherwise, `ask` decides.
    pub fn ask(
        mut self,
        ask: impl Fn(&Path, &ProjectTrust) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.ask = Some(Arc::new(ask));
        self
    }

    /// The record this policy reads, if any.
    pub fn store(&self) -> Option<&TrustStore> {
        self.store.as_ref()
    }

    /// The state of a project at `root` whose layers would do `risks`.
    /// A record that cannot be read counts as no record (the project stays
    /// untrusted); the error is returned beside the state.
    pub fn decide(
        &self,
        root: &Path,
        risks: &[RiskyPart],
    ) -> (
        ProjectTrust,
        Option<agentgate_core::project_trust::TrustStoreError>,
    ) {
        if risks.is_empty() {
            return (ProjectTrust::NotNeeded, None);
        }
        if self.trust_all {
            return (ProjectTrust::Trusted, None);
        }
        let (mut state, error) = match self.store.as_ref().map(|s| s.get(root)) {
            Some(Ok(Some(record))) => {
                let what = record.changes(risks);
                if what.is_empty() {
                    (ProjectTrust::Trusted, None)
                } else {
                    let all = risks.to_vec();
                    (ProjectTrust::Changed { what, all }, None)
                }
            }
            Some(Err(error)) => (untrusted(risks), Some(error)),
            _ => (untrusted(risks), None),
        };
        if !state.is_trusted()
            && let Some(ask) = &self.ask
            && ask(root, &state)
        {
            state = ProjectTrust::Trusted;
        }
        (state, error)
    }
}

fn untrusted(risks: &[RiskyPart]) -> ProjectTrust {
    ProjectTrust::Untrusted {
        reasons: risks.to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use agentgate_core::project_trust::RiskKind;

    use super::*;

    fn part(key: &str) -> RiskyPart {
        serde_json::from_value(serde_json::json!({
            "file": "/p/opencode.json", "key": key, "kind": "command", "value": "[\"x\"]"
        }))
        .unwrap()
    }

    #[test]
    fn each_policy_decides_as_documented() {
        let dir = std::env::temp_dir().join(format!("agentgate-policy-{}", std::process::id()));
        let root = dir.join("project");
        std::fs::create_dir_all(&root).unwrap();
        let risks = vec![part("mcp.a.command")];
        let untrusted = TrustPolicy::untrusted();
        assert_eq!(untrusted.decide(&root, &[]).0, ProjectTrust::NotNeeded);
        let (state, _) = untrusted.decide(&root, &risks);
        assert_eq!(
            state,
            ProjectTrust::Untrusted {
                reasons: risks.clone()
            }
        );
        assert_eq!(state.lines().len(), 1);
        assert_eq!(state.parts()[0].kind, RiskKind::Command);
        assert_eq!(
            TrustPolicy::trust_all().decide(&root, &risks).0,
            ProjectTrust::Trusted
        );
        let store = TrustStore::in_data_dir(&dir.join("data"));
        let recorded = TrustPolicy::recorded(store.clone());
        assert!(!recorded.decide(&root, &risks).0.is_trusted());
        store.record(&root, &risks).unwrap();
        assert_eq!(recorded.decide(&root, &risks).0, ProjectTrust::Trusted);
        let grown = vec![part("mcp.a.command"), part("formatter")];
        let (state, _) = recorded.decide(&root, &grown);
        assert_eq!(
            state,
            ProjectTrust::Changed {
                what: vec![part("formatter")],
                all: grown.clone()
            }
        );
        let asked = TrustPolicy::recorded(store).ask(|_, state| state.lines().len() == 1);
        assert_eq!(asked.decide(&root, &grown).0, ProjectTrust::Trusted);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
