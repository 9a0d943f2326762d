//! [`ProviderConfig`]: a `provider.<id>` entry of the configuration — base
//! URL, API key, headers, other options and per-model limits.

use agentgate_permission::describe_value;
use indexmap::IndexMap;
use serde_json::{Map, Value};

/// One `provider.<id>` entry.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct ProviderConfig {
    /// `options.baseURL`.
    pub base_url: Option<String>,
    /// `options.apiKey`.
    pub api_key: Option<String>,
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
                        "baseURL" => config.base_url = Some(string(value, &at)?),
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

fn count(value: Option<&Value>, path: &str) -> Result<Option<u64>, FieldError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .map(Some)
            .ok_or_else(|| expected(path, "a whole number of tokens", v)),
    }
}
