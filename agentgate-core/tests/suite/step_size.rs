//! A model stream that never ends stops at the step ceiling
//! (`LoopSettings::max_step_bytes`) with an error saying so, once: the step is
//! not retried, whether the stream had shown text or not.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agentgate_core::{
    AgentSpec, Engine, EventStream, LanguageModel, LoopSettings, ModelError, ModelInfo,
    ModelRequest, Session, StopReason, StreamEvent,
};
use tokio_util::sync::CancellationToken;

/// What the endless stream repeats.
#[derive(Clone, Copy)]
enum Endless {
    /// Text deltas: the attempt has shown output.
    Text,
    /// Tool-argument deltas of a call that never completes: nothing shown,
    /// so an ordinary failure would be retried.
    ToolInput,
}

struct EndlessModel {
    info: ModelInfo,
    kind: Endless,
    calls: AtomicUsize,
}

#[async_trait::async_trait]
impl LanguageModel for EndlessModel {
    fn info(&self) -> &ModelInfo {
        &self.info
    }

    async fn stream(
        &self,
        _request: ModelRequest,
        _cancel: CancellationToken,
    ) -> Result<EventStream, ModelError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let chunk = "x".repeat(64 * 1024);
        let (start, delta) = match self.kind {
            Endless::Text => (
                StreamEvent::TextStart { id: "t".into() },
                StreamEvent::TextDelta {
                    id: "t".into(),
                    delta: chunk,
                },
            ),
            Endless::ToolInput => (
                StreamEvent::ToolInputStart {
                    id: "call_1".into(),
                    name: "echo".into(),
                },
                StreamEvent::ToolInputDelta {
                    id: "call_1".into(),
                    delta: chunk,
                },
            ),
        };
        let events = std::iter::once(start)
            .chain(std::iter::repeat(delta))
            .map(Ok);
        Ok(Box::pin(futures::stream::iter(events)))
    }
}

async fn run(kind: Endless) -> (StopReason, usize) {
    let model = Arc::new(EndlessModel {
        info: ModelInfo::new("endless", "endless"),
        kind,
        calls: AtomicUsize::new(0),
    });
    let mut config = LoopSettings::default();
    config.max_step_bytes = 1024 * 1024;
    let engine = Engine::builder(model.clone())
        .agent(AgentSpec::new("build"))
        .config(config)
        .build();
    let session = engine
        .create_session(Session::new("build", std::env::temp_dir()))
        .await
        .unwrap();
    let turn = engine.prompt(&session.id, "talk").await.unwrap();
    (turn.stop, model.calls.load(Ordering::SeqCst))
}

fn error_of(stop: &StopReason) -> String {
    match stop {
        StopReason::Error { error } => error.message.clone(),
        other => panic!("expected an error, got {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn an_endless_text_stream_ends_the_step_at_the_ceiling() {
    let (stop, calls) = run(Endless::Text).await;
    let message = error_of(&stop);
    assert!(
        message.contains("the model's step exceeded 1 MB"),
        "{message}"
    );
    assert_eq!(calls, 1);
}

#[tokio::test(start_paused = true)]
async fn endless_tool_arguments_end_the_step_without_a_retry() {
    let (stop, calls) = run(Endless::ToolInput).await;
    let message = error_of(&stop);
    assert!(
        message.contains("the model's step exceeded 1 MB"),
        "{message}"
    );
    assert_eq!(calls, 1, "the same request would stream the same way");
}
