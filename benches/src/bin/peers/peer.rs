//! The peers and the scenarios: how each program is started offline
//! against the mock model, with shell commands approved without asking.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The wire API a peer speaks to the mock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// OpenAI Chat Completions.
    Chat,
    /// The OpenAI Responses API.
    Responses,
}

impl Wire {
    /// The name in the table.
    pub fn name(self) -> &'static str {
        match self {
            Wire::Chat => "chat completions",
            Wire::Responses => "responses",
        }
    }
}

/// Which program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// This repository's `agent`.
    Agent,
    /// opencode (`opencode-ai` on npm).
    Opencode,
    /// codex (`@openai/codex` on npm).
    Codex,
}

/// One column of the comparison.
#[derive(Debug, Clone)]
pub struct Peer {
    /// The name in the table.
    pub name: &'static str,
    /// Which program.
    pub kind: Kind,
    /// Its wire API; ratios compare a peer with the agent on the same one.
    pub wire: Wire,
    /// Its native executable, or why there is none.
    pub binary: Result<PathBuf, String>,
}

impl Peer {
    /// Whether this is a baseline (the agent).
    pub fn is_agent(&self) -> bool {
        self.kind == Kind::Agent
    }
}

/// One workload.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// The name in the table.
    pub name: &'static str,
    /// Shell calls before the answer; `None` for the cold start
    /// (`--version`, no model).
    pub steps: Option<usize>,
    /// The command of each call (`{i}`: the step).
    pub command: &'static str,
    /// The file it reads: its name and size in bytes.
    pub file: Option<(&'static str, usize)>,
    /// For a search workload: the pattern of each step (`{i}`: the step),
    /// sent to the peer's grep tool when it has one (else `command` runs
    /// `rg` through its shell); the project then holds the generated tree
    /// of [`TREE_FILES`] files.
    pub grep: Option<&'static str>,
}

/// The files of the generated tree the search workload greps.
pub const TREE_FILES: usize = 10_000;

/// The marker at the start and end of each file the commands read.
pub const MARKER: &str = "PEERS-BENCH-MARKER";

/// The four workloads of issue 27 and the grep steps of issue 43. Each
/// search step's pattern matches the 9 or 10 files whose needle ends in
/// `{i}07`; the class in `NEEDL[E]` keeps the literal needle, which the
/// mock looks for in each result, out of the pattern, so a message that
/// echoes the pattern (no match) cannot pass for a hit.
pub fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario {
            name: "cold start (--version)",
            steps: None,
            command: "",
            file: None,
            grep: None,
        },
        Scenario {
            name: "one turn (text answer)",
            steps: Some(0),
            command: "",
            file: None,
            grep: None,
        },
        Scenario {
            name: "20-step tool loop",
            steps: Some(20),
            command: "echo step-{i} && cat small.txt",
            file: Some(("small.txt", 200)),
            grep: None,
        },
        Scenario {
            name: "80 steps x 52 KB output",
            steps: Some(80),
            command: "echo step-{i} && cat big.txt",
            file: Some(("big.txt", 52 * 1024)),
            grep: None,
        },
        Scenario {
            name: "10 grep steps, 10,000 files",
            steps: Some(10),
            command: "rg -n 'NEEDL[E]_[0-9]*{i}07' .",
            file: None,
            grep: Some("NEEDL[E]_[0-9]*{i}07"),
        },
    ]
}

/// What the mock does in a run of `scenario`: its steps, each step's
/// command (and pattern, for a search), the marker each result must hold.
pub fn script(scenario: &Scenario) -> agentgate_benches::Script {
    agentgate_benches::Script {
        steps: scenario.steps.unwrap_or(0),
        command: scenario.command.to_string(),
        expect_in_output: match scenario.grep {
            Some(_) => agentgate_benches::NEEDLE.to_string(),
            None => MARKER.to_string(),
        },
        grep_pattern: scenario.grep.unwrap_or_default().to_string(),
    }
}

/// Text of `size` bytes in lines of 80, starting and ending with [`MARKER`].
pub fn file_text(size: usize) -> String {
    let mut text = format!("{MARKER} start\n");
    let mut line = 0usize;
    let tail = format!("{MARKER} end\n");
    while text.len() + tail.len() < size {
        let row = format!(
            "line {line:05}: the quick brown fox jumps over the lazy dog, {:016x}\n",
            (line as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        );
        let room = size - tail.len() - text.len();
        if row.len() > room {
            text.push_str(&"x".repeat(room.saturating_sub(1)));
            text.push('\n');
            break;
        }
        text.push_str(&row);
        line += 1;
    }
    text.push_str(&tail);
    text
}

/// The prompt of a scenario.
pub fn prompt(scenario: &Scenario) -> String {
    if let (Some(steps), Some(_)) = (scenario.steps, scenario.grep) {
        return format!(
            "Search the project for the pattern you are asked for, {steps} times, then say done."
        );
    }
    match (scenario.steps, scenario.file) {
        (Some(steps), Some((file, _))) if steps > 0 => format!(
            "Run the shell command you are asked for {steps} times to read {file}, then say done."
        ),
        _ => "Say hello.".to_string(),
    }
}

fn write(path: &Path, text: &str) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, text)
}

/// Prepares a peer's home (kept across its runs, as a user's would be).
pub fn prepare_home(peer: &Peer, home: &Path, base_url: &str) -> std::io::Result<()> {
    std::fs::create_dir_all(home)?;
    if peer.kind == Kind::Codex {
        // peers.md: codex 0.169 speaks only the Responses API.
        write(
            &home.join(".codex/config.toml"),
            &format!(
                r#"model = "mock"
model_provider = "mock"
approval_policy = "never"
sandbox_mode = "workspace-write"

[model_providers.mock]
name = "mock"
base_url = "{base_url}"
wire_api = "responses"
env_key = "MOCK_API_KEY"

[features]
plugins = false
remote_plugin = false
apps = false

[analytics]
enabled = false
"#
            ),
        )?;
    }
    Ok(())
}

/// Prepares a project directory for one run: the scenario's file and the
/// peer's project config.
pub fn prepare_project(
    peer: &Peer,
    scenario: &Scenario,
    project: &Path,
    base_url: &str,
) -> std::io::Result<()> {
    std::fs::create_dir_all(project)?;
    write(&project.join("README.md"), "# bench project\n")?;
    if let Some((name, size)) = scenario.file {
        write(&project.join(name), &file_text(size))?;
    }
    if scenario.grep.is_some() {
        agentgate_benches::generate_tree(project, TREE_FILES)?;
    }
    let config = match (peer.kind, peer.wire) {
        (Kind::Agent, Wire::Chat) => serde_json::json!({
            "model": "mock/mock",
            "provider": {"mock": {"options": {"baseURL": base_url, "apiKey": "x"}}},
        }),
        // The agent's `openai` provider speaks the Responses API; its base
        // URL comes from OPENAI_BASE_URL (set in `command`).
        (Kind::Agent, Wire::Responses) => serde_json::json!({"model": "openai/mock"}),
        (Kind::Opencode, _) => serde_json::json!({
            "$schema": "https://opencode.ai/config.json",
            "autoupdate": false,
            "share": "disabled",
            "model": "mock/mock",
            "small_model": "mock/mock",
            "provider": {"mock": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "mock",
                "options": {"baseURL": base_url, "apiKey": "x"},
                "models": {"mock": {"name": "mock"}},
            }},
            "permission": {"bash": "allow", "doom_loop": "allow", "external_directory": "allow"},
        }),
        (Kind::Codex, _) => return Ok(()),
    };
    write(
        &project.join("opencode.json"),
        &serde_json::to_string_pretty(&config).unwrap_or_default(),
    )
}

/// The command of one run: cleared environment, the peer's home, the
/// project as working directory (and `PWD`, which opencode reads).
pub fn command(
    peer: &Peer,
    binary: &Path,
    scenario: &Scenario,
    project: &Path,
    home: &Path,
    base_url: &str,
    proxy: &str,
) -> Command {
    let mut cmd = agentgate_benches::offline_command(binary, project, home, Some(proxy));
    let prompt = prompt(scenario);
    let cold = scenario.steps.is_none();
    match peer.kind {
        Kind::Agent => {
            if peer.wire == Wire::Responses {
                cmd.env("OPENAI_BASE_URL", base_url)
                    .env("OPENAI_API_KEY", "x");
            }
            if cold {
                cmd.arg("--version");
            } else {
                cmd.args(["run", "--auto", &prompt]);
            }
        }
        Kind::Opencode => {
            cmd.env("OPENCODE_DISABLE_MODELS_FETCH", "1")
                .env("OPENCODE_DISABLE_LSP_DOWNLOAD", "1")
                .env("OPENCODE_DISABLE_AUTOUPDATE", "1");
            if cold {
                cmd.arg("--version");
            } else {
                cmd.args(["run", &prompt]);
            }
        }
        Kind::Codex => {
            cmd.env("CODEX_HOME", home.join(".codex"))
                .env("MOCK_API_KEY", "x");
            if cold {
                cmd.arg("--version");
            } else {
                cmd.args(["exec", "--skip-git-repo-check", &prompt]);
            }
        }
    }
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_have_their_size_and_markers() {
        for size in [200, 52 * 1024] {
            let text = file_text(size);
            assert_eq!(text.len(), size);
            assert!(
                text.starts_with(MARKER) && text.trim_end().ends_with(&format!("{MARKER} end"))
            );
        }
    }
}
