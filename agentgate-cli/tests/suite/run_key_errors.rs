//! A provider that refuses the API key (401): the run's error names where
//! the key came from — the config key and file, or the environment
//! variable — so the person knows which one to correct.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use super::run_cli::{Sandbox, text};

/// A server that answers every request with a 401.
async fn refusing(route: &str) -> MockServer {
    let server = MockServer::start().await;
    let body = json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}});
    Mock::given(method("POST"))
        .and(path(route))
        .respond_with(ResponseTemplate::new(401).set_body_json(body))
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn a_refused_config_key_names_the_key_and_its_file() {
    let sandbox = Sandbox::new("key-config");
    let server = refusing("/v1/chat/completions").await;
    let config = json!({
        "model": "local/qwen3",
        "provider": {"local": {"options": {
            "baseURL": format!("{}/v1", server.uri()),
            "apiKey": "sk-wrong"
        }}}
    });
    sandbox.config(&config.to_string());
    let out = sandbox.agent(&["run", "hi"], &[]).await;
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    let file = sandbox.project.join("opencode.json");
    assert!(
        stderr.contains(&format!(
            "the API key from `provider.local.options.apiKey` in {} was refused",
            file.display()
        )),
        "{stderr}"
    );
}

#[tokio::test]
async fn a_refused_environment_key_names_the_variable() {
    let sandbox = Sandbox::new("key-env");
    let server = refusing("/v1/messages").await;
    let env = [
        ("ANTHROPIC_API_KEY", "sk-ant-wrong".to_string()),
        ("ANTHROPIC_BASE_URL", format!("{}/v1", server.uri())),
    ];
    let out = sandbox
        .agent(
            &["run", "--model", "anthropic/claude-sonnet-4-5", "hi"],
            &env,
        )
        .await;
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("the API key from the ANTHROPIC_API_KEY environment variable was refused"),
        "{stderr}"
    );
}
