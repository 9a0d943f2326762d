//! Structured output: a final answer that must be JSON valid against a
//! JSON schema ([`OutputSchema`]), as `agent run --output-schema` and
//! [`Engine::run_structured`](crate::Engine::run_structured)
//! ask for it. The model is told the schema with the prompt; an answer
//! that is not valid is sent back with what failed, a bounded number of
//! times (opencode's `retryCount`, default 2), and
//! [`StructuredError::Invalid`] (opencode's `StructuredOutputError`) ends
//! it when none validates.
//!
//! Schemas are checked by this crate for the keywords in
//! [`SUPPORTED_KEYWORDS`] (types, properties, required,
//! additionalProperties, items, enum/const, length, count and number
//! bounds, anyOf/oneOf/allOf/not, local `$ref`); annotations such as
//! `description` are accepted; any other keyword (`pattern`,
//! `uniqueItems` ...) is refused when the schema is loaded rather than
//! silently not checked.
//!
//! ```
//! use agentgate_core::OutputSchema;
//! use serde_json::json;
//!
//! let schema = OutputSchema::new(json!({
//!     "type": "object",
//!     "properties": {"files": {"type": "array", "items": {"type": "string"}}},
//!     "required": ["files"],
//!     "additionalProperties": false
//! })).unwrap();
//! assert_eq!(schema.check("```json\n{\"files\": [\"a.rs\"]}\n```").unwrap(), json!({"files": ["a.rs"]}));
//! let wrong = schema.check(r#"{"files": "a.rs"}"#).unwrap_err();
//! assert_eq!(wrong, "/files: expected an array, found a string");
//! ```

mod schema_check;

use serde_json::Value;

use crate::engine::{TurnError, TurnResult};

pub use schema_check::SUPPORTED_KEYWORDS;

/// How many times an answer that is not valid is sent back by default
/// (opencode's `retryCount` default).
pub const DEFAULT_STRUCTURED_RETRIES: u32 = 2;

/// A JSON schema final answers must satisfy, and how often to retry.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputSchema {
    schema: Value,
    retries: u32,
}

/// The schema cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SchemaError {
    /// It is not a JSON object (or `true`/`false`).
    #[error("an output schema must be a JSON object, found {0}")]
    NotASchema(String),
    /// It uses keywords this SDK does not check.
    #[error(
        "the output schema uses keywords this SDK does not check ({}); it checks {} (annotations such as description are fine)",
        .0.join(", "),
        SUPPORTED_KEYWORDS.join(", ")
    )]
    Unsupported(Vec<String>),
}

/// A structured turn that did not give a valid answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum StructuredError {
    /// A turn ended without an answer (or could not run).
    #[error(transparent)]
    Turn(#[from] TurnError),
    /// The schema cannot be used (see [`SchemaError`]).
    #[error("{0}")]
    Schema(String),
    /// No answer validated, after `retries` retries (opencode's
    /// `StructuredOutputError`).
    #[error("the answer did not match the output schema after {retries} retries: {message}")]
    Invalid {
        /// What the last answer broke.
        message: String,
        /// The retries made.
        retries: u32,
        /// The last answer's text.
        answer: String,
    },
}

/// A validated answer.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct StructuredAnswer {
    /// The answer's JSON, valid against the schema.
    pub value: Value,
    /// The last turn (the one whose answer validated).
    pub turn: TurnResult,
    /// How many answers were sent back before this one.
    pub retries: u32,
}

impl OutputSchema {
    /// A schema, checked to use only the keywords this SDK validates.
    pub fn new(schema: Value) -> Result<Self, SchemaError> {
        match &schema {
            Value::Object(_) | Value::Bool(_) => {}
            other => return Err(SchemaError::NotASchema(kind_of(other))),
        }
        let mut unsupported = Vec::new();
        schema_check::unsupported(&schema, "", &mut unsupported);
        if !unsupported.is_empty() {
            return Err(SchemaError::Unsupported(unsupported));
        }
        Ok(OutputSchema {
            schema,
            retries: DEFAULT_STRUCTURED_RETRIES,
        })
    }

    /// The schema of `T` as `schemars` derives it.
    pub fn of<T: schemars::JsonSchema>() -> Result<Self, SchemaError> {
        Self::new(crate::tool::schema_of::<T>())
    }

    /// Sends an answer that is not valid back at most `retries` times.
    pub fn retries(mut self, retries: u32) -> Self {
        self.retries = retries;
        self
    }

    /// The retry limit.
    pub fn retry_limit(&self) -> u32 {
        self.retries
    }

    /// The schema.
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// What is added to the prompt so the model knows the format.
    pub fn instruction(&self) -> String {
        format!(
            "Your final answer must be a single JSON value, and nothing else (no prose, no code \
             fence), that validates against this JSON schema:\n{}",
            serde_json::to_string_pretty(&self.schema).unwrap_or_else(|_| self.schema.to_string())
        )
    }

    /// The prompt sent back after an answer that broke the schema.
    pub fn correction(&self, problem: &str) -> String {
        format!(
            "Your answer does not match the required JSON schema: {problem}. Answer again with \
             only the corrected JSON value."
        )
    }

    /// The JSON of `answer` (a code fence around it is allowed) if it is
    /// valid, else what is wrong, in words the model can act on.
    pub fn check(&self, answer: &str) -> Result<Value, String> {
        let text = unfence(answer.trim());
        if text.is_empty() {
            return Err("the answer is empty; expected a JSON value".into());
        }
        let value: Value = serde_json::from_str(text)
            .map_err(|e| format!("the answer is not valid JSON ({e})"))?;
        let mut errors = Vec::new();
        schema_check::check(&self.schema, &self.schema, &value, "", &mut errors);
        if errors.is_empty() {
            Ok(value)
        } else {
            Err(errors.join("; "))
        }
    }
}

/// `text` without a surrounding ```` ``` ```` or ```` ```json ```` fence.
fn unfence(text: &str) -> &str {
    let Some(inner) = text.strip_prefix("```") else {
        return text;
    };
    let Some(inner) = inner.strip_suffix("```") else {
        return text;
    };
    let inner = inner.strip_prefix("json").unwrap_or(inner);
    inner.trim()
}

fn kind_of(value: &Value) -> String {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
    .into()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn the_subset_checks_what_it_names() {
        let schema = OutputSchema::new(json!({
            "$defs": {"level": {"enum": ["low", "high"]}},
            "type": "object",
            "properties": {
                "summary": {"type": "string", "minLength": 3, "description": "one line"},
                "risk": {"$ref": "#/$defs/level"},
                "count": {"type": "integer", "minimum": 0, "maximum": 10},
                "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
                "owner": {"anyOf": [{"type": "string"}, {"type": "null"}]}
            },
            "required": ["summary", "risk"],
            "additionalProperties": false
        }))
        .unwrap();
        let ok =
            json!({"summary": "fine", "risk": "low", "count": 3, "tags": ["a"], "owner": null});
        assert_eq!(schema.check(&ok.to_string()).unwrap(), ok);
        let bad = json!({"summary": "no", "risk": "extreme", "count": 11.5, "tags": ["a", "b", 3], "x": 1});
        let problems = schema.check(&bad.to_string()).unwrap_err();
        for expected in [
            "/summary: expected at least 3 characters, found 2",
            "/risk: expected one of [\"low\",\"high\"], found \"extreme\"",
            "/count: expected an integer, found the number 11.5",
            "/tags: expected at most 2 items, found 3",
            "/tags/2: expected a string, found the number 3",
            "the answer: the property \"x\" is not allowed",
        ] {
            assert!(problems.contains(expected), "{expected} not in {problems}");
        }
        let missing = schema.check(r#"{"summary": "yes"}"#).unwrap_err();
        assert_eq!(
            missing,
            "the answer: the required property \"risk\" is missing"
        );
        assert!(
            schema
                .check("Sure! Here it is")
                .unwrap_err()
                .contains("not valid JSON")
        );
    }

    #[test]
    fn keywords_it_does_not_check_are_refused_up_front() {
        let error = OutputSchema::new(json!({"type": "string", "uniqueItems": true})).unwrap_err();
        assert_eq!(
            error,
            SchemaError::Unsupported(vec![": uniqueItems".into()])
        );
        let nested = OutputSchema::new(json!({"properties": {"x": {"uniqueItems": true}}}));
        assert!(
            matches!(nested, Err(SchemaError::Unsupported(k)) if k == ["/properties/x: uniqueItems"])
        );
        assert!(matches!(
            OutputSchema::new(json!([1])),
            Err(SchemaError::NotASchema(_))
        ));
    }

    #[test]
    fn a_pattern_is_checked_anywhere_in_the_string_and_a_bad_one_refused_up_front() {
        let schema = OutputSchema::new(
            json!({"properties": {"id": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]+$"}}}),
        )
        .unwrap();
        assert!(schema.check(r#"{"id": "ABC-42"}"#).is_ok());
        let wrong = schema.check(r#"{"id": "abc-42"}"#).unwrap_err().to_string();
        assert!(wrong.contains("does not match the pattern"), "{wrong}");
        // Unanchored, as JSON Schema says: a match anywhere counts.
        let anywhere = OutputSchema::new(json!({"type": "string", "pattern": "b+"})).unwrap();
        assert!(anywhere.check(r#""abbc""#).is_ok());
        // Look-around is not something this checker can run: refused when
        // loaded, not silently passed.
        let refused =
            OutputSchema::new(json!({"type": "string", "pattern": "a(?=b)"})).unwrap_err();
        assert!(
            matches!(&refused, SchemaError::Unsupported(k) if k.len() == 1 && k[0].starts_with(": pattern \"a(?=b)\": is not a regular expression")),
            "{refused:?}"
        );
    }

    #[test]
    fn derived_schemas_are_usable() {
        #[derive(schemars::JsonSchema, serde::Deserialize)]
        #[allow(dead_code)]
        struct Review {
            approve: bool,
            comments: Vec<String>,
        }
        let schema = OutputSchema::of::<Review>().unwrap();
        assert!(schema.check(r#"{"approve": true, "comments": []}"#).is_ok());
        assert!(
            schema
                .check(r#"{"approve": "yes", "comments": []}"#)
                .is_err()
        );
    }
}
