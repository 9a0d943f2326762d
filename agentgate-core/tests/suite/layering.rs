//! The layering of agentgate-core, checked on its sources: the contracts
//! (messages, the model and tool interfaces, usage, errors, events,
//! `AgentSpec`) import nothing from the engine (turn driver, processor,
//! compaction, task tool, agents catalog, sessions).
//!
//! The import graph is agentgate-testing's (`imports`), the one its
//! `source_rules` test reads every crate of the workspace with to check
//! that no module imports itself through others.

use std::path::{Path, PathBuf};

use agentgate_testing::imports::{ImportGraph, import_graph};

/// Modules that form the contracts layer.
const CONTRACTS: &[&str] = &[
    "agent_spec",
    "error",
    "event",
    "ids",
    "message",
    "model",
    "stream",
    "tool",
    "tool_context",
    "tool_registry",
    "usage",
];

/// Modules that form the engine.
const ENGINE: &[&str] = &[
    "agents",
    "commands",
    "compaction",
    "config",
    "engine",
    "prompts",
    "sessions",
    "skills",
];

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn graph() -> ImportGraph {
    import_graph(&src_dir()).unwrap_or_else(|e| panic!("agentgate-core/src: {e}"))
}

fn top(module: &str) -> &str {
    module.split("::").next().unwrap_or(module)
}

#[test]
fn contracts_import_nothing_from_the_engine() {
    let graph = graph();
    for module in CONTRACTS {
        assert!(graph.contains_key(*module), "no contracts module {module}");
    }
    let mut violations = Vec::new();
    for (module, targets) in &graph {
        if !CONTRACTS.contains(&top(module)) {
            continue;
        }
        for target in targets {
            if ENGINE.contains(&top(target)) {
                violations.push(format!("{module} imports {target}"));
            }
        }
    }
    assert!(
        violations.is_empty(),
        "contracts import the engine: {violations:#?}"
    );
}

#[test]
fn the_graph_has_the_edges_the_engine_is_known_to_have() {
    let graph = graph();
    assert!(graph["engine::turn"].contains("engine::processor"));
    assert!(graph["agents::catalog"].contains("agents::config"));
    assert!(graph["message"].contains("model"));
}
