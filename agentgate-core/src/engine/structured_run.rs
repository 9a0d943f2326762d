//! [`Engine::run_structured`]: a prompt whose final answer must validate
//! against an [`OutputSchema`], sent back with what failed until it does
//! or the retries run out (`crate::structured`).

use super::facade::Engine;
use crate::structured::{OutputSchema, StructuredAnswer, StructuredError};

impl Engine {
    /// Runs `prompt` (with the schema's instruction appended) and checks
    /// the answer against `schema`; an answer that breaks it is sent back
    /// to the model with what failed, at most
    /// [`OutputSchema::retry_limit`] times. Each try is a turn of the
    /// session (kept in its history).
    ///
    /// Fails with [`StructuredError::Turn`] when a turn ends without an
    /// answer, and [`StructuredError::Invalid`] when no answer validated.
    pub async fn run_structured(
        &self,
        session_id: &str,
        prompt: impl Into<String>,
        schema: &OutputSchema,
    ) -> Result<StructuredAnswer, StructuredError> {
        let mut text = format!("{}\n\n{}", prompt.into(), schema.instruction());
        let mut retries = 0;
        loop {
            let turn = self.run(session_id, text).await?;
            let answer = turn.text();
            match schema.check(&answer) {
                Ok(value) => {
                    return Ok(StructuredAnswer {
                        value,
                        turn,
                        retries,
                    });
                }
                Err(message) if retries >= schema.retry_limit() => {
                    return Err(StructuredError::Invalid {
                        message,
                        retries,
                        answer,
                    });
                }
                Err(message) => {
                    tracing::debug!(session_id, %message, "structured answer not valid; retrying");
                    retries += 1;
                    text = schema.correction(&message);
                }
            }
        }
    }
}
