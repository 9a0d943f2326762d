//! What `agent run` hands to scripts: `--output-schema` (the answer
//! checked against a JSON schema, the validated JSON on stdout) and
//! `-o/--output-last-message` (the final message in a file), as codex's
//! `exec` has them.

use std::path::Path;

use agentgate_core::OutputSchema;

use crate::render::Format;

/// The schema in `path`, or why it cannot be used.
pub fn load_schema(path: &Path) -> Result<OutputSchema, String> {
    let shown = path.display();
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("--output-schema {shown}: cannot read it: {e}"))?;
    let value: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| format!("--output-schema {shown}: not valid JSON: {e}"))?;
    OutputSchema::new(value).map_err(|e| format!("--output-schema {shown}: {e}"))
}

/// What to do after an answer was checked.
pub enum Checked {
    /// It matched; the JSON was printed.
    Valid,
    /// It did not, and no retry is left: the message to end with.
    Invalid(String),
    /// It did not: what to send back.
    Retry(String),
}

/// Checks `answer` against `schema` after `retries` retries; prints the
/// validated JSON on stdout (in JSON lines, as a `structured.output`
/// event).
pub fn check_answer(schema: &OutputSchema, answer: &str, retries: u32, format: Format) -> Checked {
    match schema.check(answer) {
        Ok(value) => {
            // The model's JSON: its strings may hold any character.
            let line = match format {
                Format::Text => value.to_string(),
                Format::Json => {
                    serde_json::json!({"type": "structured.output", "value": value}).to_string()
                }
            };
            println!("{}", crate::terminal_text::json_safe(&line));
            Checked::Valid
        }
        Err(problem) if retries >= schema.retry_limit() => Checked::Invalid(format!(
            "the answer did not match the output schema after {retries} retries: {problem}"
        )),
        Err(problem) => Checked::Retry(problem),
    }
}

/// Writes the final message to `path` (`-o`): the answer's text, or
/// nothing (with a note) when the turn ended without one.
pub fn write_last_message(path: &Path, answer: Option<&str>) -> Result<(), String> {
    match answer {
        Some(text) => std::fs::write(path, text)
            .map_err(|e| format!("--output-last-message {}: {e}", path.display())),
        None => {
            eprintln!(
                "agent: no final message to write to {} (the turn ended without an answer)",
                crate::terminal_text::Untrusted::new(path.display())
            );
            Ok(())
        }
    }
}
