//! git's configuration format, read the way git reads it (`config.c`),
//! without running git: sections (`[core]`), subsections (`[a "b"]`, with
//! `\` escaping the next character; the old `[a.b]` form, lowercased),
//! keys (case-insensitive), values (quotes, the escapes `\\ \" \n \t \b`,
//! `\` at the end of a line continuing it, inner whitespace kept, outer
//! whitespace trimmed), comments (`#`, `;`), and `include.path` /
//! `includeIf.<condition>.path` (relative to the including file, `~/`
//! expanded, missing files skipped, at most ten deep).
//!
//! Keys come out as `git config --list` prints them: section and key
//! lowercased, subsection as written. A key with no `=` has no value
//! (git's boolean true).
//!
//! ```
//! use agentgate_tools::git_config::parse;
//! let parsed = parse(b"[core]\n\thooksPath = \".husky\" # husky\n[filter \"lfs\"]\n\tclean = git-lfs clean -- %f\n");
//! assert!(parsed.error.is_none());
//! assert_eq!(parsed.entries[0], ("core.hookspath".to_string(), Some(".husky".to_string())));
//! assert_eq!(parsed.entries[1].0, "filter.lfs.clean");
//! ```

use std::path::{Path, PathBuf};

/// Why a configuration file could not be read to its end, as git would
/// refuse it (git then stops: nothing the file configures runs).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad git config line {line}: {reason}")]
pub struct SyntaxError {
    /// The 1-based line where reading stopped.
    pub line: usize,
    /// What was wrong there.
    pub reason: &'static str,
}

/// One file's entries, in order, and the error that ended it early (the
/// entries before it are kept: the protected set errs on the side of more).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    /// `(key, value)` pairs as `git config --list` names them.
    pub entries: Vec<(String, Option<String>)>,
    /// The line each entry of `entries` ends on.
    pub lines: Vec<usize>,
    /// The syntax error that stopped reading, if any.
    pub error: Option<SyntaxError>,
}

/// A cursor over the bytes of one file, as git's `get_next_char`: `\r\n`
/// reads as `\n`, and the end reads as one more `\n`.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
    line: usize,
    eof: bool,
}

impl Cursor<'_> {
    fn next(&mut self) -> u8 {
        let Some(&c) = self.bytes.get(self.at) else {
            if !self.eof {
                self.line += 1;
            }
            self.eof = true;
            return b'\n';
        };
        self.at += 1;
        if c == b'\r' && self.bytes.get(self.at) == Some(&b'\n') {
            self.at += 1;
            self.line += 1;
            return b'\n';
        }
        if c == b'\n' {
            self.line += 1;
        }
        c
    }

    fn error(&self, reason: &'static str) -> SyntaxError {
        SyntaxError {
            line: self.line.max(1),
            reason,
        }
    }
}

/// git's `isspace`: space, tab, newline, carriage return.
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r')
}

/// git's `iskeychar`: a letter, a digit or `-`.
fn is_key_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'-'
}

/// Parses one file's text (no includes followed).
pub fn parse(text: &[u8]) -> Parsed {
    let text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
    let mut cursor = Cursor {
        bytes: text,
        at: 0,
        line: 1,
        eof: false,
    };
    let mut parsed = Parsed::default();
    let mut section: Option<String> = None;
    let mut comment = false;
    loop {
        let c = cursor.next();
        if c == b'\n' {
            if cursor.eof {
                return parsed;
            }
            comment = false;
            continue;
        }
        if comment || is_space(c) {
            continue;
        }
        if c == b'#' || c == b';' {
            comment = true;
            continue;
        }
        let step = if c == b'[' {
            section_header(&mut cursor).map(|name| {
                section = Some(name);
            })
        } else if c.is_ascii_alphabetic() {
            key_value(&mut cursor, c, section.as_deref()).map(|entry| {
                parsed.entries.push(entry);
                // The cursor is past the entry's newline.
                parsed.lines.push(cursor.line.saturating_sub(1).max(1));
            })
        } else {
            Err(cursor.error("expected a section, a key or a comment"))
        };
        if let Err(error) = step {
            parsed.error = Some(error);
            return parsed;
        }
    }
}

/// The name of a section header after its `[`: `core`, `a.b` (old form,
/// lowercased) or `a.<subsection>`.
fn section_header(cursor: &mut Cursor<'_>) -> Result<String, SyntaxError> {
    let mut name = String::new();
    loop {
        let c = cursor.next();
        if cursor.eof {
            return Err(cursor.error("unterminated section header"));
        }
        if c == b']' {
            if name.is_empty() {
                return Err(cursor.error("empty section name"));
            }
            return Ok(name);
        }
        if is_space(c) {
            return subsection(cursor, name, c);
        }
        if !is_key_char(c) && c != b'.' {
            return Err(cursor.error("bad character in a section name"));
        }
        name.push(char::from(c.to_ascii_lowercase()));
    }
}

/// The `"subsection"]` of `[section "subsection"]`, appended to `name`.
fn subsection(cursor: &mut Cursor<'_>, mut name: String, mut c: u8) -> Result<String, SyntaxError> {
    while is_space(c) {
        if c == b'\n' {
            return Err(cursor.error("section header ends mid-line"));
        }
        c = cursor.next();
    }
    if c != b'"' {
        return Err(cursor.error("a subsection must be quoted"));
    }
    let mut sub: Vec<u8> = Vec::new();
    loop {
        let mut c = cursor.next();
        if c == b'\n' {
            return Err(cursor.error("unterminated subsection"));
        }
        if c == b'"' {
            break;
        }
        if c == b'\\' {
            c = cursor.next();
            if c == b'\n' {
                return Err(cursor.error("unterminated subsection"));
            }
        }
        sub.push(c);
    }
    if cursor.next() != b']' {
        return Err(cursor.error("expected ] after the subsection"));
    }
    name.push('.');
    name.push_str(&String::from_utf8_lossy(&sub));
    Ok(name)
}

/// One `key [= value]` line, starting at the key's first letter `first`.
fn key_value(
    cursor: &mut Cursor<'_>,
    first: u8,
    section: Option<&str>,
) -> Result<(String, Option<String>), SyntaxError> {
    let mut key = String::from(char::from(first.to_ascii_lowercase()));
    let mut c;
    loop {
        c = cursor.next();
        if cursor.eof || !is_key_char(c) {
            break;
        }
        key.push(char::from(c.to_ascii_lowercase()));
    }
    while c == b' ' || c == b'\t' {
        c = cursor.next();
    }
    let value = if c == b'\n' {
        None
    } else if c == b'=' {
        Some(value(cursor)?)
    } else {
        return Err(cursor.error("expected = after a key"));
    };
    // A key before any section is listed bare, as git lists it.
    let key = match section {
        Some(section) => format!("{section}.{key}"),
        None => key,
    };
    Ok((key, value))
}

/// A value after its `=`, to the end of its (continued) line.
fn value(cursor: &mut Cursor<'_>) -> Result<String, SyntaxError> {
    let mut out: Vec<u8> = Vec::new();
    let mut quote = false;
    let mut comment = false;
    // Where unquoted trailing whitespace began (0: none pending).
    let mut trim: Option<usize> = None;
    loop {
        let c = cursor.next();
        if c == b'\n' {
            if quote {
                return Err(cursor.error("unterminated quote in a value"));
            }
            if let Some(len) = trim {
                out.truncate(len);
            }
            return Ok(String::from_utf8_lossy(&out).into_owned());
        }
        if comment {
            continue;
        }
        if is_space(c) && !quote {
            if trim.is_none() {
                trim = Some(out.len());
            }
            if !out.is_empty() {
                out.push(c);
            }
            continue;
        }
        if !quote && (c == b';' || c == b'#') {
            comment = true;
            continue;
        }
        trim = None;
        match c {
            b'\\' => {
                let escaped = match cursor.next() {
                    b'\n' => continue,
                    b't' => b'\t',
                    b'b' => 0x08,
                    b'n' => b'\n',
                    c @ (b'\\' | b'"') => c,
                    _ => return Err(cursor.error("unknown escape in a value")),
                };
                out.push(escaped);
            }
            b'"' => quote = !quote,
            c => out.push(c),
        }
    }
}

/// Every entry of a configuration file with its includes followed, and
/// every file that was read or looked for (to notice a change).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Loaded {
    /// `(key, value, file it came from)`, in git's order: an include's
    /// entries follow its `include.path` entry.
    pub entries: Vec<(String, Option<String>, PathBuf)>,
    /// The files read, and include targets that did not exist.
    pub files: Vec<PathBuf>,
    /// Syntax errors met, with the file each is in.
    pub errors: Vec<(PathBuf, SyntaxError)>,
}

/// git's limit on nested includes.
const MAX_INCLUDE_DEPTH: usize = 10;

/// How includes are followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Includes {
    /// `include.path` only (`git config --file X --list --includes` outside
    /// a repository, where no `includeIf` condition holds).
    Unconditional,
    /// `include.path` and every `includeIf.<condition>.path`, whatever the
    /// condition: everything git might load, for the protected set.
    All,
}

/// Reads `path` and what it includes (`home` expands `~/`).
pub fn load(path: &Path, home: Option<&Path>, includes: Includes) -> Loaded {
    let mut loaded = Loaded::default();
    load_into(path, home, includes, 0, &mut loaded);
    loaded
}

fn load_into(path: &Path, home: Option<&Path>, includes: Includes, depth: usize, out: &mut Loaded) {
    out.files.push(path.to_path_buf());
    let Ok(text) = std::fs::read(path) else {
        return;
    };
    let parsed = parse(&text);
    if let Some(error) = parsed.error {
        out.errors.push((path.to_path_buf(), error));
    }
    for ((key, value), line) in parsed.entries.into_iter().zip(parsed.lines) {
        let include = is_include(&key, includes);
        let target = value
            .as_deref()
            .filter(|_| include)
            .and_then(|value| include_target(path, value, home));
        // git stops at an include without a path or of a folder (an empty
        // path names the including file's folder).
        let empty = include && value.as_deref().is_none_or(str::is_empty);
        if empty || target.as_ref().is_some_and(|target| target.is_dir()) {
            let reason = "include.path without a file";
            out.errors
                .push((path.to_path_buf(), SyntaxError { line, reason }));
        }
        out.entries.push((key, value, path.to_path_buf()));
        if let Some(target) = target {
            if depth + 1 >= MAX_INCLUDE_DEPTH {
                continue;
            }
            load_into(&target, home, includes, depth + 1, out);
        }
    }
}

/// Whether `key` includes a file under `includes`.
fn is_include(key: &str, includes: Includes) -> bool {
    if key == "include.path" {
        return true;
    }
    includes == Includes::All && key.starts_with("includeif.") && key.ends_with(".path")
}

/// Where an include of `value` in `file` leads: `~/` from `home`, a
/// relative path from the including file's folder; none for an empty
/// value or `~user/` (not expanded here).
pub fn include_target(file: &Path, value: &str, home: Option<&Path>) -> Option<PathBuf> {
    if value.is_empty() {
        return None;
    }
    if let Some(rest) = value.strip_prefix("~/") {
        return home.map(|home| home.join(rest));
    }
    if value.starts_with('~') {
        return None;
    }
    let value = Path::new(value);
    if value.is_absolute() {
        return Some(value.to_path_buf());
    }
    Some(file.parent().unwrap_or(Path::new("/")).join(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(text: &str) -> Vec<(String, Option<String>)> {
        let parsed = parse(text.as_bytes());
        assert_eq!(parsed.error, None, "{text}");
        parsed.entries
    }

    fn one(key: &str, value: &str) -> (String, Option<String>) {
        (key.to_string(), Some(value.to_string()))
    }

    #[test]
    fn sections_subsections_and_keys() {
        assert_eq!(
            entries(
                "[Core]\n\tHooksPath = x\n[Filter \"LFS\"]\nclean=a\n[a.B]\nk=v\n[s \"q\\\"\\x\"] k = v"
            ),
            [
                one("core.hookspath", "x"),
                one("filter.LFS.clean", "a"),
                one("a.b.k", "v"),
                one("s.q\"x.k", "v"),
            ]
        );
        assert_eq!(
            entries("[core]bare\n[core] x = 1 ; c\n"),
            [("core.bare".into(), None), one("core.x", "1")]
        );
    }

    #[test]
    fn values_quotes_escapes_continuations_and_comments() {
        assert_eq!(
            entries("[a]\nk = \"  spaced # not a comment \" tail  # comment\n"),
            [one("a.k", "  spaced # not a comment  tail")]
        );
        assert_eq!(entries("[a]\nk = one\\\n two\n"), [one("a.k", "one two")]);
        assert_eq!(
            entries("[a]\nk = a\\tb\\\\c\\\"\n"),
            [one("a.k", "a\tb\\c\"")]
        );
        assert_eq!(entries("[a]\nk = a\t\tb  \n"), [one("a.k", "a\t\tb")]);
        assert_eq!(entries("[a]\nk =\n"), [one("a.k", "")]);
        assert_eq!(entries("[a]\r\nk = v\r\n"), [one("a.k", "v")]);
    }

    #[test]
    fn errors_keep_what_came_before() {
        for (text, line) in [
            ("[a]\nk = v\nk = \"open\n", 4),
            ("[a]\nk = v\nk = \\q\n", 3),
            ("[a\n", 2),
            ("[a]\n1k = v\n", 2),
            ("[a \"b\" ]\n", 1),
        ] {
            let parsed = parse(text.as_bytes());
            let error = parsed.error.unwrap_or_else(|| panic!("{text:?}"));
            assert_eq!(error.line, line, "{text:?}: {error}");
        }
        assert_eq!(parse(b"[a]\nk = v\nk = \\q\n").entries, [one("a.k", "v")]);
    }

    #[test]
    fn include_targets() {
        let file = Path::new("/r/.git/config");
        let home = Some(Path::new("/home/u"));
        assert_eq!(
            include_target(file, "../x.inc", home),
            Some(PathBuf::from("/r/.git/../x.inc"))
        );
        assert_eq!(
            include_target(file, "~/g", home),
            Some(PathBuf::from("/home/u/g"))
        );
        assert_eq!(
            include_target(file, "/abs", home),
            Some(PathBuf::from("/abs"))
        );
        assert_eq!(include_target(file, "~bob/g", home), None);
        assert_eq!(include_target(file, "", home), None);
    }
}
