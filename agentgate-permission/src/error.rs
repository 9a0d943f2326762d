//! [`PermissionError`]: why a permission request did not go through (§1).

use crate::rule::Ruleset;

/// The first words of every rejection message.
const REJECTED: &str = "The user rejected permission to use this specific tool call";

/// Why a permission request failed. The `Display` texts are opencode's,
/// word for word, because models are prompted with them.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PermissionError {
    /// A `deny` rule matched. `rules` lists every rule of the caller's
    /// ruleset whose permission pattern matches the requested permission
    /// (approved rules are never listed), as opencode does.
    #[error(
        "The user has specified a rule which prevents you from using this specific tool call. Here are some of the relevant rules {}",
        serde_json::to_string(.rules).unwrap_or_else(|_| "[]".into())
    )]
    Denied {
        /// The caller's rules relevant to the requested permission.
        rules: Ruleset,
    },
    /// The host rejected the request without feedback (or the request was
    /// cancelled by a sibling's rejection or a shutdown). This stops the
    /// agent loop.
    #[error("{REJECTED}.")]
    Rejected,
    /// The host rejected the request with feedback for the model; the loop
    /// continues and the model sees the feedback.
    #[error("{REJECTED} with the following feedback: {feedback}")]
    Corrected {
        /// The host's feedback text.
        feedback: String,
    },
    /// Nobody answered within the ask's deadline
    /// ([`AskRequest::timeout`](crate::AskRequest::timeout)): the call is
    /// not run, and the loop stops as for a rejection, saying why.
    #[error(
        "{REJECTED}: nobody answered within {seconds} s (the ask's deadline), so it was not run."
    )]
    Expired {
        /// The deadline, in seconds.
        seconds: u64,
    },
    /// `reply` named a request that is not pending (never asked, already
    /// answered, or cancelled).
    #[error(
        "permission request {id:?} not found: it was never asked, was already answered, or its caller gave up"
    )]
    NotFound {
        /// The unknown request id.
        id: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rule::{Action, Rule};

    #[test]
    fn texts_are_opencodes() {
        assert_eq!(
            PermissionError::Rejected.to_string(),
            "The user rejected permission to use this specific tool call."
        );
        assert_eq!(
            PermissionError::Corrected {
                feedback: "use ls".into()
            }
            .to_string(),
            "The user rejected permission to use this specific tool call with the following feedback: use ls"
        );
        let denied = PermissionError::Denied {
            rules: Ruleset::from(vec![Rule::new("bash", "*", Action::Deny)]),
        };
        assert_eq!(
            denied.to_string(),
            "The user has specified a rule which prevents you from using this specific tool call. Here are some of the relevant rules [{\"permission\":\"bash\",\"pattern\":\"*\",\"action\":\"deny\"}]"
        );
    }
}
