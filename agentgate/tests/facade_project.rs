//! A new cargo project whose only dependencies are the README's block
//! (`agentgate` and `tokio`) compiles the README's embedding examples: the
//! coding agent as its `main` and the typed tool, whose derives and
//! `#[async_trait]` come through the facade.
//!
//! The project is checked, not built (type checking is what the facade's
//! paths need), offline against the workspace's Cargo.lock so it resolves
//! the versions the workspace was tested with, in its own target directory
//! beside the workspace's build output so a second run reuses it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the facade sits in the workspace root")
        .to_path_buf()
}

/// The target directory this test binary was built into:
/// `<target>/<profile>/deps/<test binary>`.
fn workspace_target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    exe.ancestors()
        .nth(3)
        .expect("the test binary sits in <target>/<profile>/deps")
        .to_path_buf()
}

/// The body of the first fenced block of `language` after `heading`.
fn block_after<'a>(text: &'a str, heading: &str, language: &str) -> &'a str {
    let start = text
        .find(heading)
        .unwrap_or_else(|| panic!("README.md has no heading {heading:?}"));
    let fence = format!("```{language}\n");
    let open = start
        + text[start..]
            .find(&fence)
            .unwrap_or_else(|| panic!("no ```{language} block after {heading:?}"))
        + fence.len();
    let close = open + text[open..].find("```").expect("an unclosed code block");
    &text[open..close]
}

/// A README Rust block as a source file: rustdoc's hidden lines (`# `)
/// are doctest scaffolding, not part of the example.
fn without_hidden_lines(code: &str) -> String {
    code.lines()
        .filter(|line| !(line.trim_start().starts_with("# ") || line.trim() == "#"))
        .map(|line| format!("{line}\n"))
        .collect()
}

/// The README's `[dependencies]` block with the published version of
/// `agentgate` replaced by this checkout.
fn manifest(readme: &str, facade: &Path) -> String {
    let block = block_after(readme, "## Embedding the SDK", "toml");
    let mut replaced = 0;
    let dependencies: String = block
        .lines()
        .map(|line| {
            if line.starts_with("agentgate ") || line.starts_with("agentgate=") {
                replaced += 1;
                format!(
                    "agentgate = {{ path = {:?} }}\n",
                    facade.display().to_string()
                )
            } else {
                format!("{line}\n")
            }
        })
        .collect();
    assert_eq!(
        replaced, 1,
        "the README's block names agentgate once:\n{block}"
    );
    assert!(dependencies.starts_with("[dependencies]\n"), "{block}");
    let names: Vec<&str> = dependencies
        .lines()
        .skip(1)
        .filter_map(|line| line.split([' ', '=']).next())
        .filter(|name| !name.is_empty())
        .collect();
    assert_eq!(names, ["agentgate", "tokio"], "only the facade and tokio");
    format!(
        "[package]\nname = \"facade-check\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
         {dependencies}\n# Not part of any enclosing workspace.\n[workspace]\n"
    )
}

#[test]
fn a_project_with_only_the_facade_and_tokio_compiles_the_readme_examples() {
    let root = workspace_root();
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let agent = block_after(&readme, "### A coding agent", "rust");
    let tool = block_after(&readme, "### A typed tool", "rust");
    assert!(
        agent.contains("fn main") && tool.contains("derive(") && tool.contains("JsonSchema"),
        "the README's coding agent has a main and its tool derives JsonSchema"
    );

    let project = std::env::temp_dir().join(format!("agentgate-facade-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&project);
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::write(
        project.join("Cargo.toml"),
        manifest(&readme, &root.join("agentgate")),
    )
    .unwrap();
    // The same versions the workspace resolved; `--offline` then needs
    // nothing the workspace's own build has not fetched.
    std::fs::copy(root.join("Cargo.lock"), project.join("Cargo.lock")).unwrap();
    let main = format!(
        "{}\n// The README's typed tool, registered where an embedder would.\nmod typed_tool;\n",
        without_hidden_lines(agent)
    );
    std::fs::write(project.join("src/main.rs"), main).unwrap();
    let tool_module = format!(
        "{}\n/// The registry with the tool.\n#[allow(dead_code)]\npub fn registry() -> agentgate::ToolRegistry {{\n    \
         agentgate::ToolRegistry::new().with(WordCount)\n}}\n",
        without_hidden_lines(tool)
    );
    std::fs::write(project.join("src/typed_tool.rs"), tool_module).unwrap();

    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .args(["check", "--offline", "--quiet", "--manifest-path"])
        .arg(project.join("Cargo.toml"))
        .env(
            "CARGO_TARGET_DIR",
            workspace_target_dir().join("facade-check"),
        )
        // CI runs the test build under clippy-driver; the child is plain
        // cargo check of an outside project.
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .env_remove("CLIPPY_ARGS")
        .output()
        .expect("run cargo");
    let _ = std::fs::remove_dir_all(&project);
    assert!(
        output.status.success(),
        "cargo check of the facade project failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
