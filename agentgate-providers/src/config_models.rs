//! Models from the configuration's `provider` entries: a `provider.<id>`
//! entry's `baseURL`, `apiKey` and `headers` override what the environment
//! says for a known provider, its `timeout`, `headerTimeout` and
//! `chunkTimeout` replace the default [`Timeouts`], and an entry for an
//! unknown id with a `baseURL` is an OpenAI-compatible server (a local one,
//! a gateway).

use std::sync::Arc;

use agentgate_core::{
    LanguageModel, ModelInfo, ModelRef, ModelResolver, ProviderConfig, ProviderModel,
};
use indexmap::IndexMap;

use crate::ProviderError;
use crate::anthropic::Anthropic;
use crate::gemini::Gemini;
use crate::openai_chat::OpenAiCompatible;
use crate::providers::{Api, find_provider};
use crate::registry::model_for_ref;
use crate::responses::OpenAiResponses;
use crate::timeouts::Timeouts;

/// Builds the client for `name`, applying the configuration's entry for
/// its provider when there is one, else as [`crate::model_from_env`].
pub fn model_from_config(
    name: &ModelRef,
    providers: &IndexMap<String, ProviderConfig>,
) -> Result<Arc<dyn LanguageModel>, ProviderError> {
    let Some(entry) = providers.get(&name.provider_id) else {
        return model_for_ref(name).map_err(|error| match error {
            // The configuration's own providers are choices too.
            ProviderError::UnknownProvider { provider, known } if !providers.is_empty() => {
                let configured: Vec<&str> = providers.keys().map(String::as_str).collect();
                ProviderError::UnknownProvider {
                    provider,
                    known: format!("{} (configured), {known}", configured.join(", ")),
                }
            }
            other => other,
        });
    };
    check_listed(name, entry)?;
    let model = name.model_id.clone();
    // `provider.<id>.models.<model>.limit`: what compaction and the output
    // budget go by (a local model's window is the config's to say).
    let limits = entry.models.get(&name.model_id);
    let timeouts = Timeouts::from_options(
        &entry.options,
        &format!("provider.{}.options", name.provider_id),
    )
    .map_err(|message| ProviderError::InvalidOption { message })?;
    let source = key_source(&name.provider_id, entry);
    let Some(known) = find_provider(&name.provider_id) else {
        return custom_provider(name, entry, timeouts, source);
    };
    let key = match &entry.api_key {
        Some(key) => Some(key.clone()),
        None => known.api_key()?,
    };
    let base_url = entry.base_url.clone().unwrap_or_else(|| known.base_url());
    macro_rules! configured {
        ($client:expr) => {{
            let mut client = $client.with_base_url(&base_url).with_timeouts(timeouts);
            let info = with_limits(client.info().clone(), limits);
            client = client.with_info(info);
            if let Some(source) = &source {
                client = client.with_key_source(source);
            }
            for (header, value) in &entry.headers {
                client = client.with_header(header, value);
            }
            Arc::new(client) as Arc<dyn LanguageModel>
        }};
    }
    let key_or_empty = key.clone().unwrap_or_default();
    Ok(match known.api {
        Api::AnthropicMessages => configured!(Anthropic::new(model, key_or_empty)),
        Api::OpenAiResponses => configured!(OpenAiResponses::new(model, key_or_empty)),
        Api::Gemini => configured!(Gemini::new(model, key_or_empty)),
        _ => {
            let client = OpenAiCompatible::new(known.id, model, &base_url);
            configured!(match key {
                Some(key) => client.with_api_key(key),
                None => client,
            })
        }
    })
}

/// An error when `entry` lists its models, `name`'s is not among them, and
/// the provider has no catalogue the model could come from instead (an
/// unknown id, or a local server whose key is optional).
fn check_listed(name: &ModelRef, entry: &ProviderConfig) -> Result<(), ProviderError> {
    let catalogued = find_provider(&name.provider_id).is_some_and(|known| known.key_required);
    if catalogued || entry.models.is_empty() || entry.models.contains_key(&name.model_id) {
        return Ok(());
    }
    let listed: Vec<&str> = entry.models.keys().map(String::as_str).collect();
    Err(ProviderError::UnlistedModel {
        provider: name.provider_id.clone(),
        model: name.model_id.clone(),
        listed: format!("listed: {}", listed.join(", ")),
    })
}

/// A provider id the crate does not know: an OpenAI-compatible server at
/// the entry's `baseURL`, which it must give.
fn custom_provider(
    name: &ModelRef,
    entry: &ProviderConfig,
    timeouts: Timeouts,
    source: Option<String>,
) -> Result<Arc<dyn LanguageModel>, ProviderError> {
    let Some(base_url) = &entry.base_url else {
        return Err(ProviderError::UnknownProvider {
            provider: name.provider_id.clone(),
            known: format!(
                "{} (or give provider.{}.options.baseURL in the config)",
                crate::providers::provider_list(),
                name.provider_id
            ),
        });
    };
    let mut client = OpenAiCompatible::new(&name.provider_id, name.model_id.clone(), base_url)
        .with_timeouts(timeouts);
    let info = with_limits(client.info().clone(), entry.models.get(&name.model_id));
    client = client.with_info(info);
    if let Some(key) = &entry.api_key {
        client = client.with_api_key(key);
    }
    if let Some(source) = source {
        client = client.with_key_source(source);
    }
    for (header, value) in &entry.headers {
        client = client.with_header(header, value);
    }
    Ok(Arc::new(client))
}

/// Where the key of `id`'s client comes from: the entry's `apiKey`
/// (naming the file that set it), else the provider's environment
/// variable when one is set.
fn key_source(id: &str, entry: &ProviderConfig) -> Option<String> {
    if entry.api_key.is_some() {
        return Some(crate::key_source::from_config(
            id,
            entry.api_key_file.as_deref(),
        ));
    }
    find_provider(id).and_then(|known| known.api_key_source())
}

/// `info` with the limits, prices and image input a `provider.<id>.models.<model>`
/// entry sets.
fn with_limits(mut info: ModelInfo, model: Option<&ProviderModel>) -> ModelInfo {
    if let Some(model) = model {
        if let Some(context) = model.context_limit {
            info.limits.context = context;
        }
        if let Some(output) = model.output_limit {
            info.limits.output = output;
        }
        if model.cost.is_some() {
            info.cost = model.cost;
        }
        if let Some(images) = model.images {
            info.capabilities.images = images;
        }
    }
    info
}

/// A [`ModelResolver`] over the configuration's `provider` entries, falling
/// back to the environment ([`model_from_config`]). Names it cannot build
/// resolve to `None`.
#[derive(Debug, Clone, Default)]
pub struct ConfigModelResolver {
    providers: IndexMap<String, ProviderConfig>,
}

impl ConfigModelResolver {
    /// A resolver over these entries (`Config::providers`).
    pub fn new(providers: IndexMap<String, ProviderConfig>) -> Self {
        ConfigModelResolver { providers }
    }
}

impl ModelResolver for ConfigModelResolver {
    fn resolve(&self, model: &ModelRef) -> Option<Arc<dyn LanguageModel>> {
        model_from_config(model, &self.providers).ok()
    }

    fn resolve_or_explain(&self, model: &ModelRef) -> Result<Arc<dyn LanguageModel>, String> {
        model_from_config(model, &self.providers).map_err(|error| error.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn providers(json: &str) -> IndexMap<String, ProviderConfig> {
        let value: serde_json::Value = serde_json::from_str(json).unwrap();
        value
            .as_object()
            .unwrap()
            .iter()
            .map(|(id, v)| (id.clone(), ProviderConfig::from_value(v, id).unwrap()))
            .collect()
    }

    #[test]
    fn an_unknown_provider_with_a_base_url_is_openai_compatible() {
        let entries = providers(r#"{"local": {"options": {"baseURL": "http://127.0.0.1:9/v1"}}}"#);
        let model = model_from_config(&ModelRef::parse("local/qwen3").unwrap(), &entries).unwrap();
        assert_eq!(model.info().full_id(), "local/qwen3");
        let Err(unknown) = model_from_config(&ModelRef::parse("other/x").unwrap(), &entries) else {
            panic!("other/x resolved");
        };
        // The configured providers are named first, then the built-in ones.
        let message = unknown.to_string();
        assert!(
            message.contains("known providers are local (configured), anthropic"),
            "{message}"
        );
    }

    #[test]
    fn a_models_limit_in_the_config_is_the_models_limit() {
        let entries = providers(
            r#"{"local": {"options": {"baseURL": "http://127.0.0.1:9/v1"},
                          "models": {"qwen3": {"limit": {"context": 8192, "output": 1024}}}},
                "anthropic": {"options": {"apiKey": "k"},
                              "models": {"claude-sonnet-4-5": {"limit": {"context": 50000}}}}}"#,
        );
        let local = model_from_config(&ModelRef::parse("local/qwen3").unwrap(), &entries).unwrap();
        assert_eq!(local.info().limits.context, 8192);
        assert_eq!(local.info().limits.output, 1024);
        let claude = model_from_config(
            &ModelRef::parse("anthropic/claude-sonnet-4-5").unwrap(),
            &entries,
        )
        .unwrap();
        assert_eq!(claude.info().limits.context, 50_000);
        assert_eq!(
            claude.info().limits.output,
            64_000,
            "the published output limit stays"
        );
        let unlisted = providers(r#"{"local": {"options": {"baseURL": "http://127.0.0.1:9/v1"}}}"#);
        let other = model_from_config(&ModelRef::parse("local/other").unwrap(), &unlisted).unwrap();
        assert_eq!(other.info().limits.context, 0, "no entry: not declared");
    }

    #[test]
    fn a_model_missing_from_a_local_providers_list_is_an_error() {
        let entries = providers(
            r#"{"ollama": {"models": {"llama3": {}}},
                "anthropic": {"options": {"apiKey": "k"}, "models": {"claude-sonnet-4-5": {}}}}"#,
        );
        let name = ModelRef::parse("ollama/llama9").unwrap();
        let error = model_from_config(&name, &entries)
            .err()
            .unwrap()
            .to_string();
        assert!(
            error.contains(
                "not listed under `provider.ollama.models` (listed: llama3): add \"llama9\" there"
            ),
            "{error}"
        );
        assert!(model_from_config(&ModelRef::parse("ollama/llama3").unwrap(), &entries).is_ok());
        // A provider with a catalogue of its own: the list adds, it does not restrict.
        let opus = ModelRef::parse("anthropic/claude-opus-4-5").unwrap();
        assert!(model_from_config(&opus, &entries).is_ok());
    }

    #[test]
    fn a_configured_key_stands_in_for_the_environment() {
        let entries = providers(
            r#"{"anthropic": {"options": {"apiKey": "k", "baseURL": "http://127.0.0.1:9"}}}"#,
        );
        let name = ModelRef::parse("anthropic/claude-sonnet-4-5").unwrap();
        assert!(model_from_config(&name, &entries).is_ok());
        assert!(ConfigModelResolver::new(entries).resolve(&name).is_some());
    }

    #[test]
    fn timeouts_come_from_the_options() {
        let entries = providers(
            r#"{"local": {"options": {"baseURL": "http://127.0.0.1:9/v1", "chunkTimeout": 5000, "timeout": false}}}"#,
        );
        let name = ModelRef::parse("local/qwen3").unwrap();
        assert!(model_from_config(&name, &entries).is_ok());
        let wrong =
            providers(r#"{"anthropic": {"options": {"apiKey": "k", "chunkTimeout": "5s"}}}"#);
        let name = ModelRef::parse("anthropic/claude-sonnet-4-5").unwrap();
        let error = model_from_config(&name, &wrong).err().unwrap().to_string();
        assert!(
            error.contains(
                "provider.anthropic.options.chunkTimeout: expected a number of milliseconds"
            ),
            "{error}"
        );
    }
}
