//! The differential harness of the bash scanner against real bash, shared
//! (by `#[path]`) by the CI test `tests/suite/bash_differential.rs` and the
//! fuzz target `fuzz/fuzz_targets/bash_differential.rs`.
//!
//! - [`generate`] turns a stream of choices (a seeded PRNG in CI, the fuzz
//!   input's bytes under libFuzzer) into one bash command line, through a
//!   grammar of the constructs the scanner must model: separators,
//!   comments where bash starts them and where it does not, backslash-newline
//!   continuations everywhere, heredocs of every quoting form, quotes,
//!   `$'…'`, expansions, substitutions, compound commands, functions,
//!   wrappers, `bash -c`, `eval`, and non-ASCII and control characters.
//! - [`Harness::run`] runs the line as the bash tool does (`bash -c LINE`,
//!   stdin from /dev/null) inside the project's sandbox, and records every
//!   simple command bash executed: the shims on `PATH` log their argv, and
//!   bash's own xtrace (switched on by a `BASH_ENV` file, on a dedicated
//!   descriptor) records the builtins and functions it ran.
//! - [`Harness::check`] scans the line and returns the executed commands that
//!   no pattern covers, unless the scan is opaque or refused.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use agentgate_tools::bash_scan::{BashScan, scan};
use agentgate_tools::{CallScope, EnvFilter, EnvInherit, Sandbox, SandboxMode, SandboxPolicy};

/// Programs that only log their argv and exit 0.
pub const MARKERS: &[&str] = &["m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9"];

/// Programs that log their argv, then run the real program (which finds
/// the markers on the same `PATH`). Missing ones are left out.
pub const WRAPPERS: &[&str] = &[
    "env", "nohup", "timeout", "xargs", "find", "nice", "stdbuf", "setsid", "bash", "sh", "flock",
    "chrt", "ionice", "taskset", "prlimit", "setpriv", "chroot", "unshare", "nsenter", "script",
    "watch", "strace", "runcon",
];

/// How long one line may run before its process group is killed.
pub const LINE_TIMEOUT: Duration = Duration::from_secs(5);

/// The first byte of every xtrace record (bash repeats it per nesting
/// level); see [`trace_records`] for how records are told apart.
const TRACE_MARK: u8 = 0x01;

/// Ends the `0`/`1` (from the line / from a script file) at the start of
/// an xtrace record.
const SOURCE_END: u8 = 0x02;

/// The `BASH_ENV` file: xtrace on a dedicated descriptor, and `DIFF_FILE`
/// (exported, so every child sees it) set before each command to 1 when
/// the command comes from a script file (`BASH_SOURCE` is a file; it is
/// empty, or `environment` in a function, for the line itself) or when
/// this shell was started by such a command (`DIFF_BASE`, its value at
/// start). The prompt prints it, so each record says where it came from.
const TRACE_ON: &str = concat!(
    "DIFF_BASE=${DIFF_FILE:-0}\n",
    "declare -A DIFF_SELF=([environment]=1)\n",
    "exec 9>>\"$DIFF_TRACE\"\n",
    "BASH_XTRACEFD=9\n",
    "PS4=$'\\001+ $((DIFF_FILE = DIFF_BASE || !${DIFF_SELF[${BASH_SOURCE[0]:-environment}]:-0}))\\002'\n",
    "set -x\n",
);

/// The [`Executed::source`] of a command read from a script file (a file
/// given to `source`, `.` or a shell): code the scanner does not read,
/// which the pattern of the command that ran the file stands for.
pub const SCRIPT_FILE: &str = "script-file";

// ---------------------------------------------------------------------------
// Choices

/// Where the generator's decisions come from.
pub trait Choices {
    /// A number in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize;
    /// True with probability about `1 / n`.
    fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }
}

/// A seeded PRNG (splitmix64): the CI corpus.
pub struct Seeded(pub u64);

impl Choices for Seeded {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z % n as u64) as usize
    }
}

/// The fuzz input's bytes, one decision each; zeros when they run out (so
/// every input gives a finite line).
pub struct Bytes<'a>(pub &'a [u8]);

impl Choices for Bytes<'_> {
    fn below(&mut self, n: usize) -> usize {
        match self.0.split_first() {
            Some((first, rest)) => {
                self.0 = rest;
                *first as usize % n
            }
            None => 0,
        }
    }
}

// ---------------------------------------------------------------------------
// The grammar

/// Characters put into words, comments and heredoc bodies besides letters:
/// non-ASCII, control bytes and Unicode spaces. None is a glob character.
const ODD: &[&str] = &[
    "\r",
    "\x0b",
    "\x0c",
    "\t",
    "\u{a0}",
    "\u{2028}",
    "\u{3000}",
    "\u{2029}",
    "\u{85}",
    "é",
    "\u{feff}",
    "\u{200b}",
    "\x1b",
    "\x7f",
    "ß",
    "\u{1f600}",
];

/// Builtins the generator calls (each harmless: no path outside the
/// scratch directory, no endless wait).
const BUILTINS: &[&str] = &[
    "echo",
    "printf",
    ":",
    "true",
    "false",
    "eval",
    "command",
    "builtin",
    "export",
    "declare",
    "local",
    "set",
    "shift",
    "test",
    "[",
    "read",
    "type",
    "hash",
    "unset",
    "let",
    "return",
    "cd",
    "pushd",
    "popd",
    "alias",
    "getopts",
    "printf -v V",
    "mapfile",
    "readarray",
    "trap",
    "exec",
    "source",
    ".",
    "times",
    "wait",
    "kill -0 $$",
];

/// Heredoc delimiters, some with odd characters.
const DELIMITERS: &[&str] = &[
    "EOF",
    "E",
    "x.y",
    "A-B",
    "_",
    "é",
    "E1",
    "END\u{a0}",
    "a+b",
    "E%",
];

struct Gen<'c, C: Choices> {
    c: &'c mut C,
    /// Heredoc bodies waiting for the next newline, per substitution level.
    pending: Vec<Vec<String>>,
    /// Inside backticks: no heredocs, no nested backticks.
    in_backticks: bool,
    budget: usize,
}

/// One command line from `choices`.
pub fn generate<C: Choices>(choices: &mut C) -> String {
    let mut g = Gen {
        c: choices,
        pending: vec![Vec::new()],
        in_backticks: false,
        budget: 12,
    };
    let mut out = String::new();
    g.script(&mut out, 0);
    g.flush_heredocs(&mut out, true);
    out
}

impl<C: Choices> Gen<'_, C> {
    fn pick<'s>(&mut self, items: &[&'s str]) -> &'s str {
        items[self.c.below(items.len())]
    }

    fn spend(&mut self) -> bool {
        if self.budget == 0 {
            return false;
        }
        self.budget -= 1;
        true
    }

    /// A newline, then any heredoc bodies waiting for it.
    fn newline(&mut self, out: &mut String) {
        out.push('\n');
        self.flush_heredocs(out, false);
    }

    fn flush_heredocs(&mut self, out: &mut String, need_newline: bool) {
        let bodies = std::mem::take(self.pending.last_mut().expect("a level"));
        if bodies.is_empty() {
            return;
        }
        if need_newline {
            out.push('\n');
        }
        for body in bodies {
            out.push_str(&body);
        }
    }

    /// Statements joined by separators, each maybe followed by a comment.
    fn script(&mut self, out: &mut String, depth: usize) {
        let n = 1 + self.c.below(if depth == 0 { 3 } else { 2 });
        for i in 0..n {
            if i > 0 {
                self.separator(out);
            }
            self.list(out, depth);
        }
        if self.c.one_in(4) {
            self.comment(out);
        }
    }

    fn separator(&mut self, out: &mut String) {
        match self.c.below(7) {
            0 => out.push_str("; "),
            1 => out.push(';'),
            2 => out.push_str(" & "),
            3 => self.newline(out),
            4 => {
                // A comment, which runs to the end of the line.
                self.comment(out);
            }
            5 => out.push_str(";\n"),
            _ => {
                out.push_str("; ");
                self.comment(out);
            }
        }
    }

    /// A comment in a place bash starts one, then the newline that ends it.
    fn comment(&mut self, out: &mut String) {
        if !out.is_empty() && !out.ends_with([' ', '\n', ';', '&', '\t']) {
            out.push(' ');
        }
        out.push('#');
        let words = self.c.below(3);
        for _ in 0..words {
            match self.c.below(6) {
                0 => out.push_str(" m5"),
                1 => out.push_str(" '"),
                2 => out.push_str(" \""),
                3 => out.push_str(" <<EOF"),
                4 => {
                    let odd = self.pick(ODD);
                    out.push_str(odd);
                }
                _ => out.push_str(" $(m6)"),
            }
        }
        if self.c.one_in(2) {
            // The continuation bash does not honour inside a comment.
            out.push('\\');
        }
        self.newline(out);
    }

    fn list(&mut self, out: &mut String, depth: usize) {
        self.pipeline(out, depth);
        while self.c.one_in(3) && self.spend() {
            out.push_str(self.pick(&[" && ", " || ", "&&", "||", " &&\n", " || "]));
            self.pipeline(out, depth);
        }
    }

    fn pipeline(&mut self, out: &mut String, depth: usize) {
        if self.c.one_in(8) {
            out.push_str("! ");
        }
        self.command(out, depth);
        while self.c.one_in(4) && self.spend() {
            out.push_str(self.pick(&[" | ", "|", " |& ", " |\n"]));
            self.command(out, depth);
        }
    }

    fn command(&mut self, out: &mut String, depth: usize) {
        if depth >= 3 || !self.spend() {
            self.simple(out, depth + 1);
            return;
        }
        match self.c.below(24) {
            0 => {
                out.push_str("( ");
                self.script(out, depth + 1);
                out.push_str(" )");
                self.after_group(out);
            }
            1 => {
                out.push_str("{ ");
                self.script(out, depth + 1);
                out.push_str("; }");
            }
            2 => {
                out.push_str("if ");
                self.list(out, depth + 1);
                out.push_str("; then ");
                self.script(out, depth + 1);
                if self.c.one_in(2) {
                    out.push_str("; else ");
                    self.script(out, depth + 1);
                }
                out.push_str(self.pick(&["; fi", "\nfi", ";fi"]));
                self.after_group(out);
            }
            3 => {
                out.push_str("for V in");
                for _ in 0..self.c.below(3) {
                    out.push(' ');
                    self.word(out, depth + 1);
                }
                out.push_str("; do ");
                self.script(out, depth + 1);
                out.push_str("; done");
                self.after_group(out);
            }
            4 => {
                out.push_str(self.pick(&["while false; do ", "until true; do "]));
                self.script(out, depth + 1);
                out.push_str("; done");
            }
            5 => {
                out.push_str("case ");
                self.word(out, depth + 1);
                out.push_str(" in ");
                out.push_str(self.pick(&["a", "x|y", "*", "m1", "a\u{a0}"]));
                out.push_str(") ");
                self.script(out, depth + 1);
                out.push_str(self.pick(&[";;", ";&", ";;&"]));
                if self.c.one_in(2) {
                    out.push_str(" *) ");
                    self.list(out, depth + 1);
                    out.push_str(";;");
                }
                out.push_str(" esac");
            }
            6 => {
                let name = self.pick(&["f", "g", "function h", "function k()"]);
                out.push_str(name);
                out.push_str(if name.starts_with("function") {
                    " { "
                } else {
                    "() { "
                });
                self.script(out, depth + 1);
                out.push_str("; }; ");
                out.push_str(name.trim_start_matches("function ").trim_end_matches("()"));
                if self.c.one_in(2) {
                    out.push(' ');
                    self.word(out, depth + 1);
                }
            }
            7 => self.heredoc_command(out, depth + 1),
            8 => {
                // A wrapper running a marker (or a builtin).
                out.push_str(self.pick(&[
                    "env ",
                    "env X=1 ",
                    "env -i PATH=\"$PATH\" ",
                    "command ",
                    "builtin ",
                    "nohup ",
                    "timeout 5 ",
                    "nice -n 1 ",
                    "setsid ",
                    "stdbuf -o0 ",
                    "exec ",
                    "time ",
                    "command -p ",
                    "nice ",
                    "flock o ",
                    "ionice -c 3 ",
                    "taskset -c 0 ",
                    "prlimit --nofile=64 ",
                    "setpriv ",
                    "chroot / ",
                    "unshare ",
                    "chrt -o 0 ",
                ]));
                self.simple(out, depth + 1);
            }
            9 => {
                out.push_str(self.pick(&[
                    "echo a | xargs ",
                    "xargs -a /dev/null ",
                    "echo b | xargs -I{} ",
                    "find . -maxdepth 0 -exec ",
                    "find . -maxdepth 0 -execdir ",
                ]));
                self.marker(out);
                if out.contains("find") && out.ends_with(char::is_alphanumeric) {
                    out.push_str(self.pick(&[" {} \\;", " {} +", " ';'", " \\;"]));
                }
            }
            10 => {
                // A script given as text.
                let mut inner = String::new();
                let mut sub = Gen {
                    c: &mut *self.c,
                    pending: vec![Vec::new()],
                    in_backticks: false,
                    budget: self.budget.min(4),
                };
                sub.script(&mut inner, depth + 2);
                sub.flush_heredocs(&mut inner, true);
                let used = self.budget.min(4) - sub.budget;
                self.budget -= used;
                let prefix = self.pick(&["bash -c ", "sh -c ", "eval ", "bash -c -- ", "trap "]);
                out.push_str(prefix);
                match self.c.below(3) {
                    0 => single_quote(out, &inner),
                    1 => double_quote(out, &inner),
                    _ => ansi_quote(out, &inner),
                }
                if prefix == "trap " {
                    out.push_str(" EXIT");
                }
            }
            11 => {
                out.push_str(self.pick(&["$(", "`"]));
                let backtick = out.ends_with('`');
                if backtick && self.in_backticks {
                    out.pop();
                    self.simple(out, depth + 1);
                    return;
                }
                self.substitution_body(out, depth + 1, backtick);
                out.push(if backtick { '`' } else { ')' });
            }
            12 => {
                out.push_str(self.pick(&["coproc ", "coproc C { ", "coproc D ( "]));
                let open = out.ends_with("{ ") || out.ends_with("( ");
                self.simple(out, depth + 1);
                if open {
                    out.push_str(if out.contains("coproc D ( ") {
                        " )"
                    } else {
                        "; }"
                    });
                }
                out.push_str("; wait");
            }
            13 => {
                // A variable holding a program.
                out.push_str(self.pick(&[
                    "V=m2; $V",
                    "read -r V <<< m3; $V",
                    "printf -v V m4; $V",
                    "declare -n R=V; V=m5; $R",
                    "V=(m6 a); \"${V[@]}\"",
                    "set -- m7; \"$@\"",
                ]));
            }
            14 => self.bash_variable(out, depth + 1),
            15 => self.toggle(out, depth + 1),
            16 => self.table_alias(out, depth + 1),
            17 => self.option_value(out, depth + 1),
            _ => self.simple(out, depth + 1),
        }
    }

    /// An assignment, in one of bash's forms, to one of the variables
    /// bash gives a meaning to (the scanner's list), then a command.
    fn bash_variable(&mut self, out: &mut String, depth: usize) {
        let names = agentgate_tools::bash_scan::bash_variables();
        let (name, _) = names[self.c.below(names.len())];
        // `BASH_XTRACEFD`, `PS4` and `BASH_ENV` carry the harness's own
        // trace: they are opaque to the scan, so such a line is asked and
        // never run, whatever the run would show.
        let value = self.pick(&[
            "m2", "''", "/usr/bin", "'$(m3)'", "x:$PATH", ".", "m4 a", "$PWD", "1",
        ]);
        let form = self.c.below(10);
        match form {
            0 => out.push_str(&format!("{name}={value}")),
            1 => out.push_str(&format!("{name}+={value}")),
            2 => out.push_str(&format!("{name}[m1]={value}")),
            3 => out.push_str(&format!("{name}=([m1]={value})")),
            4 => out.push_str(&format!("declare -A {name}=([m1]={value})")),
            5 => out.push_str(&format!("declare -n R={name}; R[m1]={value}")),
            6 => out.push_str(&format!("export {name}={value}")),
            7 => out.push_str(&format!("read -r {name} <<< {value}")),
            8 => out.push_str(&format!("printf -v {name} %s {value}")),
            _ => out.push_str(&format!("f() {{ local {name}={value}; m5; }}; f")),
        }
        out.push_str(self.pick(&["; ", "\n", " && ", " "]));
        self.simple(out, depth);
    }

    /// `shopt` and `set -o` toggles, then a command.
    fn toggle(&mut self, out: &mut String, depth: usize) {
        out.push_str(self.pick(&[
            "shopt -s expand_aliases",
            "shopt -u interactive_comments",
            "shopt -s extglob",
            "shopt -s nullglob",
            "shopt -s cdable_vars",
            "shopt -s extdebug",
            "shopt -s xpg_echo",
            "set -o posix",
            "set +o interactive-comments",
            "set -k",
            "set -H",
            "set -euo pipefail",
            "set -f",
            "set +B",
            "set -o noglob",
            "shopt -so keyword",
            "bash -O expand_aliases -c",
        ]));
        if out.ends_with("-c") {
            out.push_str(" 'BASH_ALIASES[m1]=m2\nm1 a'");
            return;
        }
        out.push_str(self.pick(&["; ", "\n"]));
        self.simple(out, depth);
        if self.c.one_in(2) {
            out.push_str(" m1=x # m6");
        }
    }

    /// A command renamed through bash's tables (`BASH_ALIASES`,
    /// `BASH_CMDS`, `alias`, `hash -p`), then run by its old name.
    fn table_alias(&mut self, out: &mut String, depth: usize) {
        let _ = depth;
        out.push_str(self.pick(&[
            "shopt -s expand_aliases; BASH_ALIASES[m1]=m2\nm1 a",
            "shopt -s expand_aliases; BASH_ALIASES=([m1]='m3 b')\nm1",
            "BASH_CMDS[m1]=${PATH%%:*}/m4; m1 c",
            "declare -n T=BASH_CMDS; T[m1]=${PATH%%:*}/m5; m1",
            "f() { BASH_CMDS[m1]=${PATH%%:*}/m6; }; f; m1 d",
            "shopt -s expand_aliases; alias m1=m7\nm1",
            "hash -p ${PATH%%:*}/m8 m1; m1 e",
            "PATH=.:$PATH; m1",
        ]));
    }

    /// A tabled program's option with a generated value (a pipe, `!`, a
    /// process substitution, a path, a command line).
    fn option_value(&mut self, out: &mut String, depth: usize) {
        let value = match self.c.below(7) {
            0 => "'|m3 v'".to_string(),
            1 => "'!m4'".to_string(),
            2 => "<(m5)".to_string(),
            3 => "o".to_string(),
            4 => "/dev/null".to_string(),
            5 => "\"$X\"".to_string(),
            _ => "'m6 w'".to_string(),
        };
        let template = self.pick(&[
            "strace -f -o V ",
            "strace -qqoV ",
            "strace --output=V ",
            "flock o -c V",
            "env -S V",
            "timeout -s KILL 5 ",
            "xargs -a V ",
            "find . -maxdepth 0 -fprint V -exec ",
            "bash --rcfile V -ic m1",
            "bash --init-file V -i < /dev/null",
            "watch -n 1 -x ",
            "script -q -c V /dev/null",
            "tar -cf /dev/null --checkpoint=1 --checkpoint-action=exec=V . ",
            "tar -cf /dev/null -I V . ",
            "git -c alias.x=!V x ",
            "setsid -w ",
        ]);
        out.push_str(&template.replace('V', &value));
        if template.ends_with(' ') {
            self.simple(out, depth);
            if template.contains("-exec") {
                out.push_str(" \\;");
            }
        }
    }

    /// After `)`, `fi` or `done`: maybe a comment right there, or a
    /// redirection.
    fn after_group(&mut self, out: &mut String) {
        match self.c.below(6) {
            0 => self.comment(out),
            1 => out.push_str(" >/dev/null"),
            2 => {
                out.push('#');
                if self.c.one_in(2) {
                    out.push('\\');
                }
                self.newline(out);
            }
            _ => {}
        }
    }

    fn substitution_body(&mut self, out: &mut String, depth: usize, backtick: bool) {
        let saved = self.in_backticks;
        self.in_backticks = saved || backtick;
        self.pending.push(Vec::new());
        self.script(out, depth);
        let bodies = self.pending.pop().unwrap_or_default();
        if !bodies.is_empty() {
            out.push('\n');
            for body in bodies {
                out.push_str(&body);
            }
        }
        self.in_backticks = saved;
    }

    /// A command fed a heredoc: a marker, a shell, or a builtin.
    fn heredoc_command(&mut self, out: &mut String, depth: usize) {
        if self.in_backticks {
            self.simple(out, depth);
            return;
        }
        let delimiter = self.pick(DELIMITERS).to_string();
        let program = self.pick(&[
            "m1",
            "bash",
            "sh",
            "m2",
            "read -r V",
            "eval \"$(m3)\"",
            "bash -s",
        ]);
        let dash = self.c.one_in(3);
        let (spelling, quoted) = match self.c.below(6) {
            0 => (format!("'{delimiter}'"), true),
            1 => (format!("\"{delimiter}\""), true),
            2 => (format!("\\{delimiter}"), true),
            3 => {
                let (first, rest) = split_first(&delimiter);
                (format!("{first}'{rest}'"), true)
            }
            _ => (delimiter.clone(), false),
        };
        let _ = quoted;
        out.push_str(program);
        out.push_str(if dash { " <<-" } else { " <<" });
        if self.c.one_in(3) {
            out.push(' ');
        }
        out.push_str(&spelling);
        if self.c.one_in(4) {
            out.push_str(self.pick(ODD));
        }
        // The body: lines of commands (a shell runs them), with backslashes,
        // quotes and continuations.
        let mut body = String::new();
        let lines = 1 + self.c.below(3);
        for _ in 0..lines {
            if dash {
                body.push('\t');
            }
            let mut inner = String::new();
            let mut sub = Gen {
                c: &mut *self.c,
                pending: vec![Vec::new()],
                in_backticks: true,
                budget: self.budget.min(2),
            };
            sub.list(&mut inner, depth + 2);
            body.push_str(&inner.replace('\n', " "));
            match self.c.below(8) {
                0 => body.push('\\'),
                1 => body.push_str(" \\\\"),
                2 => body.push_str(" '"),
                3 => body.push_str(" \""),
                4 => body.push_str(self.pick(ODD)),
                5 => {
                    body.push('\\');
                    body.push('\n');
                    body.push_str(&delimiter);
                }
                _ => {}
            }
            body.push('\n');
        }
        if dash {
            body.push('\t');
        }
        if self.c.one_in(6) {
            body.push_str(self.pick(ODD));
        }
        body.push_str(&delimiter);
        if self.c.one_in(6) {
            body.push_str(self.pick(ODD));
        }
        body.push('\n');
        self.pending.last_mut().expect("a level").push(body);
    }

    fn marker(&mut self, out: &mut String) {
        let m = self.pick(MARKERS);
        out.push_str(m);
    }

    /// A simple command: maybe assignments, a program, words, redirections.
    fn simple(&mut self, out: &mut String, depth: usize) {
        if self.c.one_in(6) {
            out.push_str(self.pick(&["X=1 ", "X=$(m8) ", "X+=a ", "A[1]=b "]));
        }
        // Bash takes redirections anywhere in a simple command, before the
        // program and between its words, and the words after a target are
        // still the command's arguments (`>o m1 a`, `m1 2>/dev/null -a b`).
        if self.c.one_in(12) {
            self.redirection(out);
            out.push(' ');
        }
        match self.c.below(10) {
            0..=5 => self.program_word(out),
            6 | 7 => out.push_str(self.pick(BUILTINS)),
            _ => {
                // A program name spelled with quotes, escapes or continuations.
                let m = self.pick(MARKERS);
                match self.c.below(5) {
                    0 => {
                        out.push('\'');
                        out.push_str(m);
                        out.push('\'');
                    }
                    1 => {
                        out.push('"');
                        out.push_str(m);
                        out.push('"');
                    }
                    2 => {
                        out.push('m');
                        out.push_str("\\\n");
                        out.push_str(&m[1..]);
                    }
                    3 => {
                        out.push('\\');
                        out.push_str(m);
                    }
                    _ => {
                        out.push_str("$'");
                        out.push_str(m);
                        out.push('\'');
                    }
                }
            }
        }
        let words = self.c.below(3);
        for _ in 0..words {
            out.push_str(self.pick(&[" ", " ", "\t", " \\\n", "  "]));
            if self.c.one_in(8) {
                self.redirection(out);
                out.push(' ');
            }
            self.word(out, depth);
        }
        if self.c.one_in(6) {
            out.push(' ');
            self.redirection(out);
        }
    }

    fn redirection(&mut self, out: &mut String) {
        out.push_str(self.pick(&[
            ">/dev/null",
            "2>&1",
            ">o",
            "<<< m9",
            "< /dev/null",
            ">>o",
            "<<<\"$(m9)\"",
            "2>/dev/null",
            "&>o",
        ]));
    }

    fn program_word(&mut self, out: &mut String) {
        self.marker(out);
    }

    /// A word: one to three pieces concatenated.
    fn word(&mut self, out: &mut String, depth: usize) {
        let pieces = 1 + self.c.below(2);
        for _ in 0..pieces {
            self.piece(out, depth);
        }
    }

    fn piece(&mut self, out: &mut String, depth: usize) {
        if !self.spend() {
            out.push_str(self.pick(&["a", "b", "x"]));
            return;
        }
        match self.c.below(22) {
            0..=4 => out.push_str(self.pick(&["a", "b", "-x", "m1", "--", "x=y", "{a,b}", "1"])),
            5 => {
                out.push('\'');
                self.text(out, &['\'']);
                out.push('\'');
            }
            6 => {
                out.push('"');
                self.double_text(out, depth);
                out.push('"');
            }
            7 => {
                out.push_str("$'");
                out.push_str(self.pick(&[
                    "a\\nb", "\\x41", "\\'", "\\t", "\\u00e9", "\\r", "m\\1", "\\e", "\\cA",
                ]));
                out.push('\'');
            }
            8 => out.push_str(self.pick(&[
                "$X", "${X:-d}", "${X:=m2}", "${#X}", "${X/a/b}", "$((1+2))", "$$", "$?", "${X@Q}",
                "$1", "${!X}",
            ])),
            9 if depth < 5 => {
                out.push_str("$(");
                self.substitution_body(out, depth + 1, false);
                out.push(')');
            }
            10 if depth < 5 && !self.in_backticks => {
                out.push('`');
                self.substitution_body(out, depth + 1, true);
                out.push('`');
            }
            11 => out.push_str("\\\n"),
            12 => {
                let odd = self.pick(ODD);
                if self.c.one_in(2) || odd.is_ascii() {
                    // Control bytes quoted: raw ones would split the word.
                    out.push('\'');
                    out.push_str(odd);
                    out.push('\'');
                } else {
                    out.push_str(odd);
                }
            }
            13 => out.push_str(self.pick(&["\\#", "a#b", "#", "\\;", "\\ ", "\\'", "\\\""])),
            14 if depth < 5 => {
                out.push_str(self.pick(&["<(", ">("]));
                self.substitution_body(out, depth + 1, false);
                out.push(')');
            }
            _ => out.push_str(self.pick(&["x", "y", "é", "a\u{a0}b", "m9"])),
        }
    }

    /// The text of a single-quoted piece or a comment: no `end` characters.
    fn text(&mut self, out: &mut String, end: &[char]) {
        for _ in 0..self.c.below(4) {
            let s = self.pick(&[
                "a", " ", "m2", ";", "\\", "\n", "$(m3)", "\"", "#", "&&", "`m4`", "\\\n",
            ]);
            if !s.contains(end) {
                out.push_str(s);
            } else {
                out.push('z');
            }
        }
        if self.c.one_in(4) {
            out.push_str(self.pick(ODD));
        }
    }

    fn double_text(&mut self, out: &mut String, depth: usize) {
        for _ in 0..self.c.below(4) {
            match self.c.below(10) {
                0 if depth < 5 => {
                    out.push_str("$(");
                    self.substitution_body(out, depth + 1, false);
                    out.push(')');
                }
                1 if depth < 5 && !self.in_backticks => {
                    out.push('`');
                    self.substitution_body(out, depth + 1, true);
                    out.push('`');
                }
                2 => out.push_str("\\\n"),
                3 => out.push_str("\\\""),
                4 => out.push_str(self.pick(&["$X", "${X:-m5}", "\\$", "\\\\", "'"])),
                5 => out.push_str(self.pick(ODD)),
                _ => out.push_str(self.pick(&["a", " ", "m1", ";", "#", "\n"])),
            }
        }
    }
}

fn split_first(text: &str) -> (&str, &str) {
    let cut = text.char_indices().nth(1).map_or(text.len(), |(i, _)| i);
    text.split_at(cut)
}

fn single_quote(out: &mut String, text: &str) {
    out.push('\'');
    out.push_str(&text.replace('\'', "'\\''"));
    out.push('\'');
}

fn double_quote(out: &mut String, text: &str) {
    out.push('"');
    for ch in text.chars() {
        if matches!(ch, '"' | '\\' | '$' | '`') {
            out.push('\\');
        }
        out.push(ch);
    }
    out.push('"');
}

fn ansi_quote(out: &mut String, text: &str) {
    out.push_str("$'");
    for ch in text.chars() {
        match ch {
            '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            _ => out.push(ch),
        }
    }
    out.push('\'');
}

// ---------------------------------------------------------------------------
// Running under real bash

/// One command bash ran, and who saw it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Executed {
    /// The argv (program first), as text.
    pub argv: Vec<String>,
    /// `shim` (a program on PATH logged it), `xtrace` (bash traced it) or
    /// [`SCRIPT_FILE`] (either, for a command read from a script file).
    pub source: &'static str,
}

impl Executed {
    /// The argv joined by single spaces: what a pattern must match.
    pub fn joined(&self) -> String {
        self.argv.join(" ")
    }
}

/// A line's run: the commands executed and bash's exit status.
#[derive(Debug, Clone, Default)]
pub struct Run {
    /// Every simple command executed, in no particular order.
    pub executed: Vec<Executed>,
    /// bash's exit code (`None`: killed after [`LINE_TIMEOUT`]).
    pub status: Option<i32>,
    /// bash's stderr (for reports).
    pub stderr: String,
}

/// A scan/run disagreement: commands that ran and that no pattern covers.
#[derive(Debug, Clone)]
pub struct Uncovered {
    /// The line.
    pub line: String,
    /// The scan's patterns.
    pub patterns: Vec<String>,
    /// The commands no pattern matched, each with the known hole class
    /// that explains it (`None`: a new finding).
    pub commands: Vec<(Executed, Option<&'static str>)>,
    /// bash's stderr.
    pub stderr: String,
}

impl Uncovered {
    /// Whether a known hole class explains every uncovered command.
    pub fn explained(&self) -> bool {
        self.commands.iter().all(|(_, class)| class.is_some())
    }
}

impl std::fmt::Display for Uncovered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "line {:?}", self.line)?;
        writeln!(f, "  patterns {:?}", self.patterns)?;
        for (c, class) in &self.commands {
            let class = class.map_or("NEW".to_string(), |c| format!("known: {c}"));
            writeln!(
                f,
                "  ran ({}) {:?} — no pattern matches [{class}]",
                c.source,
                c.joined()
            )?;
        }
        if !self.stderr.is_empty() {
            let stderr: String = self.stderr.chars().take(300).collect();
            writeln!(f, "  stderr {stderr:?}")?;
        }
        Ok(())
    }
}

/// What the scanner said about a line.
pub enum Verdict {
    /// Refused or opaque (the reason): the tool asks `bash_opaque`;
    /// nothing to prove.
    Asked(String),
    /// Every executed command is covered.
    Covered(usize),
    /// Some are not.
    Uncovered(Uncovered),
}

/// The shim directory, the sandbox and the scratch root, made once.
pub struct Harness {
    root: PathBuf,
    bin: PathBuf,
    bash: PathBuf,
    bash_env: PathBuf,
    sandbox: Sandbox,
    runtime: tokio::runtime::Runtime,
    counter: AtomicU64,
}

/// `name` found on the current `PATH`.
pub fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

impl Harness {
    /// A harness under `root` (created; left for the caller to remove), or
    /// `None` when bash is missing.
    pub fn new(root: &Path) -> Option<Harness> {
        let bash = find_program("bash")?;
        let root = {
            std::fs::create_dir_all(root).ok()?;
            root.canonicalize().ok()?
        };
        let bin = root.join("bin");
        std::fs::create_dir_all(&bin).ok()?;
        for marker in MARKERS {
            write_shim(&bin, marker, None);
        }
        for wrapper in WRAPPERS {
            if let Some(real) = find_program(wrapper) {
                write_shim(&bin, wrapper, Some(&real));
            }
        }
        let bash_env = root.join("trace-on.sh");
        std::fs::write(&bash_env, TRACE_ON).ok()?;
        // Network off; the scratch directory (per line: the project and
        // the log folder) writable; the environment only what we set.
        let mut set = BTreeMap::new();
        set.insert("PATH".to_string(), bin.display().to_string());
        set.insert("HOME".to_string(), root.join("home").display().to_string());
        set.insert("LC_ALL".to_string(), "C.UTF-8".to_string());
        set.insert("BASH_ENV".to_string(), bash_env.display().to_string());
        let env = EnvFilter {
            inherit: EnvInherit::None,
            set,
            ..EnvFilter::default()
        };
        let policy = SandboxPolicy::new(SandboxMode::WorkspaceWrite)
            .with_network(false)
            .with_env(env);
        let sandbox = Sandbox::new(policy);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .ok()?;
        Some(Harness {
            root,
            bin,
            bash,
            bash_env,
            sandbox,
            runtime,
            counter: AtomicU64::new(0),
        })
    }

    /// What the sandbox enforces here (for reports).
    pub fn sandbox_summary(&self) -> String {
        self.sandbox.status().summary()
    }

    /// Whether the sandbox enforces everything asked.
    pub fn sandboxed(&self) -> bool {
        !self.sandbox.status().is_degraded()
    }

    /// Runs `line` under bash and returns what it executed.
    pub fn run(&self, line: &str) -> Run {
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        let dir = self.root.join(format!("line-{}-{n}", std::process::id()));
        let work = dir.join("work");
        let log = dir.join("log");
        let _ = std::fs::create_dir_all(&work);
        let _ = std::fs::create_dir_all(&log);
        let _ = std::fs::create_dir_all(self.root.join("home"));
        let trace = log.join("trace");
        let run = self.runtime.block_on(self.spawn(line, &work, &log, &trace));
        let mut executed = read_shim_logs(&log);
        executed.extend(read_trace(&trace));
        let _ = std::fs::remove_dir_all(&dir);
        Run { executed, ..run }
    }

    async fn spawn(&self, line: &str, work: &Path, log: &Path, trace: &Path) -> Run {
        let scope = CallScope {
            session_id: "bash-differential".to_string(),
            directory: work.to_path_buf(),
            worktree: log.to_path_buf(),
            cwd: work.to_path_buf(),
            tool_output: None,
            approved: Vec::new(),
        };
        let Ok(mut prepared) = self.sandbox.prepare(&scope) else {
            return Run::default();
        };
        let mut command = tokio::process::Command::new(&self.bash);
        command
            .arg("-c")
            .arg(line)
            .current_dir(work)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        prepared.apply(&mut command);
        // After the sandbox's environment: the per-line log locations.
        command
            .env("DIFF_LOG", log)
            .env("DIFF_TRACE", trace)
            .env("DIFF_FILE", "0");
        let Ok(mut child) = command.spawn() else {
            return Run::default();
        };
        let pid = child.id();
        let mut stderr = child.stderr.take();
        let read_stderr = async {
            let mut buf = Vec::new();
            if let Some(pipe) = stderr.as_mut() {
                use tokio::io::AsyncReadExt;
                let _ = pipe.take(64 * 1024).read_to_end(&mut buf).await;
            }
            buf
        };
        let waited = tokio::time::timeout(LINE_TIMEOUT, async {
            let (buf, status) = tokio::join!(read_stderr, child.wait());
            (buf, status)
        })
        .await;
        match waited {
            Ok((buf, status)) => Run {
                executed: Vec::new(),
                status: status.ok().and_then(|s| s.code()),
                stderr: String::from_utf8_lossy(&buf).into_owned(),
            },
            Err(_) => {
                // The group (and with the watcher, the PID namespace).
                if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
                    let _ = nix::sys::signal::killpg(
                        nix::unistd::Pid::from_raw(pid),
                        nix::sys::signal::Signal::SIGKILL,
                    );
                }
                let _ = child.kill().await;
                Run {
                    executed: Vec::new(),
                    status: None,
                    stderr: "timed out".to_string(),
                }
            }
        }
    }

    /// Scans `line`; when the scan claims to see everything, runs it and
    /// returns what ran uncovered.
    pub fn check(&self, line: &str) -> Verdict {
        let scanned = match scan(line) {
            Ok(scanned) => scanned,
            Err(error) => return Verdict::Asked(error.to_string()),
        };
        if let Some(reason) = scanned.opaque.first() {
            return Verdict::Asked(reason.clone());
        }
        let run = self.run(line);
        let uncovered: Vec<Executed> = run
            .executed
            .iter()
            .filter(|e| !covered(&scanned, e))
            .cloned()
            .collect();
        if uncovered.is_empty() {
            Verdict::Covered(run.executed.len())
        } else {
            let mut commands = uncovered;
            commands.sort();
            commands.dedup();
            let commands = commands
                .into_iter()
                .map(|c| {
                    let class = known_hole(line, &c);
                    (c, class)
                })
                .collect();
            Verdict::Uncovered(Uncovered {
                line: line.to_string(),
                patterns: scanned.patterns,
                commands,
                stderr: run.stderr,
            })
        }
    }
}

/// Whether some pattern of `scanned`, as an opencode wildcard, matches the
/// executed command: the pattern as it is, or [`relax`]ed (its expansions
/// are only known at run time).
pub fn covered(scanned: &BashScan, executed: &Executed) -> bool {
    // `cd`, `pushd` … never produce a pattern (§8.1): their target is
    // checked as a path instead.
    if executed
        .argv
        .first()
        .is_some_and(|p| agentgate_tools::bash_scan::CD_COMMANDS.contains(&p.as_str()))
    {
        return true;
    }
    // An empty program name runs nothing: no file, builtin, function or
    // alias can be named "" (bash: "command not found").
    if executed.argv.first().is_some_and(String::is_empty) {
        return true;
    }
    // A command read from a script file is covered by the command that
    // ran the file (`source FILE`, `bash FILE`, maybe wrapped): a rule on
    // that pattern decides for the whole file, which the sandbox holds.
    if executed.source == SCRIPT_FILE {
        return scanned.patterns.iter().any(|pattern| runs_a_file(pattern));
    }
    let joined = executed.joined();
    scanned.patterns.iter().any(|pattern| {
        agentgate_permission::wildcard::matches(&joined, pattern)
            || [relax(pattern), relax_literal_dollar(pattern)]
                .into_iter()
                .flatten()
                .any(|relaxed| agentgate_permission::wildcard::matches(&joined, &relaxed))
    })
}

/// Whether `pattern` runs a script file: `source`, `.` or a shell with an
/// operand that is not an option.
fn runs_a_file(pattern: &str) -> bool {
    let mut words = pattern.split(' ');
    let Some(program) = words.next() else {
        return false;
    };
    let shell = agentgate_tools::bash_scan::SHELLS.contains(&program);
    (program == "source" || program == "." || shell)
        && words.any(|w| !w.is_empty() && !w.starts_with('-'))
}

/// `pattern` with every expansion bash performs at run time (`$(…)`,
/// `` `…` ``, `<(…)`, `>(…)`, `${…}`, `$((…))`, `$NAME`, `$1`, `$@` …)
/// replaced by `*`, which matches whatever the expansion gave (words
/// split, joined or removed). `None` when there is none, or when the
/// program itself (the first word) is an expansion: a pattern `* a` would
/// match every command, and a dynamic program must make the scan opaque.
pub fn relax(pattern: &str) -> Option<String> {
    relax_reading(pattern, false)
}

/// [`relax`], reading `$$(` and `$${` as a literal `$` before an expansion
/// (`"\$$(m2)"`, `'$'$(m2)`: the pattern keeps the `$` bash passes, and
/// the text alone cannot say which `$$` it was). A pattern is covered
/// when either reading matches.
pub fn relax_literal_dollar(pattern: &str) -> Option<String> {
    relax_reading(pattern, true)
}

fn relax_reading(pattern: &str, literal_dollar: bool) -> Option<String> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::new();
    let mut changed = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if literal_dollar
            && c == '$'
            && next == Some('$')
            && matches!(chars.get(i + 2), Some('(' | '{'))
        {
            out.push('$');
            i += 1;
            continue;
        }
        let end = match (c, next) {
            ('$', Some('(')) | ('<', Some('(')) | ('>', Some('(')) => {
                Some(closing(&chars, i + 1, '(', ')'))
            }
            ('$', Some('{')) => Some(closing(&chars, i + 1, '{', '}')),
            ('`', _) => Some(
                (i + 1..chars.len())
                    .find(|&j| chars[j] == '`' && chars[j - 1] != '\\')
                    .map_or(chars.len(), |j| j + 1),
            ),
            ('$', Some(n)) if n.is_ascii_alphabetic() || n == '_' => Some(
                (i + 1..chars.len())
                    .find(|&j| !(chars[j].is_ascii_alphanumeric() || chars[j] == '_'))
                    .unwrap_or(chars.len()),
            ),
            ('$', Some(n)) if n.is_ascii_digit() || "@*#?$!-".contains(n) => Some(i + 2),
            _ => None,
        };
        match end {
            Some(end) => {
                // An expansion that is a whole word may expand to no word
                // at all: its space goes with it.
                if out.ends_with(' ') {
                    out.pop();
                }
                if !out.ends_with('*') {
                    out.push('*');
                }
                changed = true;
                i = end;
            }
            None => {
                out.push(c);
                i += 1;
            }
        }
    }
    (changed && !out.starts_with('*')).then_some(out)
}

/// The index after the bracket closing the one at `open`.
///
/// Inside `case … esac` the `)` ending a pattern (`a)`, `*)`) closes
/// nothing: each open `case` remembers the depth it started at, and a `)`
/// at that depth is its pattern's (a fuzz find: the oracle cut
/// `$(case 1 in a) m1;; esac)` at `a)`, the scan was right).
fn closing(chars: &[char], open: usize, left: char, right: char) -> usize {
    let word_at = |j: usize, word: &str| {
        let w: Vec<char> = word.chars().collect();
        chars.get(j..j + w.len()) == Some(&w[..])
            && (j == 0 || !chars[j - 1].is_alphanumeric())
            && chars.get(j + w.len()).is_none_or(|c| !c.is_alphanumeric())
    };
    let mut depth = 0usize;
    let mut cases: Vec<usize> = Vec::new();
    for (j, &c) in chars.iter().enumerate().skip(open) {
        if left == '(' && word_at(j, "case") {
            cases.push(depth);
        } else if left == '(' && word_at(j, "esac") {
            cases.pop();
        } else if c == left {
            depth += 1;
        } else if c == right {
            if cases.last() == Some(&depth) {
                continue;
            }
            depth = depth.saturating_sub(1);
            if depth == 0 {
                return j + 1;
            }
        }
    }
    chars.len()
}

/// A shim: logs `KIND\0COUNT\0NAME\0ARG\0…` to `$DIFF_LOG/<pid>` (append:
/// a wrapper's exec keeps the pid), then exits 0 or execs `real`. `KIND`
/// is `file` when code from a script file ran it (`DIFF_FILE`, see
/// [`TRACE_ON`]) or when a shell read the shim itself as a script
/// (`source m1`, `bash m1`: `$0` is then not its full path, which the
/// kernel gives a program found on `PATH`), else `run`. A shell given a
/// script file (`sh FILE`, not `sh -c TEXT`) passes `DIFF_FILE=1` on.
fn write_shim(bin: &Path, name: &str, real: Option<&Path>) {
    let path = bin.join(name);
    let mut script = format!(
        "#!/bin/sh\nk=run\ncase $0 in '{full}') ;; *) k=file;; esac\n[ \"${{DIFF_FILE:-0}}\" = 1 ] && k=file\nprintf '%s\\0' \"$k\" \"$#\" '{name}' \"$@\" >> \"$DIFF_LOG/$$\" 2>/dev/null\n",
        full = path.display()
    );
    if agentgate_tools::bash_scan::SHELLS.contains(&name) {
        script.push_str(SHELL_FILE_OPERAND);
    }
    match real {
        Some(real) => script.push_str(&format!("exec '{}' \"$@\"\n", real.display())),
        None => script.push_str("exit 0\n"),
    }
    std::fs::write(&path, script).expect("write a shim");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
            .expect("make a shim executable");
    }
}

/// A shell shim's check for a script-file operand: the first word that is
/// not an option (after `-o NAME`, `--rcfile FILE` …) when no option holds
/// `c`.
const SHELL_FILE_OPERAND: &str = concat!(
    "f=0; o=0\n",
    "for a in \"$@\"; do\n",
    "  if [ $o = 1 ]; then o=0; continue; fi\n",
    "  case $a in\n",
    "    -o|+o|-O|+O|--rcfile|--init-file) o=1;;\n",
    "    --*) ;;\n",
    "    [-+]*c*) break;;\n",
    "    [-+]*) ;;\n",
    "    *) f=1; break;;\n",
    "  esac\n",
    "done\n",
    "[ $f = 1 ] && DIFF_FILE=1 && export DIFF_FILE\n",
);

/// Every shim record in the line's log folder.
fn read_shim_logs(log: &Path) -> Vec<Executed> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(log) else {
        return out;
    };
    for entry in entries.flatten() {
        if entry.file_name() == "trace" {
            continue;
        }
        let Ok(bytes) = std::fs::read(entry.path()) else {
            continue;
        };
        let mut fields = bytes.split(|b| *b == 0);
        while let Some(kind) = fields.next() {
            let source = if kind == b"run" { "shim" } else { SCRIPT_FILE };
            let Some(count) = fields.next() else { break };
            let Some(count) = std::str::from_utf8(count)
                .ok()
                .and_then(|c| c.parse::<usize>().ok())
            else {
                break;
            };
            let argv: Vec<String> = fields
                .by_ref()
                .take(count + 1)
                .map(|f| String::from_utf8_lossy(f).into_owned())
                .collect();
            if argv.len() == count + 1 {
                out.push(Executed { argv, source });
            }
        }
    }
    out
}

/// Every simple command in bash's xtrace output: records start with
/// [`TRACE_MARK`]s then `+ `; compound-command headers (`for`, `case`,
/// `((`, `[[`, `select`) and assignment-only records are left out.
fn read_trace(trace: &Path) -> Vec<Executed> {
    let Ok(bytes) = std::fs::read(trace) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (from_file, text) in trace_records(&bytes) {
        let text = text.strip_suffix(b"\n").unwrap_or(text);
        let text = String::from_utf8_lossy(text);
        let argv = trace_words(&text);
        let Some(first) = argv.first() else { continue };
        if ["for", "case", "((", "[[", "select"].contains(&first.as_str()) || is_assignment(first) {
            continue;
        }
        out.push(Executed {
            argv,
            source: if from_file { SCRIPT_FILE } else { "xtrace" },
        });
    }
    out
}

/// The records of an xtrace file, each with whether it came from a script
/// file. A record starts a line with its header: [`TRACE_MARK`]s (one per
/// nesting level), `+ `, `0` or `1`, [`SOURCE_END`]. bash quotes newlines
/// in traced words but not every control character (a raw 0x01, bash's
/// own escape byte, passes), so a header is only looked for at the start
/// of a line.
fn trace_records(bytes: &[u8]) -> Vec<(bool, &[u8])> {
    let header = |at: usize| -> Option<(bool, usize)> {
        let rest = &bytes[at..];
        let marks = rest.iter().take_while(|b| **b == TRACE_MARK).count();
        match rest.get(marks..marks + 4)? {
            [b'+', b' ', flag @ (b'0' | b'1'), end] if *end == SOURCE_END => {
                Some((*flag == b'1', at + marks + 4))
            }
            _ => None,
        }
    };
    let mut starts = Vec::new();
    for at in 0..bytes.len() {
        if (at == 0 || bytes[at - 1] == b'\n')
            && let Some((from_file, body)) = header(at)
        {
            starts.push((at, from_file, body));
        }
    }
    starts
        .iter()
        .enumerate()
        .map(|(i, &(_, from_file, body))| {
            let end = starts.get(i + 1).map_or(bytes.len(), |next| next.0);
            (from_file, &bytes[body..end])
        })
        .collect()
}

/// `NAME=…`, `NAME+=…` or `NAME[…]=…`.
fn is_assignment(word: &str) -> bool {
    let name_end = word
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '_'))
        .map_or(word.len(), |(i, _)| i);
    if name_end == 0 || word.as_bytes()[0].is_ascii_digit() {
        return false;
    }
    let rest = &word[name_end..];
    rest.starts_with('=') || rest.starts_with("+=") || rest.starts_with('[')
}

/// The words of one xtrace record, as bash quotes them: plain runs,
/// `'…'` (with `'\''`), `$'…'` (ANSI-C escapes, which may spell bytes
/// that are not UTF-8: decoded lossily, as the shim logs are) and `\x`.
pub fn trace_words(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut words = Vec::new();
    let mut word: Vec<u8> = Vec::new();
    let mut in_word = false;
    let mut i = 0;
    let push = |word: &mut Vec<u8>, c: char| {
        let mut buf = [0u8; 4];
        word.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
    };
    while i < chars.len() {
        let c = chars[i];
        match c {
            ' ' => {
                if in_word {
                    words.push(String::from_utf8_lossy(&std::mem::take(&mut word)).into_owned());
                    in_word = false;
                }
                i += 1;
            }
            '\'' => {
                in_word = true;
                i += 1;
                while i < chars.len() && chars[i] != '\'' {
                    push(&mut word, chars[i]);
                    i += 1;
                }
                i += 1;
            }
            '$' if chars.get(i + 1) == Some(&'\'') => {
                in_word = true;
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    if chars[i] == '\\' && i + 1 < chars.len() {
                        i = ansi_escape(&chars, i + 1, &mut word);
                    } else {
                        push(&mut word, chars[i]);
                        i += 1;
                    }
                }
                i += 1;
            }
            '\\' if i + 1 < chars.len() => {
                in_word = true;
                push(&mut word, chars[i + 1]);
                i += 2;
            }
            _ => {
                in_word = true;
                push(&mut word, c);
                i += 1;
            }
        }
    }
    if in_word {
        words.push(String::from_utf8_lossy(&word).into_owned());
    }
    words
}

/// One ANSI-C escape starting at `chars[i]` (after the backslash), appended
/// to `word` as bytes; returns the index after it.
fn ansi_escape(chars: &[char], i: usize, word: &mut Vec<u8>) -> usize {
    let simple = match chars[i] {
        'a' => Some(0x07),
        'b' => Some(0x08),
        'e' | 'E' => Some(0x1b),
        'f' => Some(0x0c),
        'n' => Some(b'\n'),
        'r' => Some(b'\r'),
        't' => Some(b'\t'),
        'v' => Some(0x0b),
        '\\' => Some(b'\\'),
        '\'' => Some(b'\''),
        '"' => Some(b'"'),
        '?' => Some(b'?'),
        _ => None,
    };
    if let Some(byte) = simple {
        word.push(byte);
        return i + 1;
    }
    let digits = |start: usize, max: usize, radix: u32| {
        let mut end = start;
        while end < chars.len() && end - start < max && chars[end].is_digit(radix) {
            end += 1;
        }
        let text: String = chars[start..end].iter().collect();
        (u32::from_str_radix(&text, radix).ok(), end)
    };
    let (value, end, is_byte) = match chars[i] {
        '0'..='7' => {
            let (v, e) = digits(i, 3, 8);
            (v, e, true)
        }
        'x' => {
            let (v, e) = digits(i + 1, 2, 16);
            (v, e, true)
        }
        'u' => {
            let (v, e) = digits(i + 1, 4, 16);
            (v, e, false)
        }
        'U' => {
            let (v, e) = digits(i + 1, 8, 16);
            (v, e, false)
        }
        other => {
            word.push(b'\\');
            let mut buf = [0u8; 4];
            word.extend_from_slice(other.encode_utf8(&mut buf).as_bytes());
            return i + 1;
        }
    };
    match value {
        Some(v) if is_byte => word.push((v & 0xff) as u8),
        Some(v) => {
            if let Some(c) = char::from_u32(v) {
                let mut buf = [0u8; 4];
                word.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
        None => {}
    }
    end
}

// ---------------------------------------------------------------------------
// Known holes

/// The classes of uncovered commands the harness has found and the scanner
/// does not handle yet (see `KNOWN_HOLES` in the CI test for a minimal line
/// of each). Each predicate recognises the construct in a line (and the
/// command that ran); a generated line explained by one is reported, not
/// failed, so the corpus keeps looking for new classes. A predicate that
/// reads the scanner's own tables stops matching by itself when the
/// scanner learns the construct.
pub const HOLE_CLASSES: &[(&str, &str)] = &[
    (
        "declaration",
        "declaration builtins (`declare`, `local`, `export`, `readonly`, `typeset`, `unset`) produce no pattern",
    ),
    (
        "glued-substitution",
        "a process substitution glued to a word (`m1 a<(m2)`) becomes its own word in the pattern; bash passes `a/dev/fd/63`",
    ),
    (
        "unlisted-wrapper",
        "exec wrappers the scanner does not know (`chrt`, `taskset`, `setpriv`, `prlimit`, `chroot`, `unshare`, `nsenter` …) hide the command they run",
    ),
    (
        "odd-characters-in-words",
        "tabs, control characters and Unicode spaces inside a word (quoted or not) are dropped or split off in the pattern; for bash they are part of the word",
    ),
    (
        "edge-blanks",
        "blanks at the start or end of an argument (`m1 x\\ `, `m1 \"a  \"`, `m1 \\ `) are trimmed, or the argument dropped, in the pattern",
    ),
    (
        "empty-argument",
        "an empty argument (`m1 a ''`) is dropped from the pattern",
    ),
    (
        "trailing-newline",
        "a trailing newline of an argument (`sh -c 'm1\\n'`) is trimmed in the pattern",
    ),
    (
        "brace-then-expansion",
        "brace expansion followed by an expansion (`{a,b}$1`) is mis-expanded (`a$ b$ 1`)",
    ),
    (
        "empty-for-list",
        "`for V in; do …` (an empty word list, valid bash) is misparsed: the commands after it become words of `do`/`then`",
    ),
    (
        "heredoc-script-continuation",
        "a heredoc fed to a shell whose body holds a `\\`-newline: the shell reading it joins the lines, the scanner does not",
    ),
    (
        "quote-in-comment",
        "a quote character inside a comment of a script given as text changes where the scanner thinks the script's strings are",
    ),
];

/// The known class explaining why `executed` ran uncovered in `line`, if
/// any (see [`HOLE_CLASSES`]).
pub fn known_hole(line: &str, executed: &Executed) -> Option<&'static str> {
    let segments: Vec<&str> = line.split('\n').collect();
    let args = executed.argv.get(1..).unwrap_or_default();
    let program = executed
        .argv
        .first()
        .map(String::as_str)
        .unwrap_or_default();
    let listed = |name: &str| agentgate_tools::bash_scan::WRAPPERS.contains(&name);
    // Closed classes (comment continuations, the named coproc, `!` before a
    // compound command, input completion) are no longer excused: such lines must be covered
    // or asked.
    // Input completion (`xargs`, `find -exec`) is closed too: the command
    // they complete is a pattern with `*` for the input.
    let class = if ["declare", "local", "export", "readonly", "typeset", "unset"].contains(&program)
    {
        "declaration"
    } else if executed.joined().contains("/dev/fd/") {
        "glued-substitution"
    } else if WRAPPERS
        .iter()
        .any(|w| !listed(w) && line.contains(&format!("{w} ")))
    {
        "unlisted-wrapper"
    } else if executed.argv.iter().any(|a| {
        a.chars().any(|c| {
            (c.is_control() && c != '\n')
                || (c.is_whitespace() && !c.is_ascii())
                || "\u{200b}\u{feff}".contains(c)
        })
    }) {
        "odd-characters-in-words"
    } else if args
        .iter()
        .any(|a| a.as_str() != a.trim_matches([' ', '\t']))
    {
        "edge-blanks"
    } else if args.iter().any(String::is_empty) {
        "empty-argument"
    } else if args.iter().any(|a| a.ends_with('\n')) {
        "trailing-newline"
    } else if line.contains("}$") {
        "brace-then-expansion"
    } else if line.contains("for V in;") {
        "empty-for-list"
    } else if line.contains("<<") && line.contains("\\\n") {
        "heredoc-script-continuation"
    } else if segments
        .iter()
        .any(|s| s.find('#').is_some_and(|i| s[i..].contains(['\'', '"'])))
    {
        "quote-in-comment"
    } else {
        return None;
    };
    Some(class)
}
