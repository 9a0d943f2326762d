//! The keys opencode's configuration knows, and did-you-mean hints for the
//! others.

use serde_json::{Map, Value};

use super::error::ConfigWarning;

/// Top-level keys of opencode's `opencode.json`.
pub const TOP_LEVEL_KEYS: &[&str] = &[
    "$schema",
    "agent",
    // opencode's V2 agent map, lowered into `agent` (native_agents.rs).
    "agents",
    "autoshare",
    "autoupdate",
    "command",
    "compaction",
    "default_agent",
    "disabled_providers",
    "enabled_providers",
    "enterprise",
    "experimental",
    "formatter",
    // Not opencode's: this SDK's shell-command hooks in Claude Code's layout
    // (config/hooks.rs, docs/hooks.md).
    "hooks",
    "instructions",
    "keybinds",
    "layout",
    "logLevel",
    "lsp",
    "mcp",
    "mode",
    "model",
    "permission",
    "plugin",
    "provider",
    // Not opencode's: this SDK's bounds on retrying failed model streams
    // (`RetryPolicy::from_config`, docs/agent-loop.md).
    "retry",
    // Not opencode's: this SDK's OS sandbox under bash (agentgate-tools'
    // `SandboxPolicy`, docs/sandbox.md).
    "sandbox",
    "server",
    "share",
    "small_model",
    "snapshot",
    "subagent_depth",
    "theme",
    "tools",
    "tui",
    "username",
    "watcher",
];

/// Keys of a `provider.<id>` entry.
pub const PROVIDER_KEYS: &[&str] = &[
    "api",
    "env",
    "id",
    "models",
    "name",
    "npm",
    "options",
    "whitelist",
    "blacklist",
];

/// Keys of a `provider.<id>.options` object this SDK reads: the endpoint
/// and key, extra headers, and opencode's three timeouts (milliseconds, or
/// `false` for none). opencode hands other options to its AI SDK provider
/// packages, which this SDK does not have, so they are ignored with a
/// warning.
pub const PROVIDER_OPTION_KEYS: &[&str] = &[
    "apiKey",
    "baseURL",
    "chunkTimeout",
    "headerTimeout",
    "headers",
    "timeout",
];

/// The Levenshtein distance of two short strings.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous + usize::from(ca != *cb);
            previous = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(previous + 1);
        }
    }
    row[b.len()]
}

/// The known key closest to `key`, when it is close enough to be a typo.
pub fn did_you_mean<'a>(key: &str, known: &[&'a str]) -> Option<&'a str> {
    let lower = key.to_ascii_lowercase();
    known
        .iter()
        .map(|k| (distance(&lower, &k.to_ascii_lowercase()), *k))
        .filter(|(d, k)| *d <= (k.len() / 3).max(2) && *d < k.len())
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// A warning for every key of `object` not in `known`, under `prefix`.
pub fn unknown_keys(
    object: &Map<String, Value>,
    known: &[&str],
    file: &str,
    prefix: &str,
) -> Vec<ConfigWarning> {
    object
        .keys()
        .filter(|key| !known.contains(&key.as_str()))
        .map(|key| {
            let hint = match did_you_mean(key, known) {
                Some(k) => format!("; did you mean {k:?}?"),
                None => String::new(),
            };
            ConfigWarning {
                file: file.to_string(),
                path: if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                },
                message: format!("unknown key, ignored{hint}"),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_get_a_hint() {
        assert_eq!(
            did_you_mean("permision", TOP_LEVEL_KEYS),
            Some("permission")
        );
        assert_eq!(did_you_mean("modell", TOP_LEVEL_KEYS), Some("model"));
        assert_eq!(
            did_you_mean("instruction", TOP_LEVEL_KEYS),
            Some("instructions")
        );
        assert_eq!(did_you_mean("zzzzzz", TOP_LEVEL_KEYS), None);
    }
}
