//! A custom `LanguageModel`: a toy that streams the user's last message
//! back in capitals, word by word. A real one would call an HTTP API here.
//!
//! Run: `cargo run -p agentgate-examples --example custom_model`

use std::sync::Arc;

use agentgate::{
    CancellationToken, CodingAgent, ContentPart, EventStream, FinishReason, LanguageModel,
    ModelError, ModelInfo, ModelRequest, ModelRole, StreamEvent, Usage,
};

struct Shout {
    info: ModelInfo,
}

#[async_trait::async_trait]
impl LanguageModel for Shout {
    fn info(&self) -> &ModelInfo {
        &self.info
    }

    async fn stream(
        &self,
        request: ModelRequest,
        _cancel: CancellationToken,
    ) -> Result<EventStream, ModelError> {
        let last = request
            .messages
            .iter()
            .rev()
            .filter(|m| matches!(m.role, ModelRole::User))
            .flat_map(|m| m.content.iter())
            .find_map(|p| match p {
                ContentPart::Text { text, .. } => Some(text.to_uppercase()),
                _ => None,
            })
            .unwrap_or_default();
        let id = "t1".to_string();
        let mut events = vec![StreamEvent::TextStart { id: id.clone() }];
        for word in last.split_inclusive(' ') {
            events.push(StreamEvent::TextDelta {
                id: id.clone(),
                delta: word.into(),
            });
        }
        events.push(StreamEvent::TextEnd {
            id,
            provider_metadata: None,
        });
        events.push(StreamEvent::Finish {
            reason: FinishReason::Stop,
            usage: Usage::default(),
            provider_metadata: None,
        });
        Ok(Box::pin(futures::stream::iter(events.into_iter().map(Ok))))
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let model = Arc::new(Shout {
        info: ModelInfo::new("toy", "shout"),
    });
    let agent = CodingAgent::builder(env!("CARGO_MANIFEST_DIR"))
        // "Always" answers remembered in memory for this run (by default
        // they are kept in the program's own data directory).
        .permissions(agentgate::permission::PermissionGate::new())
        .model(model)
        .build()
        .await?;
    let turn = agent.run("hello there").await?;
    println!("{}", turn.text());
    assert_eq!(turn.text(), "HELLO THERE");
    Ok(())
}
