//! The built-in agents' permission rules, for `--agent NAME`.

use agent_permission::Ruleset;

use super::CliError;

/// The built-in rules of agent `name` (without any user config).
pub fn builtin_rules(name: &str, _home: &str) -> Result<Ruleset, CliError> {
    Err(CliError(format!("unknown agent {name:?}")))
}
