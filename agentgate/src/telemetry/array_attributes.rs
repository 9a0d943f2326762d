//! The GenAI conventions type some attributes as string arrays
//! (`gen_ai.response.finish_reasons`), which a `tracing` field cannot
//! hold: the engine records them as JSON array text, and this exporter
//! wrapper turns that text back into an OpenTelemetry string array before
//! the spans leave.

use std::time::Duration;

use opentelemetry::{Array, KeyValue, StringValue, Value};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SpanData, SpanExporter};

/// The attributes the engine records as JSON array text.
const ARRAY_ATTRIBUTES: &[&str] = &["gen_ai.response.finish_reasons"];

/// `E`, exporting [`ARRAY_ATTRIBUTES`] as string arrays.
#[derive(Debug)]
pub(super) struct ArrayAttributes<E>(pub(super) E);

impl<E: SpanExporter> SpanExporter for ArrayAttributes<E> {
    fn export(
        &self,
        mut batch: Vec<SpanData>,
    ) -> impl std::future::Future<Output = OTelSdkResult> + Send {
        for span in &mut batch {
            as_arrays(&mut span.attributes);
        }
        self.0.export(batch)
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.0.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.0.force_flush()
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.0.set_resource(resource);
    }
}

/// Rewrites each of [`ARRAY_ATTRIBUTES`] holding a JSON array of strings
/// as a string array; anything else is left as it is.
fn as_arrays(attributes: &mut [KeyValue]) {
    for attribute in attributes {
        if !ARRAY_ATTRIBUTES.contains(&attribute.key.as_str()) {
            continue;
        }
        let Value::String(text) = &attribute.value else {
            continue;
        };
        if let Ok(items) = serde_json::from_str::<Vec<String>>(text.as_str()) {
            let items = items.into_iter().map(StringValue::from).collect();
            attribute.value = Value::Array(Array::String(items));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finish_reasons_become_a_string_array_and_nothing_else_changes() {
        let mut attributes = vec![
            KeyValue::new("gen_ai.response.finish_reasons", r#"["stop"]"#),
            KeyValue::new("gen_ai.input.messages", r#"["stop"]"#),
            KeyValue::new("gen_ai.response.finish_reasons", "not json"),
        ];
        as_arrays(&mut attributes);
        assert_eq!(
            attributes[0].value,
            Value::Array(Array::String(vec![StringValue::from("stop")]))
        );
        assert_eq!(attributes[1].value, Value::from(r#"["stop"]"#));
        assert_eq!(attributes[2].value, Value::from("not json"));
    }
}
