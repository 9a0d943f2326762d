//! Parsing a bash command line into what the bash tool asks for (§8.1),
//! judged on what bash will execute rather than on how it is spelled.
//!
//! The line is parsed with tree-sitter and the bash grammar (0.25, the
//! version opencode pins). Every `command` node is visited in document
//! order, so commands inside lists, pipelines, subshells, loops, functions
//! and substitutions all count. For each command the scan asks for:
//!
//! - opencode's pattern: the command's text (with its redirections) and the
//!   "always" pattern from the arity table;
//! - the command as bash runs it: words after quote removal, escapes and
//!   brace expansion, assignments dropped, joined by single spaces
//!   (`'r'm<TAB>-f x` → `rm -f x`), and with the program's base name
//!   (`/bin/rm -f x` → `rm -f x`);
//! - every command a wrapper runs (`sudo`, `env`, `command`, `builtin`,
//!   `exec`, `nohup`, `time`, `timeout`, `nice`, `xargs`, `find -exec` …),
//!   and the commands of scripts given as text: `bash -c` / `sh -c` (any
//!   options), `eval`, `trap`, heredocs and here-strings fed to a shell,
//!   backticks nested in backticks.
//!
//! What cannot be seen through — a syntax error, a program or script only
//! known at run time (`$X -f`, `eval "$S"`, `curl … | sh`), text bash
//! evaluates as arithmetic or as a variable name at run time
//! (`X='a[$(rm x)]'; (( X ))`, see the `shell_eval` module), a command
//! `xargs` or `find -exec` completes into one of those — is listed in
//! [`BashScan::opaque`]; the bash tool then also asks
//! [`BASH_OPAQUE`] for the whole line, a permission no `bash` rule
//! allows. On a syntax error every command that can be recovered is a
//! pattern too (tree-sitter's recovery plus a lexical split of the line).
//!
//! Paths are checked on what the file system will use: the arguments of
//! file commands, of `cd`/`pushd`, `tee` and `ln`, redirection targets, and
//! any absolute, `~` or `..` argument of any command; words with variables
//! or `~user` count as outside the project.
//!
//! Each difference from opencode is a documented deviation (see
//! `docs/deviations.md` and `docs/security.md`) with a named predicate:
//! [`BashScan::seen_through`], [`shell_c_script`], [`BashScan::syntax_error`].

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use agentgate_permission::arity;
use tree_sitter::{Node, Parser};

use crate::files::external::{EXTERNAL_DIRECTORY, external_request, is_inside};
use crate::files::paths;
use crate::files::request::ToolRequest;
use crate::shell::shell_backticks::{self, Backticks};
use crate::shell::shell_command::{self, Analysis, base_name, join};
use crate::shell::shell_eval::{EvalFacts, EvalWalk, assignment_parts};
use crate::shell::shell_source;
use crate::shell::shell_word::{self, Token, Word, for_tree_sitter};

pub use crate::shell::shell_command::{CD_COMMANDS, FILE_COMMANDS, SHELLS, WRAPPERS};
pub use crate::shell::shell_word::{MAX_BRACE_WORDS, Word as ShellWord, words_of};

/// The permission asked, with the whole command line as its pattern, when
/// part of the line cannot be seen through (see [`BashScan::opaque`]).
pub const BASH_OPAQUE: &str = "bash_opaque";

/// Node kinds whose text bash 5.2 prints and parses again before running
/// it (see `Scanner::coproc_in_substitution`); backticks share the kind and
/// are judged alike, which asks for more, never less.
const SUBSTITUTION_KINDS: &[&str] = &["command_substitution", "process_substitution"];

/// Longest command line scanned (128 KiB); longer ones are refused.
pub const MAX_COMMAND_BYTES: usize = 128 * 1024;

/// Deepest nesting of command substitutions, subshells and scripts
/// (`bash -c`, `eval` …) scanned; deeper lines are refused.
pub const MAX_NESTING: usize = 32;

/// Longest line whose syntax errors tree-sitter recovers from (4 KiB);
/// a longer line with an error is split word by word instead (its
/// recovery can take minutes), and is opaque either way.
pub const MAX_RECOVERED_BYTES: usize = 4 * 1024;

/// Most parser work one command line may take, nested scripts included, in
/// hundreds of tree-sitter operations (250, so 25,000 operations: about
/// 1,200 simple commands `echo 1` in one line); a line that needs more is
/// refused as too complex. Work, not time: the same line gets the same
/// answer on every machine, and the bound holds on a slow one. Ordinary
/// lines take none to a few units (a 120 KiB heredoc or quoted script takes
/// none); what it refuses are lines of thousands of commands or nestings,
/// which tree-sitter parses at 1 to 3 MB/s, so that every line scans in
/// tens of milliseconds at most (the `bash_scan` bench).
pub const MAX_PARSE_WORK: usize = 250;

/// Most bytes of patterns one command line may produce; beyond it the line
/// is refused (so nested substitutions cannot make the scan quadratic).
pub const MAX_PATTERN_BYTES: usize = 1024 * 1024;

/// Most [`BashScan::arguments`] kept for one command line.
pub const MAX_ARGUMENTS: usize = 4096;

/// Paths under `/dev` every command may use without an external-directory
/// check.
pub const SAFE_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/stdin",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/tty",
    "/dev/zero",
    "/dev/random",
    "/dev/urandom",
];

/// Node kinds whose text is a command token (§8.1).
const TOKEN_KINDS: &[&str] = &[
    "command_name",
    "word",
    "string",
    "raw_string",
    "concatenation",
];

/// Child kinds of a `command` node that are not its words.
const NOT_WORDS: &[&str] = &[
    "variable_assignment",
    "file_redirect",
    "heredoc_redirect",
    "herestring_redirect",
    "comment",
];

/// Node kinds that nest a command line inside another.
const NESTING_KINDS: &[&str] = &["command_substitution", "process_substitution", "subshell"];

/// What a command line asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BashScan {
    /// The bash patterns, without duplicates, in document order: for each
    /// command opencode's text, then the command as bash runs it.
    pub patterns: Vec<String>,
    /// The "always" patterns: arity prefix + `" *"`, without duplicates;
    /// never one whose prefix holds a `*` or `?` of the command.
    pub always: Vec<String>,
    /// Literal paths the commands use (quotes removed, cut at the first
    /// glob character), not yet resolved: see
    /// [`external_directories`](Self::external_directories).
    pub path_args: Vec<String>,
    /// Paths only known at run time (`$D`, `~bob/x`): always outside.
    pub dynamic_paths: Vec<String>,
    /// Every literal argument word of every command that runs (after the
    /// program name, wrappers and scripts seen through), every literal
    /// redirection target and the words of here-strings: quotes removed,
    /// glob characters kept, without duplicates, in first-seen order, at
    /// most [`MAX_ARGUMENTS`] (beyond it the line is opaque). Words only known at run time are left out
    /// (see [`dynamic_paths`](Self::dynamic_paths)). The bash tool judges
    /// each one that names a file against the `read` rules.
    pub arguments: Vec<String>,
    /// What could not be seen through, one reason each; non-empty means
    /// the tool also asks [`BASH_OPAQUE`].
    pub opaque: Vec<String>,
    /// Whether tree-sitter found a syntax error; the whole command line is
    /// then one of the patterns too.
    pub syntax_error: bool,
    /// Whether a command as bash runs it differs from its text (so the
    /// scan adds patterns opencode does not): a deviation predicate.
    pub seen_through: bool,
}

/// Why a command line could not be scanned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ScanError {
    /// The bash grammar did not load: a build problem of agentgate-tools.
    #[error(
        "the bash grammar could not be loaded into tree-sitter ({0}); rebuild agentgate-tools with matching tree-sitter and tree-sitter-bash versions"
    )]
    Language(String),
    /// tree-sitter returned no tree.
    #[error("the command could not be parsed; rewrite it as simpler shell commands")]
    Parse,
    /// The line is longer than [`MAX_COMMAND_BYTES`].
    #[error(
        "the command is {0} bytes long, more than the {MAX_COMMAND_BYTES} bytes that can be checked; write long content with the write tool and run shorter commands"
    )]
    TooLong(usize),
    /// Substitutions or scripts nest deeper than [`MAX_NESTING`], the
    /// patterns would exceed [`MAX_PATTERN_BYTES`], or the parse needs
    /// more than [`MAX_PARSE_WORK`].
    #[error(
        "the command is too large or nests substitutions or scripts too deeply to be checked (at most {MAX_NESTING} levels, {MAX_PATTERN_BYTES} bytes of patterns, about a thousand commands); split it into simpler commands, and write long content with the write tool"
    )]
    TooComplex,
}

/// Scans `command` (see the module docs).
///
/// ```
/// let scan = agentgate_tools::bash_scan::scan("git commit -m x && ls | grep foo").unwrap();
/// assert_eq!(scan.patterns, ["git commit -m x", "ls", "grep foo"]);
/// assert_eq!(scan.always, ["git commit *", "ls *", "grep *"]);
///
/// let scan = agentgate_tools::bash_scan::scan("FOO=1 sudo '/bin/rm'\t-f x").unwrap();
/// assert!(scan.patterns.contains(&"rm -f x".to_string()));
/// assert!(scan.always.contains(&"rm *".to_string()));
/// ```
pub fn scan(command: &str) -> Result<BashScan, ScanError> {
    if command.len() > MAX_COMMAND_BYTES {
        return Err(ScanError::TooLong(command.len()));
    }
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .map_err(|error| ScanError::Language(error.to_string()))?;
    let mut scanner = Scanner {
        parser,
        out: BashScan::default(),
        seen_patterns: HashSet::new(),
        seen_arguments: HashSet::new(),
        budget: MAX_PATTERN_BYTES,
        parse_work: MAX_PARSE_WORK,
        offered: 0,
        eval: EvalFacts::default(),
    };
    scanner.script(command, 0)?;
    for reason in scanner.eval.reasons() {
        scanner.opaque(reason);
    }
    Ok(scanner.out)
}

/// The index of the script token of a `bash -c SCRIPT` command, if
/// `tokens` is one: after any [`WRAPPERS`] (with their `-flags` and, for
/// `env`, `NAME=value` words), a shell of [`SHELLS`] (any directory),
/// followed by options of which one holds `c` (`-c`, `-lc`, `--norc -c`);
/// `-o`/`+o`/`-O` take an option name, `--` ends the options. This is the
/// named predicate of the `bash -c` deviation (opencode asks only for
/// `bash *`).
pub fn shell_c_script<S: AsRef<str>>(tokens: &[S]) -> Option<usize> {
    let mut i = 0;
    while let Some(token) = tokens.get(i) {
        let token = token.as_ref();
        let name = base_name(token);
        if (i > 0 && (token.starts_with('-') || token.contains('='))) || WRAPPERS.contains(&name) {
            i += 1;
        } else {
            break;
        }
    }
    let first = tokens.get(i)?.as_ref();
    if !SHELLS.contains(&base_name(first)) {
        return None;
    }
    i += 1;
    let mut command_string = false;
    while let Some(token) = tokens.get(i) {
        let token = token.as_ref();
        if token == "--" {
            i += 1;
            break;
        }
        if token.starts_with("--") {
            i += 1;
            continue;
        }
        let Some(flags) = token.strip_prefix('-').or_else(|| token.strip_prefix('+')) else {
            break;
        };
        if flags.is_empty() || !flags.chars().all(|c| c.is_ascii_alphabetic()) {
            return None;
        }
        if token.starts_with('-') && flags.contains('c') {
            command_string = true;
        }
        i += if flags.contains(['o', 'O']) { 2 } else { 1 };
    }
    (command_string && i < tokens.len()).then_some(i)
}

/// The variables bash gives a meaning to that the scan classifies, with
/// whether assigning one is understood (`true`: inert, or `PATH` judged by
/// its value) or makes the line opaque (`false`). Every variable a clean
/// bash defines (`compgen -v`) and the manual names is among them (a test
/// checks it against the installed bash); see docs/security.md.
pub fn bash_variables() -> Vec<(&'static str, bool)> {
    crate::shell::shell_settings::VARIABLES
        .iter()
        .map(|variable| {
            let understood = !matches!(
                variable.meaning,
                crate::shell::shell_settings::Meaning::Opaque(_)
            );
            (variable.name, understood)
        })
        .collect()
}

/// Removes one level of shell quoting: `'...'` literally, `"..."` with
/// `\$ \` \" \\` unescaped, and backslash escapes outside quotes (the
/// words of [`words_of`] joined by spaces).
pub fn unquote(text: &str) -> String {
    let words: Vec<Word> = words_of(text);
    join(&words)
}

struct Scanner {
    parser: Parser,
    out: BashScan,
    seen_patterns: HashSet<String>,
    /// The words already in [`BashScan::arguments`].
    seen_arguments: HashSet<String>,
    budget: usize,
    /// Parser work left for this line and its nested scripts
    /// ([`MAX_PARSE_WORK`]).
    parse_work: usize,
    /// How many patterns were offered (also ones already listed): tells
    /// whether a redirected statement produced any.
    offered: usize,
    /// Where the line evaluates run-time text as code (arithmetic,
    /// variable names): judged once the whole line is scanned.
    eval: EvalFacts,
}

fn push_unique(list: &mut Vec<String>, item: String) {
    if !list.contains(&item) {
        list.push(item);
    }
}

fn text<'a>(node: Node<'_>, source: &'a str) -> &'a str {
    source.get(node.byte_range()).unwrap_or_default()
}

impl Scanner {
    /// Adds a bash pattern; fails when the pattern budget is spent.
    fn pattern(&mut self, pattern: &str) -> Result<(), ScanError> {
        self.offered += 1;
        let pattern = pattern.trim();
        if pattern.is_empty() || self.seen_patterns.contains(pattern) {
            return Ok(());
        }
        self.budget = self
            .budget
            .checked_sub(pattern.len())
            .ok_or(ScanError::TooComplex)?;
        self.seen_patterns.insert(pattern.to_string());
        self.out.patterns.push(pattern.to_string());
        Ok(())
    }

    /// Adds an "always" pattern for `tokens`, unless its prefix holds a
    /// glob character (approving it would approve other commands).
    fn always<S: AsRef<str>>(&mut self, tokens: &[S]) {
        if tokens.is_empty() {
            return;
        }
        let prefix = arity::prefix(tokens);
        if prefix.iter().any(|t| t.as_ref().contains(['*', '?'])) {
            return;
        }
        push_unique(&mut self.out.always, arity::always_pattern(tokens));
    }

    /// Adds a literal argument word (see [`BashScan::arguments`]).
    /// Beyond [`MAX_ARGUMENTS`] the line is opaque: an argument that is
    /// not listed could not be held against the `read` rules.
    fn argument(&mut self, word: &Word) {
        if word.dynamic || word.text.is_empty() || self.seen_arguments.contains(&word.text) {
            return;
        }
        if self.out.arguments.len() < MAX_ARGUMENTS {
            self.seen_arguments.insert(word.text.clone());
            self.out.arguments.push(word.text.clone());
        } else {
            self.opaque(format!(
                "more than {MAX_ARGUMENTS} different arguments, too many to check against the read rules"
            ));
        }
    }

    fn opaque(&mut self, reason: impl Into<String>) {
        push_unique(&mut self.out.opaque, reason.into());
    }

    fn path(&mut self, word: &Word) {
        if word.dynamic {
            push_unique(&mut self.out.dynamic_paths, word.text.clone());
            return;
        }
        let cut = match word.glob {
            Some(0) => return,
            Some(at) => &word.text[..at],
            None => &word.text[..],
        };
        if !cut.is_empty() && !SAFE_DEVICES.contains(&cut) && !cut.starts_with("/dev/fd/") {
            push_unique(&mut self.out.path_args, cut.to_string());
        }
    }

    /// Scans one command line (the top level or a script inside it).
    fn script(&mut self, script: &str, depth: usize) -> Result<(), ScanError> {
        if depth > MAX_NESTING {
            return Err(ScanError::TooComplex);
        }
        self.parsed(script, depth)?;
        self.backtick_gaps(script, depth)
    }

    /// Backtick substitutions as bash delimits them (`shell_backticks`):
    /// tree-sitter's parse may cut across them, so each gap between two
    /// backticks is scanned again as a command line of its own (a gap of
    /// plain text between two substitutions adds a pattern too: more asks,
    /// never fewer), and a line whose gaps are not all simple commands is
    /// opaque.
    fn backtick_gaps(&mut self, script: &str, depth: usize) -> Result<(), ScanError> {
        match shell_backticks::backticks(script) {
            Backticks::None => Ok(()),
            Backticks::Opaque(reason) => {
                self.opaque(reason);
                Ok(())
            }
            Backticks::Simple(gaps) => {
                for gap in gaps {
                    if !gap.trim().is_empty() {
                        self.parsed(gap, depth + 1)?;
                    }
                }
                Ok(())
            }
        }
    }

    /// Scans one command line through tree-sitter's parse.
    fn parsed(&mut self, script: &str, depth: usize) -> Result<(), ScanError> {
        if depth > MAX_NESTING {
            return Err(ScanError::TooComplex);
        }
        // The bytes bash reads, never rewritten: where tree-sitter's parse
        // may differ from bash's, the line is opaque (`shell_source`).
        let source = script;
        let parse_text = for_tree_sitter(source);
        let bytes = parse_text.as_bytes();
        // tree-sitter's error recovery is quadratic on some long lines
        // (minutes for 128 KiB of `<<A`): a long line is not recovered
        // but split word by word, as every line with a syntax error also is.
        let long = bytes.len() > MAX_RECOVERED_BYTES;
        // tree-sitter calls back every 100 operations: each call is one
        // unit of the line's work budget.
        let work_left = self.parse_work;
        let mut spent = 0usize;
        let mut give_up = |state: &tree_sitter::ParseState| {
            spent += 1;
            spent > work_left || (long && state.has_error())
        };
        let options = tree_sitter::ParseOptions::new().progress_callback(&mut give_up);
        let parsed = self.parser.parse_with_options(
            &mut |at, _| bytes.get(at..).unwrap_or_default(),
            None,
            Some(options),
        );
        self.parse_work = work_left.saturating_sub(spent);
        let Some(tree) = parsed else {
            // A cancelled parse resumes on the next call unless reset.
            self.parser.reset();
            if spent > work_left {
                return Err(ScanError::TooComplex);
            }
            if !long {
                return Err(ScanError::Parse);
            }
            // The word-by-word split does not track nesting: count it by
            // parentheses and backticks, as deep as the tree walk allows.
            let mut nesting = 0usize;
            let mut deepest = 0usize;
            for byte in bytes {
                match byte {
                    b'(' | b'`' => nesting += 1,
                    b')' => nesting = nesting.saturating_sub(1),
                    _ => {}
                }
                deepest = deepest.max(nesting);
            }
            if depth + deepest > MAX_NESTING {
                return Err(ScanError::TooComplex);
            }
            self.out.syntax_error = true;
            self.opaque("a long command line with a syntax error");
            self.pattern(source)?;
            return self.lexical(source, depth);
        };
        let root = tree.root_node();
        for reason in shell_source::unfaithful(root, source) {
            self.opaque(reason);
        }
        let mut cursor = root.walk();
        // The current node's ancestors, each with its nesting depth
        // (tree-sitter's `Node::parent` searches down from the root:
        // quadratic in deep trees).
        let mut ancestors: Vec<(Node<'_>, usize)> = Vec::new();
        let mut eval_walk = EvalWalk::default();
        // Redirected statements being walked: where each ends, how many
        // patterns had been offered when it started, and its text.
        let mut redirected: Vec<(usize, usize, &str)> = Vec::new();
        // How many `$(…)` / `<(…)` / `>(…)` the current node is inside.
        let mut substitutions = 0usize;
        'walk: loop {
            let node = cursor.node();
            self.close_redirected(&mut redirected, node.start_byte())?;
            if node.kind() == "redirected_statement" && has_file_redirect(node) {
                redirected.push((node.end_byte(), self.offered, text(node, source)));
            }
            self.eval.visit(node, source, &mut eval_walk);
            let parent = ancestors.last().copied();
            let parent_depth = parent.map_or(depth, |(_, nested)| nested);
            let here = parent_depth + usize::from(NESTING_KINDS.contains(&node.kind()));
            if here > MAX_NESTING {
                return Err(ScanError::TooComplex);
            }
            match node.kind() {
                "command" => {
                    if substitutions > 0 {
                        self.coproc_in_substitution(node, source);
                    }
                    self.command(node, parent.map(|(node, _)| node), source, here)?;
                }
                "redirected_statement" if node.child_by_field_name("body").is_none() => {
                    self.redirect_only(node, source)?;
                }
                "file_redirect" => self.redirect(node, source),
                "herestring_redirect" => self.herestring(node, source),
                "command_substitution" => self.backticks(node, source, here)?,
                _ => {}
            }
            if cursor.goto_first_child() {
                substitutions += usize::from(SUBSTITUTION_KINDS.contains(&node.kind()));
                ancestors.push((node, here));
                continue;
            }
            loop {
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() {
                    break 'walk;
                }
                if let Some((left, _)) = ancestors.pop() {
                    substitutions -= usize::from(SUBSTITUTION_KINDS.contains(&left.kind()));
                }
            }
        }
        self.close_redirected(&mut redirected, usize::MAX)?;
        if root.has_error() {
            self.out.syntax_error = true;
            self.opaque("the command line has a syntax error");
            self.pattern(source)?;
            self.lexical(source, depth)?;
        }
        Ok(())
    }

    /// An unnamed `coproc` inside `$(…)` or a process substitution: bash
    /// 5.2 prints the substitution's commands and reads that text again,
    /// and the printed form names the coproc `COPROC`, so `$(coproc m1 a)`
    /// runs a program named `COPROC` with the arguments `m1 a` (found by
    /// the differential fuzz run). What runs is not the command the scan
    /// sees: opaque.
    fn coproc_in_substitution(&mut self, node: Node<'_>, source: &str) {
        let first = node
            .child_by_field_name("name")
            .map(|name| text(name, source).trim());
        if first.is_some_and(|name| words_of(name).first().is_some_and(|w| w.text == "coproc")) {
            self.opaque(
                "an unnamed `coproc` inside `$(…)` or `<(…)`, which bash reads again as a program named COPROC",
            );
        }
    }

    /// A command node: opencode's pattern, then what bash runs.
    fn command(
        &mut self,
        node: Node<'_>,
        parent: Option<Node<'_>>,
        source: &str,
        depth: usize,
    ) -> Result<(), ScanError> {
        let mut walker = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut walker).collect();
        let tokens: Vec<&str> = children
            .iter()
            .filter(|child| TOKEN_KINDS.contains(&child.kind()))
            .map(|child| text(*child, source))
            .collect();
        let raw_source = match parent {
            Some(parent) if parent.kind() == "redirected_statement" => text(parent, source),
            _ => text(node, source),
        };
        let raw_source = raw_source.trim();
        // opencode's pattern (§8.1).
        if let Some(first) = tokens.first()
            && !first.is_empty()
            && !CD_COMMANDS.contains(first)
        {
            self.pattern(raw_source)?;
            self.always(&tokens);
        }
        // bash's words are what blanks separate: nodes tree-sitter leaves
        // side by side with nothing between them (`""\-rf`, `a""\;`) are
        // one word (a fuzz find: `rm ""\-rf x` was `rm  -rf x`, which a
        // deny rule for `rm -rf *` does not match).
        let mut spans: Vec<(usize, usize)> = Vec::new();
        for child in children
            .iter()
            .filter(|child| child.is_named() && !NOT_WORDS.contains(&child.kind()))
        {
            match spans.last_mut() {
                Some((_, end)) if *end == child.start_byte() => *end = child.end_byte(),
                _ => spans.push((child.start_byte(), child.end_byte())),
            }
        }
        // Words bash reads as assignments before the program that
        // tree-sitter took for the program (`_+=v a` runs `a`: a fuzz find).
        let leading = spans
            .iter()
            .take_while(|&&(start, end)| {
                let raw = source.get(start..end).unwrap_or_default();
                match raw_assignment(raw) {
                    Some((name, value)) => {
                        self.eval.assignment_word(name, value);
                        true
                    }
                    None => false,
                }
            })
            .count();
        let words: Vec<Word> = spans[leading..]
            .iter()
            .flat_map(|&(start, end)| words_of(source.get(start..end).unwrap_or_default()))
            .collect();
        if words.is_empty() || words[0].text.is_empty() && words.len() == 1 {
            if children.iter().any(|c| c.kind() == "file_redirect") {
                self.pattern(raw_source)?;
            }
            return Ok(());
        }
        let analysis = shell_command::analyze(&words);
        self.analysis(&analysis, raw_source, depth)?;
        if analysis.reads_stdin {
            let input = stdin_script(node, parent, source);
            match input {
                Some(script) => self.script(&script, depth + 1)?,
                None => self.opaque(format!(
                    "a shell reading commands from its input: `{}`",
                    join(&words)
                )),
            }
        }
        Ok(())
    }

    /// Adds the patterns, paths, scripts and reasons of an analysis.
    fn analysis(
        &mut self,
        analysis: &Analysis,
        raw_source: &str,
        depth: usize,
    ) -> Result<(), ScanError> {
        for command in &analysis.commands {
            self.eval.command(command);
            let Some(first) = command.first() else {
                continue;
            };
            for word in command.iter().skip(1) {
                self.argument(word);
            }
            let name = base_name(&first.text);
            if CD_COMMANDS.contains(&name) {
                continue;
            }
            let texts: Vec<&str> = command.iter().map(|w| w.text.as_str()).collect();
            let joined = texts.join(" ");
            if joined != raw_source {
                self.out.seen_through = true;
            }
            self.pattern(&joined)?;
            self.always(&texts);
            if name != first.text {
                self.out.seen_through = true;
                let mut based = texts.clone();
                based[0] = name;
                self.pattern(&based.join(" "))?;
                self.always(&based);
            }
        }
        for word in &analysis.paths {
            self.path(word);
        }
        for reason in &analysis.opaque {
            self.opaque(reason.clone());
        }
        for script in &analysis.scripts {
            self.script(script, depth + 1)?;
        }
        Ok(())
    }

    /// Closes the redirected statements that end at or before `at`: one
    /// whose walk offered no pattern (`A=1 > f`, `cd . > f`, `[[ x ]] > f`,
    /// `{ A=1; } > f` create or truncate `f`) is a pattern itself.
    fn close_redirected(
        &mut self,
        open: &mut Vec<(usize, usize, &str)>,
        at: usize,
    ) -> Result<(), ScanError> {
        while let Some(&(end, offered, statement)) = open.last() {
            if end > at {
                break;
            }
            open.pop();
            if self.offered == offered {
                self.pattern(statement)?;
            }
        }
        Ok(())
    }

    /// A statement made only of redirections (`> file`): it has effects,
    /// so it is a pattern too.
    fn redirect_only(&mut self, node: Node<'_>, source: &str) -> Result<(), ScanError> {
        self.pattern(text(node, source))
    }

    /// The target of a file redirection is a path (not `>&2`, `<&-`).
    fn redirect(&mut self, node: Node<'_>, source: &str) {
        let mut walker = node.walk();
        let mut duplicate = false;
        for child in node.children(&mut walker) {
            if !child.is_named() {
                duplicate = matches!(child.kind(), ">&" | "<&" | ">&-" | "<&-");
                continue;
            }
            if child.kind() == "file_descriptor" {
                continue;
            }
            let target = text(child, source);
            if duplicate && (target == "-" || target.chars().all(|c| c.is_ascii_digit())) {
                continue;
            }
            for word in words_of(target) {
                self.argument(&word);
                self.path(&word);
            }
        }
    }

    /// The words of a here-string are arguments too: `xargs cat <<< .env`
    /// reads the file its input names.
    fn herestring(&mut self, node: Node<'_>, source: &str) {
        let mut walker = node.walk();
        for child in node.named_children(&mut walker) {
            for word in words_of(text(child, source)) {
                for part in word.text.split_whitespace() {
                    self.argument(&Word {
                        text: part.to_string(),
                        ..word.clone()
                    });
                }
            }
        }
    }

    /// Backticks inside backticks (`` `echo \`rm x\`` ``) are a command
    /// substitution for bash once the outer one's escapes are removed;
    /// tree-sitter sees only words, so the inner text is scanned again.
    fn backticks(&mut self, node: Node<'_>, source: &str, depth: usize) -> Result<(), ScanError> {
        let whole = text(node, source);
        let Some(inner) = whole
            .strip_prefix('`')
            .map(|rest| rest.strip_suffix('`').unwrap_or(rest))
        else {
            return Ok(());
        };
        if !inner.contains("\\`") {
            return Ok(());
        }
        let mut unescaped = String::with_capacity(inner.len());
        let mut chars = inner.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '\\'
                && let Some(&next) = chars.peek()
                && matches!(next, '`' | '\\' | '$')
            {
                unescaped.push(next);
                chars.next();
                continue;
            }
            unescaped.push(c);
        }
        self.script(&unescaped, depth + 1)
    }

    /// After a syntax error: every simple command of a lexical split of
    /// the line is a pattern too, and redirection targets are paths.
    fn lexical(&mut self, source: &str, depth: usize) -> Result<(), ScanError> {
        for tokens in shell_word::split_simple_commands(source) {
            let mut words = Vec::new();
            let mut redirect_next = false;
            let mut assignments = true;
            for token in tokens {
                match token {
                    Token::Redirect(op) => {
                        redirect_next = !op.contains("<<");
                    }
                    Token::Word(raw) => {
                        let parsed = words_of(&raw);
                        if redirect_next {
                            redirect_next = false;
                            for word in &parsed {
                                self.path(word);
                            }
                            continue;
                        }
                        if assignments && assignment_parts(&raw).is_some() {
                            continue;
                        }
                        assignments = false;
                        words.extend(parsed);
                    }
                }
            }
            if words.is_empty() {
                continue;
            }
            let analysis = shell_command::analyze(&words);
            self.analysis(&analysis, "", depth)?;
        }
        Ok(())
    }
}

/// `NAME=value`, `NAME+=value` or `NAME[i]=value` as written (the name
/// unquoted, as bash requires of an assignment): the name and the value.
fn raw_assignment(raw: &str) -> Option<(&str, &str)> {
    let name_end = raw
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '_'))
        .map_or(raw.len(), |(at, _)| at);
    let name = &raw[..name_end];
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let mut rest = &raw[name_end..];
    if rest.starts_with('[') {
        rest = &rest[rest.find(']')? + 1..];
    }
    let value = rest.strip_prefix("+=").or_else(|| rest.strip_prefix('='))?;
    Some((name, value))
}

/// Whether a node has a file redirection (`>`, `>>`, `<`, `&>` …) among its
/// children.
fn has_file_redirect(node: Node<'_>) -> bool {
    let mut cursor = node.walk();
    node.children(&mut cursor)
        .any(|child| child.kind() == "file_redirect")
}

/// The script a shell command reads from a heredoc or here-string, if it
/// has one.
fn stdin_script(node: Node<'_>, parent: Option<Node<'_>>, source: &str) -> Option<String> {
    let mut holders = vec![node];
    if let Some(parent) = parent
        && parent.kind() == "redirected_statement"
    {
        holders.push(parent);
    }
    for holder in holders {
        let mut walker = holder.walk();
        for child in holder.children(&mut walker) {
            match child.kind() {
                "heredoc_redirect" => {
                    let mut inner = child.walk();
                    let body: String = child
                        .children(&mut inner)
                        .filter(|c| c.kind() == "heredoc_body")
                        .map(|c| text(c, source))
                        .collect();
                    return Some(body);
                }
                "herestring_redirect" => {
                    let mut inner = child.walk();
                    let words: Vec<Word> = child
                        .named_children(&mut inner)
                        .flat_map(|c| words_of(text(c, source)))
                        .collect();
                    return Some(join(&words));
                }
                _ => {}
            }
        }
    }
    None
}

impl BashScan {
    /// The directories outside the project that the commands touch
    /// (§8.1, extended): each literal path argument with `~` expanded
    /// (from `$HOME`), resolved against `cwd` (the tool's starting
    /// directory; a `cd` in the command line does not change it), checked
    /// both as written and with symlinks resolved; when outside
    /// `directory` / `worktree`, the path itself if it is an existing
    /// directory, else its parent. In first-seen order, without duplicates.
    /// Dynamic paths are not included: see [`dynamic_paths`](Self::dynamic_paths).
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
            let lexical = paths::resolve(cwd, &expanded);
            // `dir/` names a folder even before it exists.
            let folder = arg.ends_with('/');
            for view in paths::views(&lexical, directory, worktree) {
                let is_dir = folder || view.target.is_dir();
                let found = external_request(&view.target, is_dir, &view.directory, &view.worktree);
                if let Some(request) = found {
                    let dir = PathBuf::from(request.metadata.parent_dir);
                    if !dirs.contains(&dir) {
                        dirs.push(dir);
                    }
                }
            }
        }
        dirs
    }
}

/// The requests the bash tool makes for `command`, in order (§8.2): one
/// `external_directory` request for every directory outside the project
/// (a `workdir` outside it first, then the paths the commands use, then
/// the paths only known at run time, as written), then one `bash` request,
/// then — when part of the line cannot be seen through — one
/// [`BASH_OPAQUE`] request for the whole line; each only when non-empty.
/// `workdir` is where the command runs (default: the instance
/// `directory`). Pure apart from looking at the file system (which paths
/// are directories, where symlinks lead).
pub fn plan_requests(
    command: &str,
    workdir: Option<&Path>,
    directory: &Path,
    worktree: &Path,
) -> Result<Vec<ToolRequest>, ScanError> {
    let scanned = scan(command)?;
    Ok(plan_requests_scanned(
        &scanned, command, workdir, directory, worktree,
    ))
}

/// [`plan_requests`] for a `command` already scanned (`scanned`), so a
/// caller that needs the scan too parses the line once.
pub(crate) fn plan_requests_scanned(
    scanned: &BashScan,
    command: &str,
    workdir: Option<&Path>,
    directory: &Path,
    worktree: &Path,
) -> Vec<ToolRequest> {
    let cwd = paths::resolve(directory, workdir.unwrap_or(directory));
    let mut dirs = Vec::new();
    for view in paths::views(&cwd, directory, worktree) {
        if !is_inside(&view.target, &view.directory, &view.worktree) && !dirs.contains(&view.target)
        {
            dirs.push(view.target);
        }
    }
    for dir in scanned.external_directories(&cwd, directory, worktree) {
        if !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    let mut requests = Vec::new();
    if !dirs.is_empty() || !scanned.dynamic_paths.is_empty() {
        let globs: Vec<String> = dirs
            .iter()
            .filter_map(|dir| external_request(dir, true, directory, worktree))
            .flat_map(|request| request.patterns)
            .collect();
        let mut patterns = globs.clone();
        patterns.extend(scanned.dynamic_paths.iter().cloned());
        let mut directories: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        directories.extend(scanned.dynamic_paths.iter().cloned());
        requests.push(ToolRequest {
            permission: EXTERNAL_DIRECTORY.to_string(),
            patterns: patterns.clone(),
            // Approving "always" never covers a path only known at run time.
            always: globs,
            metadata: serde_json::json!({
                "command": command,
                "directories": directories,
                "patterns": patterns,
            }),
        });
    }
    if !scanned.patterns.is_empty() {
        requests.push(ToolRequest {
            permission: "bash".to_string(),
            patterns: scanned.patterns.clone(),
            always: scanned.always.clone(),
            metadata: serde_json::json!({ "command": command }),
        });
    }
    if !scanned.opaque.is_empty() {
        requests.push(ToolRequest {
            permission: BASH_OPAQUE.to_string(),
            patterns: vec![command.trim().to_string()],
            always: Vec::new(),
            metadata: serde_json::json!({ "command": command, "reasons": scanned.opaque }),
        });
    }
    requests
}

#[cfg(test)]
mod tests {
    use super::*;

    fn has(scan: &BashScan, pattern: &str) -> bool {
        scan.patterns.iter().any(|p| p == pattern)
    }

    #[test]
    fn arguments_are_every_literal_word_after_the_program() {
        let scan = scan(
            "cat ./.env 'a b' && cd sub; grep -r x \"$D\" <in >'out f' && bash -c 'base64 .e*' \
             && xargs cat <<< '.env x'",
        )
        .unwrap();
        assert_eq!(
            scan.arguments,
            [
                "./.env",
                "a b",
                "sub",
                "-r",
                "x",
                "in",
                "out f",
                "-c",
                "base64 .e*",
                ".e*",
                "cat",
                ".env"
            ]
        );
    }

    #[test]
    fn substitution_outer_first() {
        let scan = scan("echo $(cat \"/tmp/x\")").unwrap();
        assert_eq!(
            scan.patterns[..2],
            ["echo $(cat \"/tmp/x\")", "cat \"/tmp/x\""]
        );
        assert_eq!(scan.path_args, ["/tmp/x"]);
    }

    #[test]
    fn shell_c_is_parsed() {
        let scan = scan("bash -c \"rm -rf /\"").unwrap();
        assert_eq!(scan.patterns[0], "bash -c \"rm -rf /\"");
        assert!(has(&scan, "rm -rf /"));
        assert_eq!(scan.always, ["bash *", "rm *"]);
        assert_eq!(scan.path_args, ["/"]);
        let scan = super::scan("sh -lc 'bash --norc -O extglob -c \"git push\"'").unwrap();
        assert!(has(&scan, "git push"));
    }

    #[test]
    fn shell_c_predicate() {
        assert_eq!(shell_c_script(&["bash", "-c", "x"]), Some(2));
        assert_eq!(shell_c_script(&["/bin/sh", "-e", "-c", "x"]), Some(3));
        assert_eq!(
            shell_c_script(&["bash", "-o", "pipefail", "-c", "x"]),
            Some(4)
        );
        assert_eq!(
            shell_c_script(&["bash", "--norc", "-c", "--", "x"]),
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
        assert_eq!(shell_c_script(&["sudo"]), None);
    }

    #[test]
    fn spelling_does_not_hide_the_program() {
        for line in [
            "rm\t-f x",
            "rm  -f   x",
            "{rm,-f,x}",
            "'rm' -f x",
            "r\"m\" -f x",
            "\\rm -f x",
            "/bin/rm -f x",
            "FOO=1 rm -f x",
            "rm${IFS}-f${IFS}x",
            "env -i rm -f x",
            "command rm -f x",
            "builtin rm -f x",
            "exec rm -f x",
            "nohup rm -f x",
            "time rm -f x",
            "timeout 5 rm -f x",
            "nice -n 5 rm -f x",
            "sudo -u root rm -f x",
            "doas rm -f x",
            "eval 'rm -f x'",
            "trap 'rm -f x' EXIT",
            "bash --norc -c 'rm -f x'",
            "sh -O extglob -c 'rm -f x'",
            "bash -c -- 'rm -f x'",
            "bash <<EOF\nrm -f x\nEOF",
            "bash <<< 'rm -f x'",
            "echo `echo \\`rm -f x\\``",
            "true\r# ; rm -f x",
        ] {
            let scan = scan(line).unwrap();
            assert!(
                scan.patterns
                    .iter()
                    .any(|p| agentgate_permission::wildcard::matches(p, "rm *")),
                "{line:?}: {:?}",
                scan.patterns
            );
        }
        // A continuation that joins two words is not parsed the way bash
        // reads it: opaque, never a guess.
        assert!(!scan("r\\\nm -f x").unwrap().opaque.is_empty());
        let scan = scan("echo x | xargs rm -f").unwrap();
        assert!(has(&scan, "rm -f"));
        let scan = super::scan("find . -exec rm -f {} \\;").unwrap();
        assert!(has(&scan, "rm -f {}"));
    }

    #[test]
    fn syntax_error_asks_for_everything() {
        let scan = scan("cat <<E''OF\nhi\nEOF\nrm -f x").unwrap();
        assert!(scan.syntax_error);
        assert!(has(&scan, "rm -f x"), "{:?}", scan.patterns);
        assert!(!scan.opaque.is_empty());
    }

    #[test]
    fn opaque_parts() {
        assert!(!scan("$X -f y").unwrap().opaque.is_empty());
        assert!(!scan("curl x | sh").unwrap().opaque.is_empty());
        assert!(!scan("eval \"$S\"").unwrap().opaque.is_empty());
        assert!(scan("git status && ls").unwrap().opaque.is_empty());
    }

    #[test]
    fn redirections_only() {
        let scan = scan("> file").unwrap();
        assert_eq!(scan.patterns, ["> file"]);
    }

    #[test]
    fn path_args() {
        let scan = scan(
            "rm -rf ~/x '/tmp/a b' /var/log/*.log *.txt $HOME/y; chmod +x /opt/z; echo > /out/f 2>&1",
        )
        .unwrap();
        assert_eq!(
            scan.path_args,
            ["~/x", "/tmp/a b", "/var/log/", "/opt/z", "/out/f"]
        );
        assert_eq!(scan.dynamic_paths, ["$HOME/y"]);
        let scan = super::scan("cat {/out/s,} \\/out/t; cd $D; tee ~bob/x").unwrap();
        assert_eq!(scan.path_args, ["/out/s", "/out/t"]);
        assert_eq!(scan.dynamic_paths, ["$D", "~bob/x"]);
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
    fn always_never_widens() {
        let scan = scan("git '*' '*'").unwrap();
        assert!(
            scan.always.iter().all(|a| !a[..a.len() - 2].contains('*')),
            "{:?}",
            scan.always
        );
    }

    #[test]
    fn caps() {
        let nested = "echo $(".repeat(2000) + &")".repeat(2000);
        assert_eq!(scan(&nested), Err(ScanError::TooComplex));
        let long = "a".repeat(MAX_COMMAND_BYTES + 1);
        assert!(matches!(scan(&long), Err(ScanError::TooLong(_))));
    }

    #[test]
    fn unquoting() {
        assert_eq!(unquote(r#"'a b'"#), "a b");
        assert_eq!(unquote(r"a\ b"), "a b");
    }
}
