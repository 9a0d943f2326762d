//! [`ProviderConfig`]: a `provider.<id>` entry of the configuration — base
//! URL, API key, headers, other options and per-model limits.

use agentgate_permission::describe_value;
use indexmap::IndexMap;
use serde_json::{Map, Value};

use crate::model::ModelCost;

/// One `provider.<id>` entry.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct ProviderConfig {
    /// `options.baseURL`.
    pub base_url: Option<String>,
    /// `options.apiKey`.
    pub api_key: Option<String>,
    /// The config file that set `options.apiKey` (the last layer that
    /// did), named when the provider refuses the key; `None` when no file
    /// set it or the entry was not loaded from files.
    pub api_key_file: Option<String>,
    /// `options.headers`.
    pub headers: IndexMap<String, String>,
    /// The other `options`, as written.
    pub options: Map<String, Value>,
    /// `models.<id>`: per-model settings.
    pub models: IndexMap<String, ProviderModel>,
}

/// A `provider.<id>.models.<model>` entry.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct ProviderModel {
    /// `name`, for display.
    pub name: Option<String>,
    /// `limit.context`.
    pub context_limit: Option<u64>,
    /// `limit.output`.
    pub output_limit: Option<u64>,
    /// `options`, as written.
    pub options: Map<String, Value>,
    /// `cost`: prices per million tokens.
    pub cost: Option<ModelCost>,
    /// `modalities.input` (as opencode writes it: `["text", "image"]`):
    /// whether the model accepts images; `None` when not written.
    pub images: Option<bool>,
}

type FieldError = (String, String);

fn expected(path: &str, form: &str, found: &Value) -> FieldError {
    (
        path.to_string(),
        format!("expected {form}, found {}", describe_value(found)),
    )
}

impl ProviderConfig {
    /// Reads an entry; errors are `(key path, message)`.
    pub fn from_value(value: &Value, path: &str) -> Result<Self, FieldError> {
        let Value::Object(entry) = value else {
            return Err(expected(path, "an object", value));
        };
        let mut config = ProviderConfig::default();
        match entry.get("options") {
            None | Some(Value::Null) => {}
            Some(Value::Object(options)) => {
                for (key, value) in options {
                    let at = format!("{path}.options.{key}");
                    match key.as_str() {
                        "baseURL" => config.base_url = Some(base_url(value, &at)?),
                        "apiKey" => config.api_key = Some(string(value, &at)?),
                        "headers" => {
                            let Value::Object(headers) = value else {
                                return Err(expected(&at, "an object of header → value", value));
                            };
                            for (name, v) in headers {
                                config
                                    .headers
                                    .insert(name.clone(), string(v, &format!("{at}.{name}"))?);
                            }
                        }
                        _ => {
                            config.options.insert(key.clone(), value.clone());
                        }
                    }
                }
            }
            Some(other) => return Err(expected(&format!("{path}.options"), "an object", other)),
        }
        match entry.get("models") {
            None | Some(Value::Null) => {}
            Some(Value::Object(models)) => {
                for (id, model) in models {
                    let at = format!("{path}.models.{id}");
                    let Value::Object(model) = model else {
                        return Err(expected(&at, "an object", model));
                    };
                    let mut parsed = ProviderModel::default();
                    if let Some(name) = model.get("name") {
                        parsed.name = Some(string(name, &format!("{at}.name"))?);
                    }
                    if let Some(limit) = model.get("limit") {
                        let Value::Object(limit) = limit else {
                            return Err(expected(&format!("{at}.limit"), "an object", limit));
                        };
                        parsed.context_limit =
                            count(limit.get("context"), &format!("{at}.limit.context"))?;
                        parsed.output_limit =
                            count(limit.get("output"), &format!("{at}.limit.output"))?;
                    }
                    if let Some(cost) = model.get("cost") {
                        parsed.cost = Some(model_cost(cost, &format!("{at}.cost"))?);
                    }
                    if let Some(modalities) = model.get("modalities") {
                        parsed.images =
                            Some(accepts_images(modalities, &format!("{at}.modalities"))?);
                    }
                    if let Some(Value::Object(options)) = model.get("options") {
                        parsed.options = options.clone();
                    }
                    config.models.insert(id.clone(), parsed);
                }
            }
            Some(other) => return Err(expected(&format!("{path}.models"), "an object", other)),
        }
        Ok(config)
    }
}

fn string(value: &Value, path: &str) -> Result<String, FieldError> {
    value
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| expected(path, "a string", value))
}

/// A `baseURL`: a string starting with `http://` or `https://` (a URL
/// without its scheme, `localhost:11434/v1`, would otherwise fail only at
/// the first request, without naming the key).
fn base_url(value: &Value, path: &str) -> Result<String, FieldError> {
    let url = string(value, path)?;
    let lower = url.to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        return Ok(url);
    }
    let bare = url.split_once("://").map_or(url.as_str(), |(_, rest)| rest);
    Err((
        path.to_string(),
        format!(
            "expected an http:// or https:// URL, found {url:?}; write \"http://{bare}\" \
             (or https:// for a TLS server)"
        ),
    ))
}

/// A `cost` entry: an object of non-negative prices (per million tokens);
/// a missing price is 0.
fn model_cost(value: &Value, path: &str) -> Result<ModelCost, FieldError> {
    let Value::Object(cost) = value else {
        return Err(expected(path, "an object", value));
    };
    let price = |key: &str| -> Result<Option<f64>, FieldError> {
        match cost.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => match v.as_f64() {
                Some(n) if n >= 0.0 && n.is_finite() => Ok(Some(n)),
                _ => Err(expected(
                    &format!("{path}.{key}"),
                    "a price in dollars per million tokens (a number, 0 or more)",
                    v,
                )),
            },
        }
    };
    let input = price("input")?.unwrap_or(0.0);
    let mut parsed = ModelCost::new(input, price("output")?.unwrap_or(0.0));
    if let Some(read) = price("cache_read")? {
        parsed.cache_read = read;
    }
    if let Some(write) = price("cache_write")? {
        parsed.cache_write = write;
    }
    Ok(parsed)
}

/// Whether a `modalities` entry's `input` list names `image`.
fn accepts_images(value: &Value, path: &str) -> Result<bool, FieldError> {
    let form = r#"an object such as {"input": ["text", "image"]}"#;
    let Value::Object(modalities) = value else {
        return Err(expected(path, form, value));
    };
    match modalities.get("input") {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Array(inputs)) => {
            let mut images = false;
            for input in inputs {
                images |= string(input, &format!("{path}.input"))? == "image";
            }
            Ok(images)
        }
        Some(other) => Err(expected(
            &format!("{path}.input"),
            r#"a list such as ["text", "image"]"#,
            other,
        )),
    }
}

fn count(value: Option<&Value>, path: &str) -> Result<Option<u64>, FieldError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .map(Some)
            .ok_or_else(|| expected(path, "a whole number of tokens", v)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_models_cost_is_read_and_a_bad_price_names_its_key() {
        let entry =
            json!({"models": {"m": {"cost": {"input": 3, "output": 15.5, "cache_read": 0.3}}}});
        let config = ProviderConfig::from_value(&entry, "provider.p").unwrap();
        let cost = config.models["m"].cost.unwrap();
        assert_eq!(
            (cost.input, cost.output, cost.cache_read, cost.cache_write),
            (3.0, 15.5, 0.3, 0.0)
        );

        let bad = json!({"models": {"m": {"cost": {"input": -1}}}});
        let (path, message) = ProviderConfig::from_value(&bad, "provider.p").unwrap_err();
        assert_eq!(path, "provider.p.models.m.cost.input");
        assert!(
            message.contains("a price in dollars per million tokens"),
            "{message}"
        );
        let bad = json!({"models": {"m": {"cost": "cheap"}}});
        assert_eq!(
            ProviderConfig::from_value(&bad, "provider.p")
                .unwrap_err()
                .0,
            "provider.p.models.m.cost"
        );
    }

    #[test]
    fn modalities_say_whether_a_model_accepts_images() {
        let entry = json!({"models": {
            "vision": {"modalities": {"input": ["text", "image"], "output": ["text"]}},
            "text": {"modalities": {"input": ["text"]}},
            "unsaid": {}
        }});
        let config = ProviderConfig::from_value(&entry, "provider.p").unwrap();
        assert_eq!(config.models["vision"].images, Some(true));
        assert_eq!(config.models["text"].images, Some(false));
        assert_eq!(config.models["unsaid"].images, None);
        let bad = json!({"models": {"m": {"modalities": {"input": "image"}}}});
        assert_eq!(
            ProviderConfig::from_value(&bad, "provider.p")
                .unwrap_err()
                .0,
            "provider.p.models.m.modalities.input"
        );
    }

    #[test]
    fn a_base_url_without_a_scheme_is_an_error_naming_the_fix() {
        let entry = serde_json::json!({"options": {"baseURL": "localhost:11434/v1"}});
        let (path, message) = ProviderConfig::from_value(&entry, "provider.ollama").unwrap_err();
        assert_eq!(path, "provider.ollama.options.baseURL");
        assert!(
            message.contains("\"http://localhost:11434/v1\""),
            "{message}"
        );
        let entry = serde_json::json!({"options": {"baseURL": "HTTPS://host/v1"}});
        assert!(ProviderConfig::from_value(&entry, "provider.x").is_ok());
    }
}
