//! OpenTelemetry export of `agent run`, `chat`, `serve` and `acp` (feature
//! `otel`, on by default): started inside the command's runtime when the
//! `OTEL_EXPORTER_OTLP_*` variables name an endpoint, flushed before the
//! runtime stops. Unset, nothing is set up: one look at the environment.
//! A setting that cannot be used is named on stderr and the command runs
//! without export (`docs/observability.md`, "Traces").

#[cfg(feature = "otel")]
use crate::terminal_text::Untrusted;

/// The export of one command, if any.
pub(crate) struct Telemetry {
    #[cfg(feature = "otel")]
    guard: Option<agentgate::telemetry::TelemetryGuard>,
}

/// Starts export as the environment says (call inside the runtime: gRPC
/// export lives on it).
pub(crate) fn start() -> Telemetry {
    #[cfg(feature = "otel")]
    {
        match agentgate::telemetry::init_from_env() {
            Ok(guard) => Telemetry {
                guard: guard.is_active().then_some(guard),
            },
            Err(error) => {
                // The message quotes the environment's values as given.
                eprintln!(
                    "agent: warning: traces are not exported: {}",
                    Untrusted::new(&error.to_string())
                );
                Telemetry { guard: None }
            }
        }
    }
    #[cfg(not(feature = "otel"))]
    Telemetry {}
}

impl Telemetry {
    /// Exports what is still buffered and stops the exporter.
    pub(crate) async fn finish(self) {
        #[cfg(feature = "otel")]
        if let Some(guard) = self.guard {
            guard.shutdown().await;
        }
    }
}

/// Whether the spans carry prompt and completion contents
/// (`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`).
pub(crate) fn capture_content() -> bool {
    #[cfg(feature = "otel")]
    {
        agentgate::telemetry::capture_content_from_env()
    }
    #[cfg(not(feature = "otel"))]
    false
}
