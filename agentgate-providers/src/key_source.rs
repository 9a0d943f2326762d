//! Where a client's API key came from, said when the provider refuses it:
//! a 401 names the environment variable or the config key and file that
//! held the key, so the person knows what to correct.

use agentgate_core::ModelError;

/// The place of a key read from the environment variable `variable`.
pub(crate) fn from_env(variable: &str) -> String {
    format!("the {variable} environment variable")
}

/// The place of a key set in the config: `provider.<provider>.options.apiKey`
/// in `file` (or in "opencode.json" when the file is not known).
pub(crate) fn from_config(provider: &str, file: Option<&str>) -> String {
    format!(
        "`provider.{provider}.options.apiKey` in {}",
        file.unwrap_or("opencode.json")
    )
}

/// `error` with, for a 401 (the provider refused the key), where the key
/// came from (`source`) and what to do. Other errors are left as they are.
pub(crate) fn on_rejected_key(error: ModelError, source: Option<&str>) -> ModelError {
    let ModelError::Api(mut api) = error else {
        return error;
    };
    if api.status == Some(401) {
        api.message = match source {
            Some(source) => format!(
                "{}; the API key from {source} was refused: check that it is a valid key for \
                 this provider and correct it there",
                api.message
            ),
            None => format!(
                "{}; the API key was refused (or none was sent): check the key the client was \
                 given",
                api.message
            ),
        };
    }
    ModelError::Api(api)
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentgate_core::ApiError;

    #[test]
    fn a_401_names_where_the_key_came_from() {
        let refused = ModelError::Api(ApiError::new(401, "invalid x-api-key"));
        let ModelError::Api(api) = on_rejected_key(refused, Some(&from_env("ANTHROPIC_API_KEY")))
        else {
            panic!("not an API error");
        };
        assert!(
            api.message.contains(
                "the API key from the ANTHROPIC_API_KEY environment variable was refused"
            ),
            "{}",
            api.message
        );
        let other = ModelError::Api(ApiError::new(500, "boom"));
        let ModelError::Api(api) = on_rejected_key(other, Some("x")) else {
            panic!("not an API error");
        };
        assert_eq!(api.message, "boom");
    }
}
