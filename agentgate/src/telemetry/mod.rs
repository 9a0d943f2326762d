//! OpenTelemetry traces of the engine (feature `otel`): the GenAI spans of
//! turns (`invoke_agent`), model calls (`chat`), tool calls
//! (`execute_tool`) and permission checks (`permission`), exported over
//! OTLP (`http/protobuf` or `grpc`) to where the standard
//! `OTEL_EXPORTER_OTLP_*` variables say.
//!
//! ```no_run
//! # async fn demo() -> Result<(), agentgate::telemetry::TelemetryError> {
//! // Nothing is set up (no exporter, no thread) unless an endpoint is set.
//! let telemetry = agentgate::telemetry::init_from_env()?;
//! // ... run agents ...
//! telemetry.shutdown().await; // flushes (dropping the guard does too)
//! # Ok(()) }
//! ```
//!
//! The spans are plain `tracing` spans of the library crates (targets
//! [`agentgate_core::TRACE_TARGET`] and
//! [`agentgate_permission::TRACE_TARGET`]): a host with its own
//! subscriber adds [`layer`] over a [`tracer_provider`] instead of calling
//! [`init_from_env`]. Guide: `docs/observability.md`, "Traces".

mod array_attributes;
mod config;
mod export;

pub use config::{
    CAPTURE_CONTENT, ENDPOINT, HEADERS, OtlpConfig, PROTOCOL, Protocol, SDK_DISABLED, SERVICE_NAME,
    TRACES_ENDPOINT, TRACES_EXPORTER, TRACES_HEADERS, TRACES_PROTOCOL, TelemetryError,
    capture_content_from_env,
};
pub use export::{TelemetryGuard, init, init_from_env, layer, tracer_provider};
