//! A minimal coding agent with a custom approver: the offline demo model
//! drives the built-in tools; the approver allows `git` commands and
//! rejects anything else with feedback the model sees.
//!
//! Run: `cargo run -p agentgate-examples --example minimal_agent`

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agentgate::CodingAgent;
use agentgate::demo::DemoModel;
use agentgate::permission::{Action, Approver, PermissionRequest, Reply, Rule, Ruleset};

/// Allows `git …` commands once; rejects the rest, saying why.
#[derive(Default)]
struct GitOnly {
    asked: AtomicUsize,
}

#[async_trait::async_trait]
impl Approver for GitOnly {
    async fn approve(&self, request: &PermissionRequest) -> Reply {
        self.asked.fetch_add(1, Ordering::SeqCst);
        eprintln!("approver: {} {:?}", request.permission, request.patterns);
        if request.permission == "bash" && request.patterns.iter().all(|p| p.starts_with("git ")) {
            Reply::Once
        } else {
            Reply::correct("only git commands are allowed here")
        }
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let approver = Arc::new(GitOnly::default());
    let agent = CodingAgent::builder(env!("CARGO_MANIFEST_DIR"))
        // "Always" answers remembered in memory for this run (by default
        // they are kept in the program's own data directory).
        .permissions(agentgate::permission::PermissionGate::new())
        .model(Arc::new(DemoModel::new()))
        .tools(agentgate::tools::builtin()?)
        .approver(approver.clone())
        // Make every command ask, so the approver decides.
        .session_permission(Ruleset::from(vec![Rule::new("bash", "*", Action::Ask)]))
        .build()
        .await?;
    let turn = agent.run("What is in this project?").await?;
    println!("{}", turn.text());
    assert_eq!(
        approver.asked.load(Ordering::SeqCst),
        1,
        "git status asked once"
    );
    assert!(turn.text().contains("`git status` ran"));
    Ok(())
}
