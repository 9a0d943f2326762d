//! `provider.<id>.models.<model>.limit.output` is the output cap a run's
//! requests ask for, at most 32 000 as opencode sends it; a model that
//! declares none gets the server's default.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};

use super::run_cli::{Sandbox, bodies, openai_answer, openai_server, text};

/// The first request body of `agent run --model local/<model>` with the
/// config's limits.
async fn first_body(model: &str) -> Value {
    let sandbox = Sandbox::new(&format!("output-cap-{model}"));
    let server = openai_server(openai_answer("Done."), openai_answer("unused")).await;
    let config = json!({
        "provider": {"local": {
            "options": {"baseURL": format!("{}/v1", server.uri())},
            "models": {
                "small": {"limit": {"context": 8192, "output": 1000}},
                "large": {"limit": {"context": 400000, "output": 128000}},
                "plain": {}
            }
        }}
    });
    sandbox.config(&config.to_string());
    let name = format!("local/{model}");
    let out = sandbox.agent(&["run", "--model", &name, "hi"], &[]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    bodies(&server).await.remove(0)
}

#[tokio::test]
async fn the_configured_output_limit_is_the_requests_max_tokens() {
    assert_eq!(first_body("small").await["max_tokens"], 1000);
    assert_eq!(
        first_body("large").await["max_tokens"],
        32000,
        "capped as opencode caps it"
    );
    let plain = first_body("plain").await;
    assert!(plain.get("max_tokens").is_none(), "{plain}");
}
