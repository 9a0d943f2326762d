//! Shared fixtures for the criterion benchmarks of the agent SDK and for
//! the JavaScript baseline (`baseline/opencode_evaluate.mjs`), which
//! receives exactly the same rules and queries through the JSON written by
//! `cargo run -p agentgate-benches --bin export-fixtures`.
//!
//! Everything is deterministic: rules come from fixed vocabularies picked
//! by a small seeded generator (splitmix64), so every run and both
//! languages see the same rule sets.
//!
//! ```
//! let rules = agentgate_benches::synthetic_rules(100);
//! assert_eq!(rules.len(), 100);
//! assert_eq!(rules, agentgate_benches::synthetic_rules(100));
//! ```

mod acp_client;
mod counting_alloc;
mod grep_tree;
mod mock_model;
mod offline_command;
mod serve_client;
mod tool_context;

pub use acp_client::{AcpClient, agent_message_chunk};
pub use counting_alloc::{CountingAllocator, usize_arg};
pub use grep_tree::{NEEDLE, generate_tree};
pub use mock_model::{MockModel, RequestRecord, RunRecord, Script, process_cpu_ns};
pub use offline_command::offline_command;
pub use serve_client::{
    ProcSample, Server, ServerKind, create_and_prompt, delete_session, http_client, proc_sample,
    server_config, spawn_server,
};
pub use tool_context::allow_all_context;

use agentgate_core::{AgentEnvironment, Agents};
use agentgate_permission::{Action, PermissionConfig, Rule, Ruleset};
use serde::Serialize;

/// The home directory used for `~` expansion in every fixture.
pub const HOME: &str = "/home/u";

/// splitmix64: a tiny, good-enough deterministic generator.
#[derive(Debug, Clone)]
pub struct Generator(u64);

impl Generator {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        Generator(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    /// One element of a non-empty slice.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Shell commands and some of their sub-commands.
const COMMANDS: &[(&str, &[&str])] = &[
    (
        "git",
        &[
            "status", "commit", "push", "pull", "log", "diff", "checkout", "rebase", "stash",
            "fetch", "add", "reset",
        ],
    ),
    ("npm", &["run", "install", "test", "ci", "publish", "exec"]),
    ("pnpm", &["install", "run", "dlx", "exec"]),
    (
        "cargo",
        &["build", "test", "run", "clippy", "fmt", "publish", "add"],
    ),
    (
        "docker",
        &["compose", "run", "build", "ps", "exec", "image"],
    ),
    ("kubectl", &["get", "apply", "delete", "logs", "describe"]),
    ("terraform", &["plan", "apply", "destroy", "init"]),
    ("make", &["build", "test", "install", "clean"]),
    ("go", &["build", "test", "run", "mod"]),
    ("python", &["-m", "manage.py", "setup.py"]),
    ("gh", &["pr", "issue", "repo", "run"]),
    ("rm", &["-rf", "-f", "-r"]),
    ("curl", &["-s", "-X", "-L"]),
    ("ls", &["-la", "-l"]),
    ("sudo", &["apt", "rm", "systemctl"]),
];

/// Project directories.
const DIRS: &[&str] = &[
    "src",
    "tests",
    "docs",
    "packages/app/src",
    "packages/core/src",
    "crates/agent-core/src",
    "scripts",
    ".github/workflows",
    "config",
    "migrations",
];

/// File extensions.
const EXTS: &[&str] = &[
    "rs", "ts", "tsx", "js", "json", "md", "toml", "yaml", "py", "go", "sql", "lock",
];

/// Hosts for `webfetch` rules.
const HOSTS: &[&str] = &[
    "github.com",
    "docs.rs",
    "crates.io",
    "developer.mozilla.org",
    "example.com",
    "npmjs.com",
];

/// Names of MCP servers and tools (permissions such as `mcp_github_create_issue`).
const MCP: &[(&str, &[&str])] = &[
    ("github", &["create_issue", "list_prs", "merge_pr"]),
    ("linear", &["create_ticket", "search"]),
    ("postgres", &["query", "schema"]),
];

/// Sub-agent names for `task` rules.
const AGENTS: &[&str] = &["general", "explore", "reviewer", "docs-writer", "migrator"];

fn action(generator: &mut Generator) -> Action {
    match generator.below(10) {
        0..=4 => Action::Allow,
        5..=7 => Action::Deny,
        _ => Action::Ask,
    }
}

/// One realistic rule (without its action).
fn rule_shape(generator: &mut Generator) -> (String, String) {
    match generator.below(20) {
        // bash: the most common permission in real configs.
        0..=8 => {
            let (cmd, subs) = generator.pick(COMMANDS);
            let sub = generator.pick(subs);
            let pattern = match generator.below(6) {
                0 => format!("{cmd} *"),
                1 => format!("{cmd} * *"),
                2 => format!("{cmd} {sub}"),
                3 => format!("{cmd} {sub} --*"),
                _ => format!("{cmd} {sub} *"),
            };
            ("bash".into(), pattern)
        }
        // edit / read: file globs.
        9..=13 => {
            let permission = if generator.below(2) == 0 {
                "edit"
            } else {
                "read"
            };
            let dir = generator.pick(DIRS);
            let ext = generator.pick(EXTS);
            let pattern = match generator.below(6) {
                0 => format!("{dir}/**/*.{ext}"),
                1 => format!("{dir}/*.{ext}"),
                2 => format!("*.{ext}"),
                3 => format!("{dir}/*"),
                4 => "*.env*".to_string(),
                _ => format!("{dir}/?*.{ext}"),
            };
            (permission.into(), pattern)
        }
        14 => {
            let host = generator.pick(HOSTS);
            let pattern = if generator.below(2) == 0 {
                format!("https://{host}/*")
            } else {
                format!("https://*.{host}/*")
            };
            ("webfetch".into(), pattern)
        }
        15 => {
            let pattern = match generator.below(3) {
                0 => format!("{HOME}/.ssh/*"),
                1 => format!("/tmp/{}/*", generator.pick(DIRS)),
                _ => format!("{HOME}/proj-{}/*", generator.below(50)),
            };
            ("external_directory".into(), pattern)
        }
        16 | 17 => {
            let (server, tools) = generator.pick(MCP);
            let permission = if generator.below(3) == 0 {
                format!("mcp_{server}_*")
            } else {
                format!("mcp_{server}_{}", generator.pick(tools))
            };
            (permission, "*".into())
        }
        18 => ("task".into(), generator.pick(AGENTS).to_string()),
        _ => {
            let permission = *generator.pick(&[
                "glob",
                "grep",
                "list",
                "webfetch",
                "websearch",
                "todowrite",
                "*",
            ]);
            (permission.into(), "*".into())
        }
    }
}

/// `n` realistic rules: a leading `{*, *, ask}` then a deterministic mix
/// of bash commands (`git * *`, `npm run *`), file globs (`src/**/*.rs`),
/// URLs, external directories, MCP tools and sub-agents, with about 50%
/// allow, 30% deny and 20% ask.
pub fn synthetic_rules(n: usize) -> Ruleset {
    let mut generator = Generator::new(0x5EED ^ n as u64);
    let mut rules = Ruleset::new();
    if n > 0 {
        rules.push(Rule::new("*", "*", Action::Ask));
    }
    while rules.len() < n {
        let (permission, pattern) = rule_shape(&mut generator);
        let action = action(&mut generator);
        rules.push(Rule::new(permission, pattern, action));
    }
    rules
}

/// A realistic 30-rule user `permission` config, as found in opencode.json.
pub const USER_CONFIG: &str = r#"{
  "bash": {
    "*": "ask",
    "git status*": "allow",
    "git diff*": "allow",
    "git log*": "allow",
    "git add *": "allow",
    "git commit *": "allow",
    "git push *": "ask",
    "git push --force*": "deny",
    "npm run *": "allow",
    "npm install *": "ask",
    "cargo build*": "allow",
    "cargo test*": "allow",
    "cargo clippy*": "allow",
    "cargo fmt*": "allow",
    "rm -rf *": "deny",
    "sudo *": "deny",
    "curl *": "ask",
    "docker compose *": "ask",
    "kubectl get *": "allow",
    "kubectl delete *": "deny",
    "ls *": "allow",
    "cat *": "allow",
    "grep *": "allow"
  },
  "edit": {"*": "allow", "*.lock": "deny", ".github/workflows/*": "ask", "migrations/*": "ask"},
  "read": {"~/.ssh/*": "deny", "~/.aws/*": "deny"},
  "webfetch": "ask"
}"#;

/// The 30-rule user config, parsed.
pub fn user_config() -> PermissionConfig {
    serde_json::from_str(USER_CONFIG).unwrap_or_default()
}

/// The agent environment of the conformance vectors' examples.
pub fn environment() -> AgentEnvironment {
    let mut env = AgentEnvironment::new(
        "/home/u/.local/share/opencode",
        "/tmp/opencode",
        "/home/u/proj",
    );
    env.home = Some(HOME.to_string());
    env
}

/// The realistic setup: the build agent's ruleset as `agentgate_core` builds
/// it (opencode §9.2: defaults, build's own rules, the 30 user rules, the
/// final tool-output allow).
pub fn realistic_rulesets() -> Vec<Ruleset> {
    let agents = Agents::builtin(&environment(), &user_config());
    vec![
        agents
            .get("build")
            .map(|agent| agent.permission.clone())
            .unwrap_or_default(),
    ]
}

/// One evaluation request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Query {
    /// The permission asked for.
    pub permission: String,
    /// The request pattern.
    pub pattern: String,
}

impl Query {
    fn new(permission: &str, pattern: &str) -> Self {
        Query {
            permission: permission.into(),
            pattern: pattern.into(),
        }
    }
}

/// The requests every ruleset is evaluated on: what a coding agent asks
/// in a typical session (commands, paths, URLs, MCP tools, sub-agents),
/// matching and non-matching.
pub fn queries() -> Vec<Query> {
    [
        ("bash", "git status"),
        ("bash", "git diff --stat"),
        ("bash", "git commit -m 'fix: the parser'"),
        ("bash", "git push origin main"),
        ("bash", "git push --force origin main"),
        ("bash", "npm run build"),
        ("bash", "npm install left-pad"),
        ("bash", "pnpm dlx create-app"),
        ("bash", "cargo test -p agent-permission"),
        (
            "bash",
            "cargo clippy --workspace --all-targets -- -D warnings",
        ),
        ("bash", "docker compose up -d"),
        ("bash", "kubectl get pods -n prod"),
        ("bash", "kubectl delete deployment api"),
        ("bash", "terraform apply -auto-approve"),
        ("bash", "rm -rf target"),
        ("bash", "sudo rm -rf /"),
        ("bash", "ls -la"),
        ("bash", "curl -s https://example.com/install.sh"),
        ("bash", "python -m venv .venv"),
        ("bash", "make test"),
        ("bash", "go test ./..."),
        ("bash", "gh pr create --fill"),
        ("bash", "unknown-tool --flag value"),
        ("bash", "echo hello\nrm -rf /"),
        ("edit", "src/permission/compiled.rs"),
        ("edit", "packages/app/src/components/Button.tsx"),
        ("edit", "Cargo.lock"),
        ("edit", ".github/workflows/ci.yaml"),
        ("edit", "migrations/0001_init.sql"),
        ("edit", "docs/guide/permissions.md"),
        ("read", "src/lib.rs"),
        ("read", ".env"),
        ("read", "config/.env.production"),
        ("read", ".env.example"),
        ("read", "/home/u/.ssh/id_ed25519"),
        ("read", "crates/agent-core/src/session/loop.rs"),
        ("glob", "**/*.rs"),
        ("grep", "fn main"),
        ("list", "src"),
        ("webfetch", "https://docs.rs/serde/latest/serde/"),
        ("webfetch", "https://api.github.com/repos/x/y"),
        ("webfetch", "https://evil.example.net/payload"),
        ("websearch", "rust criterion tutorial"),
        ("external_directory", "/tmp/opencode/scratch/*"),
        (
            "external_directory",
            "/home/u/.local/share/opencode/tool-output/x",
        ),
        ("external_directory", "/home/u/proj-7/*"),
        ("external_directory", "/etc/*"),
        ("task", "explore"),
        ("task", "reviewer"),
        ("todowrite", "*"),
        ("question", "*"),
        ("doom_loop", "read"),
        ("mcp_github_create_issue", "*"),
        ("mcp_postgres_query", "*"),
        ("mcp_unknown_tool", "*"),
        ("lsp", "src/main.rs"),
        ("skill", "pdf"),
        ("plan_enter", "*"),
    ]
    .into_iter()
    .map(|(permission, pattern)| Query::new(permission, pattern))
    .collect()
}

/// The tool list `disabled` is benchmarked on (the built-in tools plus a
/// few MCP tools).
pub const TOOLS: &[&str] = &[
    "bash",
    "read",
    "edit",
    "write",
    "apply_patch",
    "glob",
    "grep",
    "list",
    "task",
    "todowrite",
    "webfetch",
    "websearch",
    "question",
    "skill",
    "lsp",
    "mcp_github_create_issue",
    "mcp_postgres_query",
    "list_mcp_resources",
];

/// Input/pattern pairs for the `wildcard::matches` benchmark.
pub fn wildcard_pairs() -> Vec<(String, String)> {
    let mut pairs: Vec<(String, String)> = Vec::new();
    let patterns = [
        "git *",
        "git * *",
        "src/**/*.rs",
        "*.env*",
        "https://*.github.com/*",
        "npm run *",
        "a?c*d",
        "*",
    ];
    for query in queries() {
        for pattern in patterns {
            pairs.push((query.pattern.clone(), pattern.to_string()));
        }
    }
    pairs
}

/// A named rule set with the queries to evaluate on it.
#[derive(Debug, Clone, Serialize)]
pub struct Fixture {
    /// `10`, `100`, `1000` or `realistic`.
    pub name: String,
    /// The rulesets, evaluated as if concatenated.
    pub rulesets: Vec<Ruleset>,
    /// The requests.
    pub queries: Vec<Query>,
    /// The action `evaluate` decides for each query, so the baseline can
    /// check that it computes the same thing.
    pub expected: Vec<Action>,
}

/// The four fixtures of the comparison: 10, 100 and 1000 synthetic rules,
/// and the realistic build-agent-plus-user setup.
pub fn fixtures() -> Vec<Fixture> {
    let mut sets: Vec<(String, Vec<Ruleset>)> = [10usize, 100, 1000]
        .into_iter()
        .map(|n| (n.to_string(), vec![synthetic_rules(n)]))
        .collect();
    sets.push(("realistic".into(), realistic_rulesets()));
    sets.into_iter()
        .map(|(name, rulesets)| {
            let queries = queries();
            let refs: Vec<&Ruleset> = rulesets.iter().collect();
            let expected = queries
                .iter()
                .map(|q| agentgate_permission::decide(&q.permission, &q.pattern, &refs))
                .collect();
            Fixture {
                name,
                rulesets,
                queries,
                expected,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentgate_permission::CompiledRuleset;

    #[test]
    fn deterministic_and_sized() {
        for n in [0, 1, 10, 100, 1000] {
            assert_eq!(synthetic_rules(n).len(), n);
        }
        assert_eq!(synthetic_rules(1000), synthetic_rules(1000));
        let user = agentgate_permission::from_config_with_home(&user_config(), HOME);
        assert_eq!(user.len(), 30);
        // 12 defaults, 2 of build's own, 30 user rules, the final allow.
        assert_eq!(realistic_rulesets()[0].len(), 45);
    }

    #[test]
    fn decisions_are_mixed_and_compiled_agrees() {
        for fixture in fixtures() {
            let refs: Vec<&Ruleset> = fixture.rulesets.iter().collect();
            let compiled = CompiledRuleset::new(&refs);
            for (q, expected) in fixture.queries.iter().zip(&fixture.expected) {
                assert_eq!(
                    compiled.decide(&q.permission, &q.pattern),
                    *expected,
                    "{q:?}"
                );
            }
            let distinct: std::collections::BTreeSet<_> =
                fixture.expected.iter().map(|a| a.as_str()).collect();
            assert!(distinct.len() >= 2, "{}: {distinct:?}", fixture.name);
        }
    }
}
