//! Which environment variables reach spawned commands. By default every
//! variable of the agent's environment is passed except those whose names
//! look like secrets ([`DEFAULT_EXCLUDES`]: provider API keys, tokens,
//! passwords), so `env` or a malicious script cannot read them; names on the
//! allow list ([`DEFAULT_KEEP`] plus [`EnvFilter::keep`]) pass anyway.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};

use serde::{Deserialize, Serialize};

/// Name patterns (case-insensitive, `*` = any run of characters) that are
/// dropped unless kept. They cover every provider key this SDK reads
/// (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, ...) and the usual cloud and
/// forge credentials (`AWS_SECRET_ACCESS_KEY`, `GITHUB_TOKEN`, ...).
pub const DEFAULT_EXCLUDES: &[&str] = &[
    "*KEY*",
    "*SECRET*",
    "*TOKEN*",
    "*PASSWORD*",
    "*PASSWD*",
    "*CREDENTIAL*",
    "*_PAT",
    "*_AUTH",
];

/// Names that match [`DEFAULT_EXCLUDES`] but hold no secret, passed anyway.
pub const DEFAULT_KEEP: &[&str] = &["TOKENIZERS_PARALLELISM", "KEYTIMEOUT"];

/// The variables [`EnvInherit::Core`] passes.
pub const CORE_VARIABLES: &[&str] = &[
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "LC_*", "TZ", "TMPDIR", "TMP",
    "TEMP",
];

/// Where the environment starts from before excludes are applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum EnvInherit {
    /// Every variable of the agent's environment.
    #[default]
    All,
    /// Only [`CORE_VARIABLES`].
    Core,
    /// Nothing (only [`EnvFilter::set`]).
    None,
}

/// The `sandbox.env` configuration key.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EnvFilter {
    /// Where the environment starts from.
    pub inherit: EnvInherit,
    /// Extra name patterns to drop.
    pub exclude: Vec<String>,
    /// Name patterns to pass even when an exclude matches (the allow list,
    /// added to [`DEFAULT_KEEP`]).
    pub keep: Vec<String>,
    /// Do not apply [`DEFAULT_EXCLUDES`] (pass provider keys; not advised).
    pub ignore_default_excludes: bool,
    /// Variables set for every command, after filtering.
    pub set: BTreeMap<String, String>,
}

impl EnvFilter {
    /// Whether a variable called `name` passes the filter.
    pub fn passes(&self, name: &OsStr) -> bool {
        let Some(name) = name.to_str() else {
            // A name that is not UTF-8 cannot be matched reliably: drop it.
            return false;
        };
        let inherited = match self.inherit {
            EnvInherit::All => true,
            EnvInherit::Core => CORE_VARIABLES.iter().any(|p| name_matches(p, name)),
            EnvInherit::None => false,
        };
        if !inherited {
            return false;
        }
        let kept = DEFAULT_KEEP
            .iter()
            .copied()
            .chain(self.keep.iter().map(String::as_str))
            .any(|p| name_matches(p, name));
        if kept {
            return true;
        }
        let excluded = (!self.ignore_default_excludes
            && DEFAULT_EXCLUDES.iter().any(|p| name_matches(p, name)))
            || self.exclude.iter().any(|p| name_matches(p, name));
        !excluded
    }

    /// The environment for a command, from `base` (usually the agent's own
    /// environment).
    pub fn apply(
        &self,
        base: impl IntoIterator<Item = (OsString, OsString)>,
    ) -> Vec<(OsString, OsString)> {
        let mut vars: Vec<(OsString, OsString)> = base
            .into_iter()
            .filter(|(name, _)| self.passes(name))
            .filter(|(name, _)| !name.to_str().is_some_and(|n| self.set.contains_key(n)))
            .collect();
        vars.extend(
            self.set
                .iter()
                .map(|(name, value)| (OsString::from(name), OsString::from(value))),
        );
        vars
    }
}

/// Case-insensitive match of `name` against `pattern`, where `*` matches any
/// run of characters.
fn name_matches(pattern: &str, name: &str) -> bool {
    let pattern = pattern.as_bytes();
    let name = name.as_bytes();
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        if p < pattern.len() && pattern[p] == b'*' {
            star = Some((p, n));
            p += 1;
        } else if p < pattern.len() && pattern[p].eq_ignore_ascii_case(&name[n]) {
            p += 1;
            n += 1;
        } else if let Some((star_p, star_n)) = star {
            p = star_p + 1;
            n = star_n + 1;
            star = Some((star_p, star_n + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(names: &[&str]) -> Vec<(OsString, OsString)> {
        names
            .iter()
            .map(|n| (OsString::from(n), OsString::from("v")))
            .collect()
    }

    fn names(vars: &[(OsString, OsString)]) -> Vec<String> {
        vars.iter()
            .map(|(n, _)| n.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn patterns() {
        assert!(name_matches("*KEY*", "openai_api_key"));
        assert!(name_matches("LC_*", "LC_ALL"));
        assert!(!name_matches("LC_*", "XLC_ALL"));
        assert!(name_matches("*_PAT", "GITHUB_PAT"));
        assert!(!name_matches("*_PAT", "GITHUB_PATH"));
        assert!(name_matches("*", ""));
    }

    #[test]
    fn provider_keys_and_secrets_are_dropped_by_default() {
        let filter = EnvFilter::default();
        let out = filter.apply(vars(&[
            "PATH",
            "HOME",
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "OPENROUTER_API_KEY",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_SESSION_TOKEN",
            "GITHUB_TOKEN",
            "PGPASSWORD",
            "TOKENIZERS_PARALLELISM",
            "SSH_AUTH_SOCK",
            "CARGO_HOME",
        ]));
        assert_eq!(
            names(&out),
            [
                "PATH",
                "HOME",
                "TOKENIZERS_PARALLELISM",
                "SSH_AUTH_SOCK",
                "CARGO_HOME"
            ]
        );
    }

    #[test]
    fn keep_exclude_set_and_inherit() {
        let filter = EnvFilter {
            keep: vec!["MY_API_KEY".into()],
            exclude: vec!["CARGO_*".into()],
            set: [("HOME".to_string(), "/h".to_string())].into(),
            ..EnvFilter::default()
        };
        let out = filter.apply(vars(&["MY_API_KEY", "CARGO_HOME", "HOME", "OTHER_KEY"]));
        assert_eq!(names(&out), ["MY_API_KEY", "HOME"]);
        assert_eq!(out[1].1, "/h");

        let core = EnvFilter {
            inherit: EnvInherit::Core,
            ..EnvFilter::default()
        };
        assert_eq!(
            names(&core.apply(vars(&["PATH", "LC_ALL", "EDITOR"]))),
            ["PATH", "LC_ALL"]
        );
        let none = EnvFilter {
            inherit: EnvInherit::None,
            ..EnvFilter::default()
        };
        assert!(none.apply(vars(&["PATH"])).is_empty());
    }
}
