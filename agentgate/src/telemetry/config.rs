//! Where traces go, read from the standard `OTEL_*` environment variables
//! (the OpenTelemetry SDK environment specification), checked before any
//! exporter is built so a mistake is reported naming its variable.

use std::collections::BTreeMap;

/// Where the OTLP endpoint of every signal is (`http/protobuf`: traces go
/// to `<endpoint>/v1/traces`).
pub const ENDPOINT: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";
/// Where traces go, used as is (wins over [`ENDPOINT`]).
pub const TRACES_ENDPOINT: &str = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT";
/// `http/protobuf` (the default) or `grpc`.
pub const PROTOCOL: &str = "OTEL_EXPORTER_OTLP_PROTOCOL";
/// The protocol of traces (wins over [`PROTOCOL`]).
pub const TRACES_PROTOCOL: &str = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL";
/// Headers sent with every export: `key=value,key2=value2`, values
/// percent-encoded.
pub const HEADERS: &str = "OTEL_EXPORTER_OTLP_HEADERS";
/// Headers of trace exports (each key wins over the same key of [`HEADERS`]).
pub const TRACES_HEADERS: &str = "OTEL_EXPORTER_OTLP_TRACES_HEADERS";
/// The `service.name` of the exported spans (default: the caller's).
pub const SERVICE_NAME: &str = "OTEL_SERVICE_NAME";
/// `true` turns the SDK off whatever else is set.
pub const SDK_DISABLED: &str = "OTEL_SDK_DISABLED";
/// `none` turns trace export off (`otlp`, the default, keeps it).
pub const TRACES_EXPORTER: &str = "OTEL_TRACES_EXPORTER";
/// `true` records prompt and completion contents on the spans (the GenAI
/// conventions' opt-in attributes); off by default. The variable the
/// OpenTelemetry GenAI instrumentations read.
pub const CAPTURE_CONTENT: &str = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT";

/// The OTLP wire protocol of the exporter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// Protobuf over HTTP (`http/protobuf`), the default.
    HttpProtobuf,
    /// gRPC (`grpc`).
    Grpc,
}

/// A telemetry setting that cannot be used; each names its variable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TelemetryError {
    /// The protocol is not one the exporter speaks.
    #[error("{var}={value:?} is not supported: use `http/protobuf` (the default) or `grpc`")]
    Protocol {
        /// The variable that named it.
        var: &'static str,
        /// What it said.
        value: String,
    },
    /// The endpoint is not an `http://` or `https://` URL.
    #[error("{var}={value:?} is not an http:// or https:// URL")]
    Endpoint {
        /// The variable that named it.
        var: &'static str,
        /// What it said.
        value: String,
    },
    /// A header is not `key=value`, or its value's percent-encoding is bad.
    #[error("{var}: {entry:?} is not a `key=value` header with a percent-encoded value")]
    Header {
        /// The variable that held it.
        var: &'static str,
        /// The entry.
        entry: String,
    },
    /// The exporter could not be built from the settings.
    #[error("cannot set up OTLP export to {endpoint} ({var}): {message}")]
    Exporter {
        /// The variable that named the endpoint.
        var: &'static str,
        /// The endpoint.
        endpoint: String,
        /// Why.
        message: String,
    },
    /// Another `tracing` subscriber was installed first.
    #[error(
        "cannot export traces ({var} is set): a global tracing subscriber is already installed; add the layer of `telemetry::layer` to it instead"
    )]
    SubscriberSet {
        /// The variable that asked for export.
        var: &'static str,
    },
}

/// Where and how to export traces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OtlpConfig {
    /// The URL spans are sent to (for `http/protobuf`, with `/v1/traces`).
    pub endpoint: String,
    /// The variable the endpoint came from (for error messages).
    pub endpoint_var: &'static str,
    /// The wire protocol.
    pub protocol: Protocol,
    /// Headers sent with every export (authentication, tenancy).
    pub headers: BTreeMap<String, String>,
    /// The `service.name` resource attribute.
    pub service_name: String,
    /// Record prompt and completion contents ([`CAPTURE_CONTENT`]).
    pub capture_content: bool,
}

impl OtlpConfig {
    /// The configuration the process environment describes, `None` when
    /// no endpoint is set (or export is turned off): then nothing is to
    /// be set up. `service_name` is used when [`SERVICE_NAME`] is unset.
    pub fn from_env(service_name: &str) -> Result<Option<Self>, TelemetryError> {
        Self::from_lookup(service_name, |var| std::env::var(var).ok())
    }

    /// [`from_env`](Self::from_env) reading the variables through `var`.
    pub fn from_lookup(
        service_name: &str,
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Self>, TelemetryError> {
        let set = |name: &str| var(name).filter(|value| !value.trim().is_empty());
        let off = set(SDK_DISABLED).is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
            || set(TRACES_EXPORTER).is_some_and(|v| v.trim().eq_ignore_ascii_case("none"));
        if off {
            return Ok(None);
        }
        let protocol = match (set(TRACES_PROTOCOL), set(PROTOCOL)) {
            (Some(value), _) => protocol(TRACES_PROTOCOL, &value)?,
            (None, Some(value)) => protocol(PROTOCOL, &value)?,
            (None, None) => Protocol::HttpProtobuf,
        };
        let (endpoint_var, endpoint) = match (set(TRACES_ENDPOINT), set(ENDPOINT)) {
            (Some(url), _) => (TRACES_ENDPOINT, checked_url(TRACES_ENDPOINT, url)?),
            (None, Some(base)) => {
                let base = checked_url(ENDPOINT, base)?;
                (ENDPOINT, signal_url(&base, protocol))
            }
            (None, None) => return Ok(None),
        };
        let mut headers = BTreeMap::new();
        for name in [HEADERS, TRACES_HEADERS] {
            if let Some(text) = set(name) {
                headers.extend(parse_headers(name, &text)?);
            }
        }
        Ok(Some(OtlpConfig {
            endpoint,
            endpoint_var,
            protocol,
            headers,
            service_name: set(SERVICE_NAME).unwrap_or_else(|| service_name.to_string()),
            capture_content: capture_content_in(&set),
        }))
    }
}

/// Whether the environment opts in to recording prompt and completion
/// contents on the spans ([`CAPTURE_CONTENT`]` = true`).
pub fn capture_content_from_env() -> bool {
    capture_content_in(&|name: &str| std::env::var(name).ok())
}

fn capture_content_in(var: &impl Fn(&str) -> Option<String>) -> bool {
    var(CAPTURE_CONTENT).is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
}

/// The protocol `value` of variable `var` names.
fn protocol(var: &'static str, value: &str) -> Result<Protocol, TelemetryError> {
    match value.trim() {
        "http/protobuf" => Ok(Protocol::HttpProtobuf),
        "grpc" => Ok(Protocol::Grpc),
        other => Err(TelemetryError::Protocol {
            var,
            value: other.to_string(),
        }),
    }
}

/// `url`, trimmed, when it is an `http://` or `https://` URL with a host.
fn checked_url(var: &'static str, url: String) -> Result<String, TelemetryError> {
    let url = url.trim().to_string();
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"));
    match rest {
        Some(rest) if !rest.is_empty() && !rest.starts_with('/') => Ok(url),
        _ => Err(TelemetryError::Endpoint { var, value: url }),
    }
}

/// The traces URL under the base endpoint `base`: `<base>/v1/traces` for
/// HTTP, the base itself for gRPC.
fn signal_url(base: &str, protocol: Protocol) -> String {
    match protocol {
        Protocol::HttpProtobuf => format!("{}/v1/traces", base.trim_end_matches('/')),
        Protocol::Grpc => base.to_string(),
    }
}

/// The headers of `text` (`k=v,k2=v2`, values percent-decoded).
fn parse_headers(var: &'static str, text: &str) -> Result<Vec<(String, String)>, TelemetryError> {
    let bad = |entry: &str| TelemetryError::Header {
        var,
        entry: entry.to_string(),
    };
    text.split(',')
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
        .map(|entry| {
            let (key, value) = entry.split_once('=').ok_or_else(|| bad(entry))?;
            let key = key.trim();
            let value = percent_decode(value.trim()).ok_or_else(|| bad(entry))?;
            if key.is_empty() {
                return Err(bad(entry));
            }
            Ok((key.to_string(), value))
        })
        .collect()
}

/// `text` with its `%XX` escapes decoded; `None` when one is malformed or
/// the result is not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn config(vars: &[(&str, &str)]) -> Result<Option<OtlpConfig>, TelemetryError> {
        OtlpConfig::from_lookup("agent", |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        })
    }

    #[test]
    fn nothing_set_means_nothing_to_set_up() {
        assert_eq!(config(&[]), Ok(None));
        assert_eq!(config(&[(SERVICE_NAME, "x"), (PROTOCOL, "grpc")]), Ok(None));
        assert_eq!(config(&[(ENDPOINT, "")]), Ok(None));
    }

    #[test]
    fn the_base_endpoint_gets_the_traces_path_over_http_only() {
        let http = config(&[(ENDPOINT, "http://127.0.0.1:4318/")])
            .unwrap()
            .unwrap();
        assert_eq!(http.endpoint, "http://127.0.0.1:4318/v1/traces");
        assert_eq!(http.protocol, Protocol::HttpProtobuf);
        assert_eq!(http.service_name, "agent");
        let grpc = config(&[(ENDPOINT, "http://h:4317"), (PROTOCOL, "grpc")])
            .unwrap()
            .unwrap();
        assert_eq!(
            (grpc.endpoint.as_str(), grpc.protocol),
            ("http://h:4317", Protocol::Grpc)
        );
    }

    #[test]
    fn the_traces_variables_win() {
        let found = config(&[
            (ENDPOINT, "http://a:1"),
            (TRACES_ENDPOINT, "https://b/custom"),
            (PROTOCOL, "grpc"),
            (TRACES_PROTOCOL, "http/protobuf"),
            (HEADERS, "k=1,x=a%20b"),
            (TRACES_HEADERS, "k=2"),
            (SERVICE_NAME, "svc"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(found.endpoint, "https://b/custom");
        assert_eq!(found.endpoint_var, TRACES_ENDPOINT);
        assert_eq!(found.protocol, Protocol::HttpProtobuf);
        assert_eq!(found.headers["k"], "2");
        assert_eq!(found.headers["x"], "a b");
        assert_eq!(found.service_name, "svc");
    }

    #[test]
    fn mistakes_name_their_variable() {
        let protocol = config(&[(ENDPOINT, "http://a"), (PROTOCOL, "http/json")]).unwrap_err();
        assert!(protocol.to_string().contains(PROTOCOL), "{protocol}");
        let url = config(&[(ENDPOINT, "localhost:4318")]).unwrap_err();
        assert!(url.to_string().contains(ENDPOINT), "{url}");
        let header = config(&[(ENDPOINT, "http://a"), (HEADERS, "novalue")]).unwrap_err();
        assert!(header.to_string().contains(HEADERS), "{header}");
        let escape = config(&[(ENDPOINT, "http://a"), (HEADERS, "k=%zz")]).unwrap_err();
        assert!(matches!(escape, TelemetryError::Header { .. }));
    }

    #[test]
    fn export_can_be_turned_off() {
        assert_eq!(
            config(&[(ENDPOINT, "http://a"), (SDK_DISABLED, "true")]),
            Ok(None)
        );
        assert_eq!(
            config(&[(ENDPOINT, "http://a"), (TRACES_EXPORTER, "none")]),
            Ok(None)
        );
    }

    #[test]
    fn contents_are_opt_in() {
        let off = config(&[(ENDPOINT, "http://a")]).unwrap().unwrap();
        assert!(!off.capture_content);
        let on = config(&[(ENDPOINT, "http://a"), (CAPTURE_CONTENT, "true")])
            .unwrap()
            .unwrap();
        assert!(on.capture_content);
    }
}
