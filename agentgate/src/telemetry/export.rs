//! The export pipeline: an OTLP span exporter behind the SDK's batch
//! processor (its own thread), and the `tracing` layer feeding it the
//! engine's spans.

use std::sync::Arc;
use std::time::Duration;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{SpanExporter, WithExportConfig, WithHttpConfig, WithTonicConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing::Subscriber;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::registry::LookupSpan;

use super::array_attributes::ArrayAttributes;
use super::config::{OtlpConfig, Protocol, TelemetryError};

/// The `service.name` when `OTEL_SERVICE_NAME` is unset.
const DEFAULT_SERVICE: &str = "agentgate";

/// How long one export may take before it is given up.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// Keeps trace export running; flushes what is buffered and stops the
/// exporter when shut down or dropped. Inactive (holding nothing) when
/// the environment configured no export.
#[must_use = "dropping the guard stops the export"]
#[derive(Debug)]
pub struct TelemetryGuard {
    provider: Option<SdkTracerProvider>,
}

impl TelemetryGuard {
    /// A guard with nothing to flush.
    pub fn inactive() -> Self {
        TelemetryGuard { provider: None }
    }

    /// Whether traces are being exported.
    pub fn is_active(&self) -> bool {
        self.provider.is_some()
    }

    /// Exports the spans still buffered and stops the exporter, off the
    /// async threads (the export itself blocks).
    pub async fn shutdown(mut self) {
        let Some(provider) = self.provider.take() else {
            return;
        };
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                let _ = handle.spawn_blocking(move || provider.shutdown()).await;
            }
            Err(_) => {
                let _ = provider.shutdown();
            }
        }
    }
}

impl Drop for TelemetryGuard {
    fn drop(&mut self) {
        if let Some(provider) = self.provider.take() {
            let _ = provider.shutdown();
        }
    }
}

/// Exports the engine's spans as the environment says
/// ([`OtlpConfig::from_env`], service `agentgate` unless
/// `OTEL_SERVICE_NAME` names another), installing a global `tracing`
/// subscriber. With no endpoint set this returns an inactive guard and
/// sets up nothing at all. For `grpc`, call it inside a tokio runtime.
pub fn init_from_env() -> Result<TelemetryGuard, TelemetryError> {
    match OtlpConfig::from_env(DEFAULT_SERVICE)? {
        Some(config) => init(&config),
        None => Ok(TelemetryGuard::inactive()),
    }
}

/// Exports the engine's spans as `config` says, installing a global
/// `tracing` subscriber (fails if one is installed already).
pub fn init(config: &OtlpConfig) -> Result<TelemetryGuard, TelemetryError> {
    let provider = tracer_provider(config)?;
    let subscriber = tracing_subscriber::registry().with(layer(&provider));
    tracing::subscriber::set_global_default(subscriber).map_err(|_| {
        TelemetryError::SubscriberSet {
            var: config.endpoint_var,
        }
    })?;
    Ok(TelemetryGuard {
        provider: Some(provider),
    })
}

/// The `tracing` layer turning the engine's GenAI and permission spans
/// (and only those) into OpenTelemetry spans of `provider`.
pub fn layer<S>(provider: &SdkTracerProvider) -> impl Layer<S>
where
    S: Subscriber + for<'span> LookupSpan<'span>,
{
    let targets = Targets::new()
        .with_target(agentgate_core::TRACE_TARGET, tracing::Level::INFO)
        .with_target(agentgate_permission::TRACE_TARGET, tracing::Level::INFO);
    // Only the conventions' attributes: no source locations, thread ids
    // or busy/idle times on every span.
    tracing_opentelemetry::layer()
        .with_tracer(provider.tracer("agentgate"))
        .with_location(false)
        .with_threads(false)
        .with_tracked_inactivity(false)
        .with_target(false)
        .with_filter(targets)
}

/// A tracer provider exporting to `config`'s endpoint through a batch
/// processor (spans leave in the background; shutting the provider down
/// flushes them).
pub fn tracer_provider(config: &OtlpConfig) -> Result<SdkTracerProvider, TelemetryError> {
    let exporter = match config.protocol {
        Protocol::HttpProtobuf => http_exporter(config)?,
        Protocol::Grpc => grpc_exporter(config)?,
    };
    let resource = Resource::builder()
        .with_service_name(config.service_name.clone())
        .build();
    Ok(SdkTracerProvider::builder()
        .with_batch_exporter(ArrayAttributes(exporter))
        .with_resource(resource)
        .build())
}

/// The error of a failed exporter setup.
fn exporter_error(config: &OtlpConfig, message: impl ToString) -> TelemetryError {
    TelemetryError::Exporter {
        var: config.endpoint_var,
        endpoint: config.endpoint.clone(),
        message: message.to_string(),
    }
}

/// The OTLP/HTTP (protobuf) exporter.
fn http_exporter(config: &OtlpConfig) -> Result<SpanExporter, TelemetryError> {
    let client = blocking_client().map_err(|e| exporter_error(config, e))?;
    SpanExporter::builder()
        .with_http()
        .with_http_client(client)
        .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
        .with_endpoint(config.endpoint.clone())
        .with_timeout(EXPORT_TIMEOUT)
        .with_headers(config.headers.clone().into_iter().collect())
        .build()
        .map_err(|e| exporter_error(config, e))
}

/// The HTTP client of OTLP/HTTP: blocking (the batch processor exports on
/// its own thread, outside any runtime), on rustls with the ring provider
/// and the webpki roots like the SDK's other clients. Built on a thread
/// of its own: a blocking client may not be built inside a runtime.
fn blocking_client() -> Result<reqwest_blocking::blocking::Client, String> {
    let build = || {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let roots = rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        let tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS configuration refused: {e}"))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        reqwest_blocking::blocking::Client::builder()
            .tls_backend_preconfigured(tls)
            .timeout(EXPORT_TIMEOUT)
            .build()
            .map_err(|e| format!("HTTP client: {e}"))
    };
    std::thread::spawn(build)
        .join()
        .map_err(|_| "the thread building the HTTP client stopped".to_string())?
}

/// The OTLP/gRPC exporter (tonic; TLS with the webpki roots for an
/// `https://` endpoint). Its channel lives on the current tokio runtime.
fn grpc_exporter(config: &OtlpConfig) -> Result<SpanExporter, TelemetryError> {
    if tokio::runtime::Handle::try_current().is_err() {
        return Err(exporter_error(
            config,
            "gRPC export needs a tokio runtime: set it up from inside one",
        ));
    }
    let mut builder = SpanExporter::builder()
        .with_tonic()
        .with_endpoint(config.endpoint.clone())
        .with_timeout(EXPORT_TIMEOUT);
    if config.endpoint.starts_with("https://") {
        let tls =
            opentelemetry_otlp::tonic_types::transport::ClientTlsConfig::new().with_webpki_roots();
        builder = builder.with_tls_config(tls);
    }
    if !config.headers.is_empty() {
        let mut headers = http::HeaderMap::new();
        for (key, value) in &config.headers {
            let name =
                http::HeaderName::try_from(key.as_str()).map_err(|e| exporter_error(config, e))?;
            let value = http::HeaderValue::try_from(value.as_str())
                .map_err(|e| exporter_error(config, e))?;
            headers.insert(name, value);
        }
        let metadata =
            opentelemetry_otlp::tonic_types::metadata::MetadataMap::from_headers(headers);
        builder = builder.with_metadata(metadata);
    }
    builder.build().map_err(|e| exporter_error(config, e))
}
