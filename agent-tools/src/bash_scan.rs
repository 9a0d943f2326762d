//! Parsing a bash command line into what the bash tool asks for (§8.1):
//! one pattern per command, the "always" patterns from the arity table, and
//! the path arguments of file commands for the external-directory check.
//!
//! The command is parsed with tree-sitter and the bash grammar (0.25, the
//! version opencode pins). Every `command` node is visited in document
//! order, so commands inside lists, pipelines, subshells, loops and
//! command substitutions all count.
//!
//! Two documented deviations from opencode (see `docs/deviations.md`),
//! each behind a named predicate:
//!
//! - [`shell_c_script`]: the script of `bash -c '...'` / `sh -c "..."` is
//!   parsed too (one level of quotes removed), so `bash -c "rm -rf /"`
//!   also asks for `rm -rf /` (always `rm *`), not only `bash *`.
//! - [`BashScan::syntax_error`]: a command line tree-sitter cannot parse
//!   cleanly also asks for its whole text, so a parse error can never hide
//!   a command from the permission request.

use std::path::{Path, PathBuf};

use agent_permission::arity;
use tree_sitter::{Node, Parser};

use crate::external::{EXTERNAL_DIRECTORY, external_request, is_inside};
use crate::paths;
use crate::request::ToolRequest;

/// Directory-changing commands: they never produce a bash pattern (§8.1).
pub const CD_COMMANDS: &[&str] = &[
    "cd",
    "chdir",
    "popd",
    "pushd",
    "push-location",
    "set-location",
];

/// Commands whose arguments are paths checked for `external_directory`
/// (§8.1, the bash and PowerShell names).
pub const FILE_COMMANDS: &[&str] = &[
    "cd",
    "chdir",
    "popd",
    "pushd",
    "push-location",
    "set-location",
    "rm",
    "cp",
    "mv",
    "mkdir",
    "touch",
    "chmod",
    "chown",
    "cat",
    "get-content",
    "set-content",
    "add-content",
    "copy-item",
    "move-item",
    "remove-item",
    "new-item",
    "rename-item",
];

/// Shells whose `-c` script [`shell_c_script`] recognises.
pub const SHELLS: &[&str] = &["bash", "sh", "zsh", "dash", "ksh"];

/// Commands that run the command after them: `sudo bash -c '...'` is
/// looked into like `bash -c '...'`.
pub const WRAPPERS: &[&str] = &[
    "sudo", "doas", "env", "nohup", "exec", "command", "time", "nice",
];

/// How deep `bash -c "bash -c '...'"` nesting is followed.
pub const SHELL_C_MAX_DEPTH: usize = 4;

/// Node kinds whose text is a command token (§8.1).
const TOKEN_KINDS: &[&str] = &[
    "command_name",
    "word",
    "string",
    "raw_string",
    "concatenation",
];

/// What a command line asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BashScan {
    /// The bash patterns: each command's source text (with its
    /// redirections), trimmed, without duplicates, in document order.
    pub patterns: Vec<String>,
    /// The "always" patterns: arity prefix + `" *"`, without duplicates.
    pub always: Vec<String>,
    /// Path arguments of file commands (quotes stripped, cut at the first
    /// glob character, dynamic ones left out), not yet resolved: see
    /// [`external_directories`](Self::external_directories).
    pub path_args: Vec<String>,
    /// Whether tree-sitter found a syntax error; the whole command line is
    /// then one of the patterns too (a deviation, see the module docs).
    pub syntax_error: bool,
}

/// Why a command line could not be scanned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ScanError {
    /// The bash grammar did not load: a build problem of agent-tools.
    #[error(
        "the bash grammar could not be loaded into tree-sitter ({0}); rebuild agent-tools with matching tree-sitter and tree-sitter-bash versions"
    )]
    Language(String),
    /// tree-sitter returned no tree.
    #[error("the command could not be parsed; rewrite it as simpler shell commands")]
    Parse,
}

/// Scans `command` per §8.1 (plus the deviations in the module docs).
///
/// ```
/// let scan = agent_tools::scan("git commit -m x && ls | grep foo").unwrap();
/// assert_eq!(scan.patterns, ["git commit -m x", "ls", "grep foo"]);
/// assert_eq!(scan.always, ["git commit *", "ls *", "grep *"]);
/// ```
pub fn scan(command: &str) -> Result<BashScan, ScanError> {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .map_err(|error| ScanError::Language(error.to_string()))?;
    let mut out = BashScan::default();
    scan_into(&mut parser, command, 0, &mut out)?;
    Ok(out)
}

/// The index of the script token of a `bash -c SCRIPT` command, if
/// `tokens` is one: after any [`WRAPPERS`] (with their `-flags` and, for
/// `env`, `NAME=value` words), a shell of [`SHELLS`] (any directory),
/// followed by flags of which one holds `c` (`-c`, `-lc`, `-ec`); `-o`/`+o`
/// take an option name. This is the named predicate of the `bash -c`
/// deviation (opencode asks only for `bash *`).
pub fn shell_c_script<S: AsRef<str>>(tokens: &[S]) -> Option<usize> {
    let mut i = 0;
    while let Some(token) = tokens.get(i) {
        let token = token.as_ref();
        let name = token.rsplit('/').next().unwrap_or(token);
        if (i > 0 && (token.starts_with('-') || token.contains('='))) || WRAPPERS.contains(&name) {
            i += 1;
        } else {
            break;
        }
    }
    let first = tokens.get(i)?.as_ref();
    let name = first.rsplit('/').next().unwrap_or(first);
    if !SHELLS.contains(&name) {
        return None;
    }
    i += 1;
    while let Some(token) = tokens.get(i) {
        let token = token.as_ref();
        if token == "-o" || token == "+o" {
            i += 2;
            continue;
        }
        let flags = token
            .strip_prefix('-')
            .or_else(|| token.strip_prefix('+'))?;
        if flags.is_empty() || !flags.chars().all(|c| c.is_ascii_alphabetic()) {
            return None;
        }
        if token.starts_with('-') && flags.contains('c') {
            return (i + 1 < tokens.len()).then_some(i + 1);
        }
        i += 1;
    }
    None
}

/// Removes one level of shell quoting: `'...'` literally, `"..."` with
/// `\$ \` \" \\` unescaped, and backslash escapes outside quotes.
pub fn unquote(text: &str) -> String {
    #[derive(PartialEq)]
    enum State {
        Plain,
        Single,
        Double,
    }
    let mut out = String::with_capacity(text.len());
    let mut state = State::Plain;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match state {
            State::Plain => match c {
                '\'' => state = State::Single,
                '"' => state = State::Double,
                '\\' => {
                    if let Some(next) = chars.next() {
                        out.push(next);
                    }
                }
                _ => out.push(c),
            },
            State::Single => match c {
                '\'' => state = State::Plain,
                _ => out.push(c),
            },
            State::Double => match c {
                '"' => state = State::Plain,
                '\\' => match chars.peek() {
                    Some(&next) if matches!(next, '$' | '`' | '"' | '\\' | '\n') => {
                        chars.next();
                        out.push(next);
                    }
                    _ => out.push('\\'),
                },
                _ => out.push(c),
            },
        }
    }
    out
}

fn push_unique(list: &mut Vec<String>, item: String) {
    if !list.contains(&item) {
        list.push(item);
    }
}

fn scan_into(
    parser: &mut Parser,
    command: &str,
    depth: usize,
    out: &mut BashScan,
) -> Result<(), ScanError> {
    let tree = parser.parse(command, None).ok_or(ScanError::Parse)?;
    let root = tree.root_node();
    let bytes = command.as_bytes();
    let mut cursor = root.walk();
    'walk: loop {
        let node = cursor.node();
        if node.kind() == "command" {
            visit_command(parser, node, bytes, depth, out)?;
        }
        if cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                break 'walk;
            }
        }
    }
    if root.has_error() {
        out.syntax_error = true;
        let whole = command.trim();
        if !whole.is_empty() {
            push_unique(&mut out.patterns, whole.to_string());
        }
    }
    Ok(())
}

fn text<'a>(node: Node<'_>, bytes: &'a [u8]) -> &'a str {
    node.utf8_text(bytes).unwrap_or_default()
}

fn visit_command(
    parser: &mut Parser,
    node: Node<'_>,
    bytes: &[u8],
    depth: usize,
    out: &mut BashScan,
) -> Result<(), ScanError> {
    let mut walker = node.walk();
    let tokens: Vec<&str> = node
        .children(&mut walker)
        .filter(|child| TOKEN_KINDS.contains(&child.kind()))
        .map(|child| text(child, bytes))
        .collect();
    let Some(&first) = tokens.first() else {
        return Ok(());
    };
    if FILE_COMMANDS.contains(&first) {
        let chmod = first == "chmod";
        for arg in &tokens[1..] {
            if let Some(path) = path_arg(arg, chmod) {
                push_unique(&mut out.path_args, path);
            }
        }
    }
    if CD_COMMANDS.contains(&first) {
        return Ok(());
    }
    let source = match node.parent() {
        Some(parent) if parent.kind() == "redirected_statement" => text(parent, bytes),
        _ => text(node, bytes),
    };
    let source = source.trim();
    if source.is_empty() || first.is_empty() {
        // A zero-width command from tree-sitter's error recovery; the
        // syntax-error rule asks for the whole line instead.
        return Ok(());
    }
    push_unique(&mut out.patterns, source.to_string());
    push_unique(&mut out.always, arity::always_pattern(&tokens));
    if depth < SHELL_C_MAX_DEPTH
        && let Some(index) = shell_c_script(&tokens)
        && let Some(script) = tokens.get(index)
    {
        let script = unquote(script);
        scan_into(parser, &script, depth + 1, out)?;
    }
    Ok(())
}

/// A file command's argument as a path (§8.1), or `None` when it is a
/// flag, a chmod `+mode`, dynamic (`$`, backtick), or starts with a glob.
fn path_arg(arg: &str, chmod: bool) -> Option<String> {
    if arg.starts_with('-') || (chmod && arg.starts_with('+')) {
        return None;
    }
    if arg.contains('$') || arg.contains('`') {
        return None;
    }
    let stripped: String = arg.chars().filter(|c| *c != '\'' && *c != '"').collect();
    let cut = match stripped.find(['?', '*', '[']) {
        Some(0) => return None,
        Some(at) => &stripped[..at],
        None => &stripped[..],
    };
    (!cut.is_empty()).then(|| cut.to_string())
}

impl BashScan {
    /// The directories outside the project that the file commands touch
    /// (§8.1): each path argument with `~` expanded (from `$HOME`),
    /// resolved against `cwd` (the tool's starting directory; a `cd` in the
    /// command line does not change it), and when outside `directory` /
    /// `worktree`, the path itself if it is an existing directory, else its
    /// parent. In first-seen order, without duplicates.
    pub fn external_directories(
        &self,
        cwd: &Path,
        directory: &Path,
        worktree: &Path,
    ) -> Vec<PathBuf> {
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let mut dirs: Vec<PathBuf> = Vec::new();
        for arg in &self.path_args {
            let expanded = match (arg.as_str(), &home) {
                ("~", Some(home)) => home.clone(),
                (rest, Some(home)) if rest.starts_with("~/") => home.join(&rest[2..]),
                _ => PathBuf::from(arg),
            };
            let path = paths::resolve(cwd, &expanded);
            if let Some(request) = external_request(&path, path.is_dir(), directory, worktree) {
                let dir = PathBuf::from(request.metadata.parent_dir);
                if !dirs.contains(&dir) {
                    dirs.push(dir);
                }
            }
        }
        dirs
    }
}

/// The requests the bash tool makes for `command`, in order (§8.2): one
/// `external_directory` request for every directory outside the project
/// (a `workdir` outside it first, then the file commands' directories),
/// then one `bash` request; each only when non-empty. `workdir` is where
/// the command runs (default: the instance `directory`). Pure apart from
/// checking which paths are existing directories.
pub fn plan_requests(
    command: &str,
    workdir: Option<&Path>,
    directory: &Path,
    worktree: &Path,
) -> Result<Vec<ToolRequest>, ScanError> {
    let scanned = scan(command)?;
    let cwd = paths::resolve(directory, workdir.unwrap_or(directory));
    let mut dirs = Vec::new();
    if !is_inside(&cwd, directory, worktree) {
        dirs.push(cwd.clone());
    }
    for dir in scanned.external_directories(&cwd, directory, worktree) {
        if !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    let mut requests = Vec::new();
    if !dirs.is_empty() {
        let globs: Vec<String> = dirs
            .iter()
            .filter_map(|dir| external_request(dir, true, directory, worktree))
            .flat_map(|request| request.patterns)
            .collect();
        let directories: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        requests.push(ToolRequest {
            permission: EXTERNAL_DIRECTORY.to_string(),
            patterns: globs.clone(),
            always: globs.clone(),
            metadata: serde_json::json!({
                "command": command,
                "directories": directories,
                "patterns": globs,
            }),
        });
    }
    if !scanned.patterns.is_empty() {
        requests.push(ToolRequest {
            permission: "bash".to_string(),
            patterns: scanned.patterns,
            always: scanned.always,
            metadata: serde_json::json!({ "command": command }),
        });
    }
    Ok(requests)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn substitution_outer_first() {
        let scan = scan("echo $(cat \"/tmp/x\")").unwrap();
        assert_eq!(scan.patterns, ["echo $(cat \"/tmp/x\")", "cat \"/tmp/x\""]);
        assert_eq!(scan.path_args, ["/tmp/x"]);
    }

    #[test]
    fn shell_c_is_parsed() {
        let scan = scan("bash -c \"rm -rf /\"").unwrap();
        assert_eq!(scan.patterns, ["bash -c \"rm -rf /\"", "rm -rf /"]);
        assert_eq!(scan.always, ["bash *", "rm *"]);
        assert_eq!(scan.path_args, ["/"]);
        let scan = scan_nested();
        assert!(scan.patterns.contains(&"git push".to_string()));
    }

    fn scan_nested() -> BashScan {
        scan("sh -lc 'bash -c \"git push\"'").unwrap()
    }

    #[test]
    fn shell_c_predicate() {
        assert_eq!(shell_c_script(&["bash", "-c", "x"]), Some(2));
        assert_eq!(shell_c_script(&["/bin/sh", "-e", "-c", "x"]), Some(3));
        assert_eq!(
            shell_c_script(&["bash", "-o", "pipefail", "-c", "x"]),
            Some(4)
        );
        assert_eq!(shell_c_script(&["bash", "script.sh"]), None);
        assert_eq!(shell_c_script(&["bash", "-c"]), None);
        assert_eq!(shell_c_script(&["python", "-c", "x"]), None);
        assert_eq!(shell_c_script(&["sudo", "-E", "bash", "-c", "x"]), Some(4));
        assert_eq!(
            shell_c_script(&["env", "A=1", "/bin/sh", "-c", "x"]),
            Some(4)
        );
        assert_eq!(
            shell_c_script(&["sudo", "-u", "root", "bash", "-c", "x"]),
            None
        );
        assert_eq!(shell_c_script(&["sudo"]), None);
    }

    #[test]
    fn path_args() {
        let scan =
            scan("rm -rf ~/x '/tmp/a b' /var/log/*.log *.txt $HOME/y; chmod +x /opt/z").unwrap();
        assert_eq!(scan.path_args, ["~/x", "/tmp/a b", "/var/log/", "/opt/z"]);
    }

    #[test]
    fn external_dirs() {
        let scan = scan("cd /tmp && rm foo ../../outside/f").unwrap();
        let dirs = scan.external_directories(
            Path::new("/nonexistent/proj/pkg"),
            Path::new("/nonexistent/proj/pkg"),
            Path::new("/nonexistent/proj"),
        );
        assert_eq!(
            dirs,
            [PathBuf::from("/tmp"), PathBuf::from("/nonexistent/outside")]
        );
    }

    #[test]
    fn syntax_error_asks_for_everything() {
        let scan = scan("ls )(").unwrap();
        assert!(scan.syntax_error);
        assert!(scan.patterns.contains(&"ls )(".to_string()));
    }

    #[test]
    fn unquoting() {
        assert_eq!(unquote(r#"'a b'"#), "a b");
        assert_eq!(unquote(r#""a \"b\" \$x \n""#), r#"a "b" $x \n"#);
        assert_eq!(unquote(r"a\ b"), "a b");
    }
}
