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

/// The edit distance of two short strings, counting a swap of two
/// neighbouring characters as one edit (optimal string alignment, a
/// restricted Damerau–Levenshtein): `modle` is one edit from `model`.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // Three rows: two back (for swaps), the previous and the current.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut current = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (previous[j] + 1)
                .min(current[j - 1] + 1)
                .min(previous[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(before[j - 2] + 1);
            }
            current[j] = best;
        }
        before = std::mem::replace(&mut previous, current);
    }
    previous[b.len()]
}

/// The known key closest to `key`, when it is close enough to be a typo:
/// at most a third of the known key's length in edits (at least one).
/// Among equally close keys, the one whose length is nearest `key`'s wins
/// (`modle` is `model` with two letters swapped, not `mode` plus one).
pub fn did_you_mean<'a>(key: &str, known: &[&'a str]) -> Option<&'a str> {
    let lower = key.to_ascii_lowercase();
    let length = lower.chars().count();
    known
        .iter()
        .map(|k| (distance(&lower, &k.to_ascii_lowercase()), *k))
        .filter(|(d, k)| *d <= (k.len() / 3).max(1) && *d < k.len())
        .min_by_key(|(d, k)| (*d, k.len().abs_diff(length)))
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
        // Two letters swapped: the key with them in order, not the shorter
        // key one deletion away.
        assert_eq!(did_you_mean("modle", TOP_LEVEL_KEYS), Some("model"));
        assert_eq!(
            did_you_mean("permisison", TOP_LEVEL_KEYS),
            Some("permission")
        );
        // Far from every key: no guess.
        assert_eq!(did_you_mean("mqxzl", TOP_LEVEL_KEYS), None);
        assert_eq!(did_you_mean("banana", TOP_LEVEL_KEYS), None);
    }
}
