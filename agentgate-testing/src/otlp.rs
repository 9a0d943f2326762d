//! Loopback OTLP receivers (feature `otlp`): an HTTP server on 127.0.0.1
//! that takes `POST /v1/traces` bodies, decodes each as the protobuf
//! `ExportTraceServiceRequest`, and keeps the spans for a test to read as
//! [`ReceivedSpan`]s; or the same over gRPC (`TraceService/Export`). It runs on a thread and runtime of its own,
//! so a test blocked on a flush (or on a child process) still gets its
//! export answered.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use prost::Message;
use tonic::transport::server::TcpIncoming;

/// An attribute value as received.
#[derive(Debug, Clone, PartialEq)]
pub enum Attr {
    /// A string.
    Str(String),
    /// An integer.
    Int(i64),
    /// A floating-point number.
    Double(f64),
    /// A boolean.
    Bool(bool),
    /// An array of values.
    Array(Vec<Attr>),
    /// Anything else (maps, bytes, empty).
    Other,
}

/// One span as a receiver got it.
#[derive(Debug, Clone)]
pub struct ReceivedSpan {
    /// Its name (`invoke_agent build`, `chat gpt-4.1`, …).
    pub name: String,
    /// Its id.
    pub span_id: Vec<u8>,
    /// Its parent's id (empty for a root span).
    pub parent_span_id: Vec<u8>,
    /// Its trace's id.
    pub trace_id: Vec<u8>,
    /// Its kind, as the protobuf numbers it (1 internal, 3 client).
    pub kind: i32,
    /// Its status code (0 unset, 1 ok, 2 error).
    pub status_code: i32,
    /// Its attributes.
    pub attributes: BTreeMap<String, Attr>,
    /// The `service.name` of its resource.
    pub service_name: Option<String>,
}

impl ReceivedSpan {
    /// The string attribute `key`.
    pub fn str(&self, key: &str) -> Option<&str> {
        match self.attributes.get(key) {
            Some(Attr::Str(text)) => Some(text),
            _ => None,
        }
    }

    /// The integer attribute `key`.
    pub fn int(&self, key: &str) -> Option<i64> {
        match self.attributes.get(key) {
            Some(Attr::Int(n)) => Some(*n),
            _ => None,
        }
    }

    /// Whether it is the child of `parent`.
    pub fn is_child_of(&self, parent: &ReceivedSpan) -> bool {
        self.trace_id == parent.trace_id && self.parent_span_id == parent.span_id
    }
}

/// What the server's handler shares with the test.
#[derive(Default)]
struct Received {
    spans: Vec<ReceivedSpan>,
    requests: usize,
}

/// A running receiver; stops when dropped.
pub struct OtlpReceiver {
    addr: SocketAddr,
    grpc: bool,
    received: Arc<Mutex<Received>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl OtlpReceiver {
    /// Starts an OTLP/HTTP receiver on a free loopback port; panics
    /// (failing the test) when it cannot.
    pub fn start() -> Self {
        Self::start_with(serve, false)
    }

    /// Starts an OTLP/gRPC receiver on a free loopback port.
    pub fn start_grpc() -> Self {
        Self::start_with(serve_grpc, true)
    }

    /// Starts `server` on its own thread, on a free loopback port.
    fn start_with(server: fn(std::net::TcpListener, Shared, Stopped), grpc: bool) -> Self {
        let received = Arc::new(Mutex::new(Received::default()));
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let listener = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap_or_else(|e| panic!("cannot bind a loopback port: {e}"));
        let addr = listener
            .local_addr()
            .unwrap_or_else(|e| panic!("no local address: {e}"));
        let state = Arc::clone(&received);
        std::thread::spawn(move || server(listener, state, stopped));
        OtlpReceiver {
            addr,
            grpc,
            received,
            stop: Some(stop),
        }
    }

    /// The base endpoint, for `OTEL_EXPORTER_OTLP_ENDPOINT` (with
    /// `OTEL_EXPORTER_OTLP_PROTOCOL=grpc` for a gRPC receiver).
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Whether it speaks gRPC (else OTLP/HTTP).
    pub fn is_grpc(&self) -> bool {
        self.grpc
    }

    /// Every span received so far.
    pub fn spans(&self) -> Vec<ReceivedSpan> {
        self.lock().spans.clone()
    }

    /// How many export requests arrived.
    pub fn requests(&self) -> usize {
        self.lock().requests
    }

    /// The spans once `done` holds for them, or whatever arrived when
    /// `timeout` passed (the test's assertions then say what is missing).
    pub fn wait_for(
        &self,
        timeout: Duration,
        done: impl Fn(&[ReceivedSpan]) -> bool,
    ) -> Vec<ReceivedSpan> {
        let deadline = Instant::now() + timeout;
        loop {
            let spans = self.spans();
            if done(&spans) || Instant::now() >= deadline {
                return spans;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Received> {
        self.received.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for OtlpReceiver {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// The span named `name`; panics (failing the test) listing the names
/// received when there is none.
pub fn span<'a>(spans: &'a [ReceivedSpan], name: &str) -> &'a ReceivedSpan {
    spans.iter().find(|s| s.name == name).unwrap_or_else(|| {
        let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
        panic!("no span {name:?} among {names:?}")
    })
}

/// What the handlers share with the test.
type Shared = Arc<Mutex<Received>>;

/// Fires when the receiver is dropped.
type Stopped = tokio::sync::oneshot::Receiver<()>;

/// A runtime for one receiver thread, and its listener on it.
fn runtime_for(
    listener: std::net::TcpListener,
) -> (tokio::runtime::Runtime, std::net::TcpListener) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("cannot start the receiver's runtime: {e}"));
    let _ = listener.set_nonblocking(true);
    (runtime, listener)
}

/// Serves OTLP/HTTP on `listener` until `stopped` fires.
fn serve(listener: std::net::TcpListener, state: Shared, stopped: Stopped) {
    let (runtime, listener) = runtime_for(listener);
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener)
            .unwrap_or_else(|e| panic!("cannot serve the loopback port: {e}"));
        let app = axum::Router::new()
            .route("/v1/traces", axum::routing::post(export))
            .with_state(state);
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = stopped.await;
            })
            .await;
    });
}

/// Serves OTLP/gRPC on `listener` until `stopped` fires.
fn serve_grpc(listener: std::net::TcpListener, state: Shared, stopped: Stopped) {
    let (runtime, listener) = runtime_for(listener);
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener)
            .unwrap_or_else(|e| panic!("cannot serve the loopback port: {e}"));
        let _ = tonic::transport::Server::builder()
            .add_service(TraceServiceServer::new(GrpcTraces(state)))
            .serve_with_incoming_shutdown(TcpIncoming::from(listener), async move {
                let _ = stopped.await;
            })
            .await;
    });
}

/// The gRPC `TraceService`, keeping what it is sent.
struct GrpcTraces(Shared);

#[tonic::async_trait]
impl TraceService for GrpcTraces {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        keep(&self.0, request.into_inner());
        Ok(tonic::Response::new(ExportTraceServiceResponse::default()))
    }
}

/// `POST /v1/traces`: keeps the request's spans.
async fn export(State(state): State<Shared>, body: Bytes) -> impl IntoResponse {
    let Ok(request) = ExportTraceServiceRequest::decode(body) else {
        return (StatusCode::BAD_REQUEST, Vec::new()).into_response();
    };
    keep(&state, request);
    let response = ExportTraceServiceResponse::default().encode_to_vec();
    ([(header::CONTENT_TYPE, "application/x-protobuf")], response).into_response()
}

/// Keeps the spans of `request`.
fn keep(state: &Shared, request: ExportTraceServiceRequest) {
    let mut received = state.lock().unwrap_or_else(PoisonError::into_inner);
    received.requests += 1;
    for resource_spans in request.resource_spans {
        let service_name = resource_spans.resource.as_ref().and_then(|resource| {
            resource
                .attributes
                .iter()
                .find(|kv| kv.key == "service.name")
                .and_then(|kv| match attr(kv.value.as_ref()) {
                    Attr::Str(name) => Some(name),
                    _ => None,
                })
        });
        for scope in resource_spans.scope_spans {
            for span in scope.spans {
                received.spans.push(ReceivedSpan {
                    name: span.name,
                    span_id: span.span_id,
                    parent_span_id: span.parent_span_id,
                    trace_id: span.trace_id,
                    kind: span.kind,
                    status_code: span.status.map_or(0, |status| status.code),
                    attributes: attributes(&span.attributes),
                    service_name: service_name.clone(),
                });
            }
        }
    }
}

fn attributes(list: &[KeyValue]) -> BTreeMap<String, Attr> {
    list.iter()
        .map(|kv| (kv.key.clone(), attr(kv.value.as_ref())))
        .collect()
}

fn attr(value: Option<&AnyValue>) -> Attr {
    match value.and_then(|v| v.value.as_ref()) {
        Some(any_value::Value::StringValue(text)) => Attr::Str(text.clone()),
        Some(any_value::Value::IntValue(n)) => Attr::Int(*n),
        Some(any_value::Value::DoubleValue(x)) => Attr::Double(*x),
        Some(any_value::Value::BoolValue(b)) => Attr::Bool(*b),
        Some(any_value::Value::ArrayValue(array)) => {
            Attr::Array(array.values.iter().map(|v| attr(Some(v))).collect())
        }
        _ => Attr::Other,
    }
}
