//! What a repository's configuration makes git execute or load, as data:
//! one entry per key ([`KEYS`]), each saying how its value names a path —
//! a folder of hooks, a file git loads, or a command (its first word, and
//! every word that names a path in the tree). Any other key whose value
//! names an existing file of the tree is counted too: git has hundreds of
//! keys and gains more, and over-protecting a file costs one ask.

use std::path::{Component, Path, PathBuf};

use super::repository::is_bool;

/// How a key's value names what git runs or loads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A folder git runs programs from (`core.hooksPath`).
    Folder,
    /// A file git reads and acts on (`core.attributesFile`).
    File,
    /// A shell command (a leading `!` stripped, as for aliases and
    /// credential helpers).
    Command,
    /// A command unless the value is a boolean (`core.fsmonitor`,
    /// `pager.<command>`).
    CommandUnlessBool,
    /// Another configuration file, relative to the including one.
    Include,
}

/// One key git acts on: its pattern (`section.key` or
/// `section.*.key`, `*` any subsection or key) and what its value is.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Key {
    pub(crate) pattern: &'static str,
    pub(crate) kind: Kind,
}

const fn key(pattern: &'static str, kind: Kind) -> Key {
    Key { pattern, kind }
}

/// The keys whose values git executes or loads (lowercase, as `git config
/// --list` prints them).
pub(crate) const KEYS: &[Key] = &[
    key("core.hookspath", Kind::Folder),
    key("core.fsmonitor", Kind::CommandUnlessBool),
    key("core.attributesfile", Kind::File),
    key("core.sshcommand", Kind::Command),
    key("core.editor", Kind::Command),
    key("core.pager", Kind::Command),
    key("core.askpass", Kind::Command),
    key("core.gitproxy", Kind::Command),
    key("core.alternaterefscommand", Kind::Command),
    key("sequence.editor", Kind::Command),
    key("diff.external", Kind::Command),
    key("diff.*.textconv", Kind::Command),
    key("diff.*.command", Kind::Command),
    key("merge.*.driver", Kind::Command),
    key("filter.*.clean", Kind::Command),
    key("filter.*.smudge", Kind::Command),
    key("filter.*.process", Kind::Command),
    key("difftool.*.cmd", Kind::Command),
    key("difftool.*.path", Kind::Command),
    key("mergetool.*.cmd", Kind::Command),
    key("mergetool.*.path", Kind::Command),
    key("gpg.program", Kind::Command),
    key("gpg.*.program", Kind::Command),
    key("gpg.ssh.defaultkeycommand", Kind::Command),
    key("interactive.difffilter", Kind::Command),
    key("credential.helper", Kind::Command),
    key("credential.*.helper", Kind::Command),
    key("alias.*", Kind::Command),
    key("pager.*", Kind::CommandUnlessBool),
    key("submodule.*.update", Kind::Command),
    key("remote.*.receivepack", Kind::Command),
    key("remote.*.uploadpack", Kind::Command),
    key("uploadpack.packobjectshook", Kind::Command),
    key("sendemail.smtpserver", Kind::Command),
    key("sendemail.sendmailcmd", Kind::Command),
    key("sendemail.tocmd", Kind::Command),
    key("sendemail.cccmd", Kind::Command),
    key("sendemail.headercmd", Kind::Command),
    key("trailer.*.command", Kind::Command),
    key("trailer.*.cmd", Kind::Command),
    key("imap.tunnel", Kind::Command),
    key("browser.*.cmd", Kind::Command),
    key("browser.*.path", Kind::Command),
    key("man.*.cmd", Kind::Command),
    key("man.*.path", Kind::Command),
    key("include.path", Kind::Include),
    key("includeif.*.path", Kind::Include),
];

/// The entry of [`KEYS`] `key` (lowercase section and name) matches.
pub(crate) fn kind_of(key: &str) -> Option<Kind> {
    let (section, rest) = key.split_once('.')?;
    let (sub, name) = match rest.rsplit_once('.') {
        Some((sub, name)) => (Some(sub), name),
        None => (None, rest),
    };
    KEYS.iter()
        .find(|entry| {
            let parts: Vec<&str> = entry.pattern.split('.').collect();
            let fits = |pattern: &str, text: &str| pattern == "*" || pattern == text;
            match (parts.as_slice(), sub) {
                ([s, n], None) => fits(s, section) && fits(n, name),
                ([s, m, n], Some(sub)) => fits(s, section) && fits(m, sub) && fits(n, name),
                _ => false,
            }
        })
        .map(|entry| entry.kind)
}

/// Where an entry's value leads, for the protected set.
pub(crate) struct Place<'a> {
    /// The work tree's top: git runs commands and hooks there.
    pub(crate) top: &'a Path,
    /// The configuration file the entry is in (includes are relative to it).
    pub(crate) file: &'a Path,
    /// `~/` expands to it.
    pub(crate) home: Option<&'a Path>,
}

/// The paths one entry names: for a known key by its kind, else every
/// word of the value naming an existing file. Not filtered to the tree.
pub(crate) fn named_paths(key: &str, value: Option<&str>, place: &Place<'_>) -> Vec<PathBuf> {
    let Some(value) = value.filter(|value| !value.is_empty()) else {
        return Vec::new();
    };
    let resolve = |word: &str| resolve(word, place.top, place.home);
    match kind_of(key) {
        Some(Kind::Folder | Kind::File) => resolve(value).into_iter().collect(),
        Some(Kind::Include) => super::config::include_target(place.file, value, place.home)
            .map(|target| normalize(&target))
            .into_iter()
            .collect(),
        Some(Kind::CommandUnlessBool) if is_bool(value) => Vec::new(),
        Some(Kind::Command | Kind::CommandUnlessBool) => {
            let words = words(value.strip_prefix('!').unwrap_or(value));
            let mut found = Vec::new();
            for (i, word) in words.iter().enumerate() {
                let Some(path) = resolve(word) else { continue };
                // The program itself even when absent: a command could
                // create it before git runs it.
                if (i == 0 && word.contains('/')) || path.is_file() || path.is_dir() {
                    found.push(path);
                }
            }
            found
        }
        None => words(value)
            .iter()
            .filter(|word| word.contains('/'))
            .filter_map(|word| resolve(word))
            .filter(|path| path.is_file())
            .collect(),
    }
}

/// `word` as a path: `~/` from `home`, relative from `top`; normalized.
fn resolve(word: &str, top: &Path, home: Option<&Path>) -> Option<PathBuf> {
    if word.is_empty() {
        return None;
    }
    let path = if let Some(rest) = word.strip_prefix("~/") {
        home?.join(rest)
    } else if word.starts_with('~') {
        return None;
    } else {
        top.join(word)
    };
    Some(normalize(&path))
}

/// `path` with `.` and `..` taken out lexically.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The words of a shell command as `sh` would split them, roughly and on
/// the generous side: quotes and backslashes taken out, operators
/// (`; & | ( ) < >`) split on, and `--opt=value` giving `value` as well.
pub(crate) fn words(command: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') | (None, '\\') => {
                if let Some(next) = chars.next() {
                    word.push(next);
                }
            }
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => quote = Some(c),
            (None, c) if c.is_whitespace() || ";&|()<>`".contains(c) => {
                words.push(std::mem::take(&mut word));
            }
            (None, c) => word.push(c),
        }
    }
    words.push(word);
    let mut out: Vec<String> = Vec::new();
    for word in words.into_iter().filter(|word| !word.is_empty()) {
        if let Some((_, value)) = word.split_once('=').filter(|(_, v)| !v.is_empty()) {
            out.push(word.clone());
            out.push(value.to_string());
        } else {
            out.push(word);
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn every_key_of_the_table_names_its_path() {
        let top = Path::new("/w");
        let place = Place {
            top,
            file: Path::new("/w/.git/config"),
            home: Some(Path::new("/home/u")),
        };
        for entry in KEYS {
            let key = entry.pattern.replace('*', "x");
            let (value, expected) = match entry.kind {
                Kind::Folder | Kind::File => ("tools/hooks", "/w/tools/hooks"),
                Kind::Include => ("../shared.inc", "/w/shared.inc"),
                Kind::Command | Kind::CommandUnlessBool => {
                    ("!./tools/run --x \"a b\"", "/w/tools/run")
                }
            };
            assert_eq!(kind_of(&key), Some(entry.kind), "{key}");
            let paths = named_paths(&key, Some(value), &place);
            assert_eq!(
                paths.first().map(PathBuf::as_path),
                Some(Path::new(expected)),
                "{key}"
            );
        }
        assert!(named_paths("core.fsmonitor", Some("true"), &place).is_empty());
        assert!(named_paths("pager.log", Some("false"), &place).is_empty());
        assert!(named_paths("core.editor", Some("vim"), &place).is_empty());
        assert_eq!(kind_of("filter.lfs.required"), None);
        assert_eq!(kind_of("core.x.hookspath"), None);
    }

    #[test]
    fn words_are_split_as_the_shell_would_roughly() {
        assert_eq!(
            words(r#"sh -c 'a b' "c\"d" e\ f;g|h --x=./y"#),
            ["sh", "-c", "a b", "c\"d", "e f", "g", "h", "--x=./y", "./y"]
        );
    }
}
