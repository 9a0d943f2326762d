//! Configuration mistakes a newcomer makes end `agent run` before any
//! request with a line naming the file, the key and the fix: a `baseURL`
//! without a scheme, a model not among a configured server's models, a
//! misspelt key (a warning, with the key it likely meant).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::run_cli::{Sandbox, text};

/// Writes the user's own configuration (`$XDG_CONFIG_HOME/opencode`).
fn user_config(sandbox: &Sandbox, json: &str) -> std::path::PathBuf {
    let path = sandbox.root.join("config/opencode/opencode.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, json).unwrap();
    path
}

#[tokio::test]
async fn a_base_url_without_a_scheme_names_the_file_the_key_and_the_fix() {
    let sandbox = Sandbox::new("config-scheme");
    let file = user_config(
        &sandbox,
        r#"{"model": "ollama/qwen3", "provider": {"ollama": {"options": {"baseURL": "localhost:11434/v1"}}}}"#,
    );
    let out = sandbox.agent(&["run", "hi"], &[]).await;
    let stderr = text(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "a configuration error: {stderr}"
    );
    assert!(stderr.contains(&file.display().to_string()), "{stderr}");
    assert!(
        stderr.contains("provider.ollama.options.baseURL"),
        "{stderr}"
    );
    assert!(stderr.contains("\"http://localhost:11434/v1\""), "{stderr}");
}

#[tokio::test]
async fn a_model_not_listed_under_its_server_is_refused_naming_the_listed_ones() {
    let sandbox = Sandbox::new("config-unlisted");
    user_config(
        &sandbox,
        r#"{"model": "ollama/llama9", "provider": {"ollama": {"options": {"baseURL": "http://127.0.0.1:9/v1"}, "models": {"llama3": {}}}}}"#,
    );
    let out = sandbox.agent(&["run", "hi"], &[]).await;
    let stderr = text(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "a configuration error: {stderr}"
    );
    assert!(
        stderr.contains("model ollama/llama9: not listed under `provider.ollama.models` (listed: llama3): add \"llama9\" there"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("could not connect"),
        "no request was made: {stderr}"
    );
}

#[tokio::test]
async fn a_misspelt_key_of_the_project_is_named_with_the_key_it_likely_meant() {
    let sandbox = Sandbox::new("config-typo");
    sandbox.config(r#"{"modle": "ollama/qwen3"}"#);
    let out = sandbox.agent(&["run", "hi"], &[]).await;
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("modle: unknown key, ignored; did you mean \"model\"?"),
        "{stderr}"
    );
}
