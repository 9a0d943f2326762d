//! Which environment variables reach spawned commands: an allow list. By
//! default only the documented [`CORE_VARIABLES`] (`PATH`, `HOME`, the
//! locale, the temporary directories, ...) and the names the policy lists
//! in [`EnvFilter::keep`] pass, so an unknown secret (`FOO_TOKEN`,
//! `AWS_*`, `GH_*`), a way to a daemon outside the sandbox
//! (`SSH_AUTH_SOCK`, `DOCKER_HOST`) or a provider key never reaches `env`
//! or a malicious script unless the configuration names it.
//!
//! `inherit: "all"` (the default before the allow list) passes everything
//! except names that look like secrets ([`DEFAULT_EXCLUDES`]); the
//! excludes also apply to the core variables.

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

/// Names that match [`DEFAULT_EXCLUDES`] but hold no secret: with
/// `inherit: "all"` they pass anyway.
pub const DEFAULT_KEEP: &[&str] = &["TOKENIZERS_PARALLELISM", "KEYTIMEOUT"];

/// The variables every command gets (the default allow list): where things
/// are, who the user is, the terminal and the locale. Nothing here holds a
/// secret or leads to a daemon.
pub const CORE_VARIABLES: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "USERNAME",
    "SHELL",
    "TERM",
    "COLORTERM",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TZ",
    "TMPDIR",
    "TMP",
    "TEMP",
];

/// Where the environment starts from before excludes are applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum EnvInherit {
    /// Every variable of the agent's environment (minus the excludes).
    All,
    /// [`CORE_VARIABLES`] and the names of [`EnvFilter::keep`] (the
    /// default).
    #[default]
    Core,
    /// Only the names of [`EnvFilter::keep`] (and [`EnvFilter::set`]).
    None,
}

/// The `sandbox.env` configuration key.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EnvFilter {
    /// Where the environment starts from (default: the core variables).
    pub inherit: EnvInherit,
    /// Extra name patterns to drop.
    pub exclude: Vec<String>,
    /// Name patterns that pass: added to the allow list (`core`, `none`),
    /// and passed even when an exclude matches (every mode).
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
        let kept = self.keep.iter().any(|p| name_matches(p, name));
        let inherited = kept
            || match self.inherit {
                EnvInherit::All => true,
                EnvInherit::Core => CORE_VARIABLES.iter().any(|p| name_matches(p, name)),
                EnvInherit::None => false,
            };
        if !inherited {
            return false;
        }
        if kept || DEFAULT_KEEP.iter().any(|p| name_matches(p, name)) {
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

    /// The names an agent's environment typically holds besides the core
    /// ones: secrets, ways to daemons, harmless settings.
    const OTHERS: &[&str] = &[
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "OPENROUTER_API_KEY",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_PROFILE",
        "AWS_REGION",
        "GITHUB_TOKEN",
        "GH_HOST",
        "GH_ENTERPRISE_TOKEN",
        "FOO_TOKEN",
        "MY_API_KEY",
        "DATABASE_URL",
        "PGPASSWORD",
        "SSH_AUTH_SOCK",
        "DOCKER_HOST",
        "DBUS_SESSION_BUS_ADDRESS",
        "XDG_RUNTIME_DIR",
        "TMUX",
        "HTTPS_PROXY",
        "TOKENIZERS_PARALLELISM",
        "CARGO_HOME",
        "EDITOR",
    ];

    #[test]
    fn by_default_only_core_variables_pass() {
        let filter = EnvFilter::default();
        let core = ["PATH", "HOME", "USER", "LANG", "LC_ALL", "TMPDIR", "TERM"];
        let mut all: Vec<&str> = core.to_vec();
        all.extend(OTHERS);
        assert_eq!(names(&filter.apply(vars(&all))), core);
    }

    #[test]
    fn keep_adds_to_the_allow_list_even_over_excludes() {
        let filter = EnvFilter {
            keep: vec!["DOCKER_HOST".into(), "MY_API_KEY".into(), "AWS_*".into()],
            ..EnvFilter::default()
        };
        let out = filter.apply(vars(&[
            "PATH",
            "DOCKER_HOST",
            "MY_API_KEY",
            "AWS_REGION",
            "FOO_TOKEN",
        ]));
        assert_eq!(
            names(&out),
            ["PATH", "DOCKER_HOST", "MY_API_KEY", "AWS_REGION"]
        );
    }

    #[test]
    fn inherit_all_is_the_old_deny_list() {
        let filter = EnvFilter {
            inherit: EnvInherit::All,
            ..EnvFilter::default()
        };
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
        let parsed: EnvFilter =
            serde_json::from_value(serde_json::json!({"inherit": "all"})).unwrap();
        assert_eq!(parsed, filter);
        let default: EnvFilter = serde_json::from_value(serde_json::json!({})).unwrap();
        assert_eq!(default.inherit, EnvInherit::Core);
    }

    #[test]
    fn keep_exclude_set_and_inherit() {
        let filter = EnvFilter {
            inherit: EnvInherit::All,
            keep: vec!["MY_API_KEY".into()],
            exclude: vec!["CARGO_*".into()],
            set: [("HOME".to_string(), "/h".to_string())].into(),
            ..EnvFilter::default()
        };
        let out = filter.apply(vars(&["MY_API_KEY", "CARGO_HOME", "HOME", "OTHER_KEY"]));
        assert_eq!(names(&out), ["MY_API_KEY", "HOME"]);
        assert_eq!(out[1].1, "/h");

        let core = EnvFilter {
            exclude: vec!["TMPDIR".into()],
            ..EnvFilter::default()
        };
        assert_eq!(
            names(&core.apply(vars(&["PATH", "LC_ALL", "EDITOR", "TMPDIR"]))),
            ["PATH", "LC_ALL"]
        );
        let none = EnvFilter {
            inherit: EnvInherit::None,
            keep: vec!["EDITOR".into()],
            ..EnvFilter::default()
        };
        assert_eq!(names(&none.apply(vars(&["PATH", "EDITOR"]))), ["EDITOR"]);
    }

    proptest::proptest! {
        /// Under the default filter a name passes exactly when it is a core
        /// variable that does not look like a secret (`LC_TOKEN` does not
        /// pass), whatever the name and its case.
        #[test]
        fn only_core_names_pass_by_default(name in "(LC_)?[A-Za-z_][A-Za-z0-9_]{0,24}") {
            let core = CORE_VARIABLES.iter().any(|p| name_matches(p, &name));
            let secret = DEFAULT_EXCLUDES.iter().any(|p| name_matches(p, &name));
            proptest::prop_assert_eq!(
                EnvFilter::default().passes(OsStr::new(&name)),
                core && !secret
            );
        }
    }

    #[test]
    fn every_literal_core_name_passes() {
        for name in CORE_VARIABLES.iter().map(|p| p.replace('*', "ALL")) {
            assert!(EnvFilter::default().passes(OsStr::new(&name)), "{name}");
        }
    }
}
