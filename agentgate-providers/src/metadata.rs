//! Building and reading the [`ProviderMetadata`] that carries signatures,
//! item ids and encrypted reasoning from one request to the next.

use agentgate_core::ProviderMetadata;
use serde_json::{Map, Value};

/// `{provider: {key: value, ...}}` from string pairs.
pub(crate) fn provider_metadata(provider: &str, pairs: &[(&str, &str)]) -> ProviderMetadata {
    let inner: Map<String, Value> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
        .collect();
    let mut outer = Map::new();
    outer.insert(provider.to_string(), Value::Object(inner));
    outer
}

/// The string at `metadata[provider][key]`, when present.
pub(crate) fn metadata_str<'a>(
    metadata: Option<&'a ProviderMetadata>,
    provider: &str,
    key: &str,
) -> Option<&'a str> {
    metadata?.get(provider)?.get(key)?.as_str()
}
