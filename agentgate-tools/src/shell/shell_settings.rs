//! bash's own variables and options, as data: which ones the scan
//! understands, and why.
//!
//! The principle is the program table's: a variable bash gives a meaning
//! to (its hash table `BASH_CMDS`, its aliases `BASH_ALIASES`, a startup
//! file `BASH_ENV`, a prompt, `PATH` …) is understood only when it is on
//! the list below as [`Meaning::Inert`], with the reason assigning it
//! changes nothing the scan models. Any other assignment to one of these
//! names (plain, `+=`, an element, an array, a declaration, a nameref, a
//! builtin that assigns a name, `${X:=…}`, arithmetic) makes the line
//! `bash_opaque`. Names bash gives no meaning to are the line's own.
//!
//! The list is checked against the installed bash (`compgen -v` of a
//! clean shell) and against the manual's "Shell Variables" section by the
//! tests at the end of this file: a variable bash knows and the list does
//! not classify fails them. The same holds for the options of `set -o`
//! and `shopt` ([`SET_OPTIONS`], [`SHOPT_OPTIONS`]).

use crate::shell::shell_word::Word;

/// What assigning a variable bash knows does, as far as the scan goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Meaning {
    /// Nothing the scan models changes: the reason.
    Inert(&'static str),
    /// bash (or the programs it starts) gives the value a meaning the scan
    /// does not follow: assigning it is opaque, for this reason.
    Opaque(&'static str),
    /// `PATH`: which file a command name runs. Judged by its value (see
    /// [`trusted_path_value`]) when the line looks a command up.
    CommandSearch,
}

/// One variable.
#[derive(Debug)]
pub(crate) struct Variable {
    /// Its name.
    pub(crate) name: &'static str,
    /// What assigning it does.
    pub(crate) meaning: Meaning,
}

const fn inert(name: &'static str, reason: &'static str) -> Variable {
    Variable {
        name,
        meaning: Meaning::Inert(reason),
    }
}

const fn opaque(name: &'static str, reason: &'static str) -> Variable {
    Variable {
        name,
        meaning: Meaning::Opaque(reason),
    }
}

/// Shared reasons.
const INFORMATION: &str = "information bash sets (assigning it changes only what later expansions read, which the scan takes as run-time text)";
const RUN_TIME: &str = "holds run-time text (the scan treats its expansions as unknown)";
const INTERACTIVE: &str =
    "only an interactive shell reads it (line editing, completion, history, job control)";
const LOCALE: &str = "the locale: messages, collation and character classes; bash's parse does not depend on it, and translated strings are chosen by TEXTDOMAIN/TEXTDOMAINDIR";

/// bash's variables (bash 5.2's manual and `compgen -v`), the few of the
/// environment the dynamic loader reads, and the environment forms of the
/// executed option values of tabled programs (git's, pagers, editors). Names are unique (a test
/// checks it).
pub(crate) const VARIABLES: &[Variable] = &[
    // ---- code, startup files, lookups: opaque ----
    opaque(
        "BASH_CMDS",
        "is bash's command hash table: an element makes a command name run another file (as `hash -p` does)",
    ),
    opaque(
        "BASH_ALIASES",
        "is bash's alias table: an element renames a command for later lines",
    ),
    opaque(
        "BASH_ENV",
        "names a file every non-interactive bash started with it sources",
    ),
    opaque("ENV", "names a file an interactive or POSIX shell sources"),
    opaque(
        "PS0",
        "is a prompt: bash expands it (command substitution included)",
    ),
    opaque(
        "PS1",
        "is a prompt: bash expands it (command substitution included)",
    ),
    opaque(
        "PS2",
        "is a prompt: bash expands it (command substitution included)",
    ),
    opaque(
        "PS3",
        "is a prompt: bash expands it (command substitution included)",
    ),
    opaque(
        "PS4",
        "is the xtrace prompt: bash expands it before every traced command",
    ),
    opaque("PROMPT_COMMAND", "is run as a command before each prompt"),
    opaque(
        "MAILPATH",
        "holds mail messages an interactive shell expands (command substitution included)",
    ),
    opaque(
        "BASH_LOADABLES_PATH",
        "is where `enable -f` finds the shared objects it loads",
    ),
    opaque(
        "BASH_XTRACEFD",
        "makes bash write its trace to (and close) a file descriptor",
    ),
    opaque(
        "FUNCNEST",
        "aborts function calls past a depth: the commands after them do not run as written",
    ),
    opaque(
        "SHELLOPTS",
        "sets `set -o` options of every bash started with it",
    ),
    opaque(
        "BASHOPTS",
        "sets `shopt` options of every bash started with it",
    ),
    opaque(
        "POSIXLY_CORRECT",
        "puts bash (and the programs started with it) in POSIX mode, which parses and runs differently",
    ),
    opaque(
        "BASH_COMPAT",
        "switches bash to an older version's behaviour",
    ),
    opaque("HISTFILE", "names a file bash writes its history to"),
    opaque("HISTFILESIZE", "truncates the history file when assigned"),
    opaque(
        "INPUTRC",
        "names the readline startup file an interactive shell reads",
    ),
    opaque("CDPATH", "changes the directory `cd NAME` goes to"),
    opaque(
        "GLOBIGNORE",
        "changes what patterns match (and turns `dotglob` on)",
    ),
    opaque("EXECIGNORE", "changes which file a command name runs"),
    opaque(
        "HOME",
        "is where `~` and a bare `cd` go; the scan resolves them with the agent's HOME",
    ),
    opaque(
        "PWD",
        "is the logical directory `cd ..` and relative `cd` start from",
    ),
    opaque("OLDPWD", "is the directory `cd -` goes to"),
    opaque(
        "DIRSTACK",
        "is the directory stack: an element changes where `popd`/`pushd` go",
    ),
    opaque(
        "SHELL",
        "is the shell programs run commands with (`script`, `flock -c`, editors)",
    ),
    opaque(
        "TEXTDOMAIN",
        "chooses the catalog `$\"…\"` strings are translated from; the translation is expanded",
    ),
    opaque(
        "TEXTDOMAINDIR",
        "chooses where `$\"…\"` strings' catalogs are read; the translation is expanded",
    ),
    opaque("FCEDIT", "is the editor `fc` runs"),
    opaque(
        "LD_PRELOAD",
        "makes the dynamic loader load a library into every program started",
    ),
    opaque(
        "LD_AUDIT",
        "makes the dynamic loader load an audit library into every program started",
    ),
    opaque(
        "LD_LIBRARY_PATH",
        "changes which libraries the dynamic loader loads",
    ),
    // ---- environment a tabled program runs (git, the pager, the editor):
    // the environment form of an option value the table makes opaque ----
    opaque(
        "GIT_CONFIG_PARAMETERS",
        "sets git configuration keys (some name commands, as `git -c` does)",
    ),
    opaque(
        "GIT_CONFIG_COUNT",
        "sets git configuration keys (some name commands, as `git -c` does)",
    ),
    opaque(
        "GIT_CONFIG",
        "names a git configuration file (whose keys may name commands)",
    ),
    opaque(
        "GIT_CONFIG_GLOBAL",
        "names a git configuration file (whose keys may name commands)",
    ),
    opaque(
        "GIT_CONFIG_SYSTEM",
        "names a git configuration file (whose keys may name commands)",
    ),
    opaque("GIT_SSH", "is the program git runs to reach a remote"),
    opaque(
        "GIT_SSH_COMMAND",
        "is the command git runs to reach a remote",
    ),
    opaque("GIT_PROXY_COMMAND", "is the command git runs to connect"),
    opaque("GIT_EXTERNAL_DIFF", "is the program `git diff` runs"),
    opaque("GIT_PAGER", "is the command git pipes its output to"),
    opaque("GIT_EDITOR", "is the editor git runs"),
    opaque("GIT_SEQUENCE_EDITOR", "is the editor `git rebase -i` runs"),
    opaque("GIT_ASKPASS", "is the program git runs for a password"),
    opaque("GIT_EXEC_PATH", "is where git runs its commands from"),
    opaque("GIT_TEMPLATE_DIR", "names the hooks a new repository gets"),
    opaque("SSH_ASKPASS", "is the program ssh runs for a password"),
    opaque("PAGER", "is the command programs pipe their output to"),
    opaque("MANPAGER", "is the command `man` pipes its output to"),
    opaque("EDITOR", "is the editor programs run"),
    opaque("VISUAL", "is the editor programs run"),
    opaque("LESSOPEN", "is a command `less` runs on each file"),
    opaque("LESSCLOSE", "is a command `less` runs after each file"),
    // ---- judged by value ----
    Variable {
        name: "PATH",
        meaning: Meaning::CommandSearch,
    },
    // ---- inert ----
    inert(
        "IFS",
        "splits the results of expansions only, which the scan takes as unknown text; literal words are never split by it",
    ),
    inert("BASH", INFORMATION),
    inert("BASHPID", INFORMATION),
    inert("BASH_ARGC", INFORMATION),
    inert("BASH_ARGV", RUN_TIME),
    inert("BASH_ARGV0", RUN_TIME),
    inert("BASH_COMMAND", RUN_TIME),
    inert("BASH_EXECUTION_STRING", RUN_TIME),
    inert("BASH_LINENO", INFORMATION),
    inert("BASH_REMATCH", RUN_TIME),
    inert("BASH_SOURCE", RUN_TIME),
    inert("BASH_SUBSHELL", INFORMATION),
    inert("BASH_VERSINFO", INFORMATION),
    inert("BASH_VERSION", INFORMATION),
    inert("BASH_MONOSECONDS", INFORMATION),
    inert("BASH_TRAPSIG", INFORMATION),
    inert("EPOCHREALTIME", INFORMATION),
    inert("EPOCHSECONDS", INFORMATION),
    inert("EUID", INFORMATION),
    inert("UID", INFORMATION),
    inert("GROUPS", INFORMATION),
    inert("HOSTNAME", INFORMATION),
    inert("HOSTTYPE", INFORMATION),
    inert("MACHTYPE", INFORMATION),
    inert("OSTYPE", INFORMATION),
    inert("PPID", INFORMATION),
    inert("SHLVL", INFORMATION),
    inert("LINENO", INFORMATION),
    inert("FUNCNAME", RUN_TIME),
    inert("PIPESTATUS", INFORMATION),
    inert(
        "RANDOM",
        "a number (assignments are arithmetic, checked as such)",
    ),
    inert(
        "SRANDOM",
        "a number (assignments are arithmetic, checked as such)",
    ),
    inert(
        "SECONDS",
        "a number (assignments are arithmetic, checked as such)",
    ),
    inert(
        "HISTCMD",
        "a number (assignments are arithmetic, checked as such)",
    ),
    inert(
        "OPTIND",
        "getopts' index (assignments are arithmetic, checked as such)",
    ),
    inert("OPTARG", RUN_TIME),
    inert("OPTERR", "whether getopts prints its errors"),
    inert("REPLY", RUN_TIME),
    inert("MAPFILE", RUN_TIME),
    inert("COPROC", RUN_TIME),
    inert("_", RUN_TIME),
    inert(
        "TIMEFORMAT",
        "the format `time` prints with (`%` escapes only, not expanded)",
    ),
    inert("TMOUT", "a timeout for `read` and interactive input"),
    inert(
        "TMPDIR",
        "where bash and programs create temporary files, under fresh names",
    ),
    inert("TERM", "the terminal type (terminfo data, no code)"),
    inert("COLUMNS", "the terminal width"),
    inert("LINES", "the terminal height"),
    inert("CHILD_MAX", "how many exit statuses bash remembers"),
    inert("LANG", LOCALE),
    inert("LC_ALL", LOCALE),
    inert("LC_COLLATE", LOCALE),
    inert("LC_CTYPE", LOCALE),
    inert("LC_MESSAGES", LOCALE),
    inert("LC_NUMERIC", LOCALE),
    inert("LC_TIME", LOCALE),
    inert(
        "MAIL",
        "the file an interactive shell checks the time of (its message is not expanded; MAILPATH's is)",
    ),
    inert("MAILCHECK", INTERACTIVE),
    inert("HISTSIZE", INTERACTIVE),
    inert("HISTCONTROL", INTERACTIVE),
    inert("HISTIGNORE", INTERACTIVE),
    inert("HISTTIMEFORMAT", INTERACTIVE),
    inert("HOSTFILE", INTERACTIVE),
    inert("IGNOREEOF", INTERACTIVE),
    inert("PROMPT_DIRTRIM", INTERACTIVE),
    inert("FIGNORE", INTERACTIVE),
    inert("EMACS", INTERACTIVE),
    inert("INSIDE_EMACS", INTERACTIVE),
    inert("auto_resume", INTERACTIVE),
    inert("histchars", INTERACTIVE),
    inert("COMP_WORDBREAKS", INTERACTIVE),
    inert("COMP_CWORD", INTERACTIVE),
    inert("COMP_KEY", INTERACTIVE),
    inert("COMP_LINE", INTERACTIVE),
    inert("COMP_POINT", INTERACTIVE),
    inert("COMP_TYPE", INTERACTIVE),
    inert("COMP_WORDS", INTERACTIVE),
    inert("COMPREPLY", INTERACTIVE),
    inert("READLINE_ARGUMENT", INTERACTIVE),
    inert("READLINE_LINE", INTERACTIVE),
    inert("READLINE_MARK", INTERACTIVE),
    inert("READLINE_POINT", INTERACTIVE),
    inert(
        "GLOBSORT",
        "the order pattern matches are listed in (which files match does not change)",
    ),
];

/// What assigning `name` does, if bash gives it a meaning (`None`: a
/// variable of the line's own). `BASH_FUNC_name%%` defines a function for
/// a child bash.
pub(crate) fn meaning(name: &str) -> Option<Meaning> {
    if name.starts_with("GIT_CONFIG_KEY_") || name.starts_with("GIT_CONFIG_VALUE_") {
        return Some(Meaning::Opaque(
            "sets git configuration keys (some name commands, as `git -c` does)",
        ));
    }
    if name.starts_with("BASH_FUNC_") {
        return Some(Meaning::Opaque(
            "defines a function for every bash started with it",
        ));
    }
    VARIABLES
        .iter()
        .find(|variable| variable.name == name)
        .map(|variable| variable.meaning)
}

/// Directories a `PATH` entry may name without changing which program a
/// command name runs to one the project controls: the system's, and the
/// user's own under `$HOME` (outside the project; the sandbox does not let
/// a command write there).
const TRUSTED_PATH_PREFIXES: &[&str] = &[
    "/usr/",
    "/bin/",
    "/sbin/",
    "/snap/bin/",
    "$HOME/",
    "${HOME}/",
    "~/",
];

/// Whether a value assigned to `PATH` only adds trusted directories to the
/// current `PATH`: each `:`-separated entry is `$PATH`, `${PATH}`, or a
/// directory under [`TRUSTED_PATH_PREFIXES`] (no `..`, no other
/// expansion). An empty entry is the current directory: not trusted.
pub(crate) fn trusted_path_value(value: &str) -> bool {
    let value = value.trim_matches(['"', '\'']);
    !value.is_empty()
        && value.split(':').all(|entry| {
            let under = |prefix: &&str| format!("{entry}/").starts_with(prefix);
            let rest = entry
                .strip_prefix("${HOME}")
                .or_else(|| entry.strip_prefix("$HOME"))
                .unwrap_or(entry);
            matches!(entry, "$PATH" | "${PATH}")
                || (TRUSTED_PATH_PREFIXES.iter().any(under)
                    && !entry.contains("..")
                    && !rest.contains(['$', '`', '\\', '*', '?', '[']))
        })
}

/// Why putting `NAME=value` in the environment of a command a program
/// runs is opaque, if it is: one of bash's variables the table does not
/// list inert, or `PATH` given more than trusted directories.
pub(crate) fn environment_reason(assignment: &str) -> Option<String> {
    let (name, value) = assignment.split_once('=')?;
    match meaning(name)? {
        Meaning::Inert(_) => None,
        Meaning::Opaque(why) => Some(format!("sets `{name}`, which {why}")),
        Meaning::CommandSearch if trusted_path_value(value) => None,
        Meaning::CommandSearch => Some(format!(
            "sets `PATH` to `{value}`, which changes which file a command name runs"
        )),
    }
}

/// What turning an option of `set -o` or `shopt` on (or off) does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Toggle {
    /// Nothing the scan models changes either way.
    Inert,
    /// Turning it on is opaque, for this reason (off is inert).
    OnOpaque(&'static str),
    /// Turning it off is opaque, for this reason (on is inert).
    OffOpaque(&'static str),
    /// Either way is opaque.
    Opaque(&'static str),
}

/// The options of `set -o` (and bash's command line `-o`), with the letter
/// of `set -x` where there is one.
pub(crate) const SET_OPTIONS: &[(&str, Option<char>, Toggle)] = &[
    ("allexport", Some('a'), Toggle::Inert),
    (
        "braceexpand",
        Some('B'),
        Toggle::OffOpaque(
            "stops brace expansion, which the scan performs as bash does by default (a fuzz find: `set +B; m {a,b}`)",
        ),
    ),
    ("emacs", None, Toggle::Inert),
    ("errexit", Some('e'), Toggle::Inert),
    ("errtrace", Some('E'), Toggle::Inert),
    ("functrace", Some('T'), Toggle::Inert),
    ("hashall", Some('h'), Toggle::Inert),
    (
        "histexpand",
        Some('H'),
        Toggle::OnOpaque("history expansion (`!…`) rewrites the lines bash reads"),
    ),
    ("history", None, Toggle::Inert),
    ("ignoreeof", None, Toggle::Inert),
    (
        "interactive-comments",
        None,
        Toggle::OffOpaque("without it `#` starts no comment: the rest of a line runs"),
    ),
    (
        "keyword",
        Some('k'),
        Toggle::OnOpaque(
            "puts every `NAME=value` argument in the command's environment (`bash -c … BASH_ENV=f`)",
        ),
    ),
    ("monitor", Some('m'), Toggle::Inert),
    ("noclobber", Some('C'), Toggle::Inert),
    ("noexec", Some('n'), Toggle::Inert),
    ("noglob", Some('f'), Toggle::Inert),
    ("nolog", None, Toggle::Inert),
    ("notify", Some('b'), Toggle::Inert),
    ("nounset", Some('u'), Toggle::Inert),
    ("onecmd", Some('t'), Toggle::Inert),
    ("physical", Some('P'), Toggle::Inert),
    ("pipefail", None, Toggle::Inert),
    (
        "posix",
        None,
        Toggle::Opaque("POSIX mode parses and runs lines differently"),
    ),
    ("privileged", Some('p'), Toggle::Inert),
    ("verbose", Some('v'), Toggle::Inert),
    ("vi", None, Toggle::Inert),
    ("xtrace", Some('x'), Toggle::Inert),
];

/// The options of `shopt` (and bash's command line `-O`).
pub(crate) const SHOPT_OPTIONS: &[(&str, Toggle)] = &[
    ("autocd", Toggle::Inert),
    ("assoc_expand_once", Toggle::Inert),
    (
        "cdable_vars",
        Toggle::OnOpaque("makes `cd NAME` go to the directory the variable NAME holds"),
    ),
    ("cdspell", Toggle::Inert),
    ("checkhash", Toggle::Inert),
    ("checkjobs", Toggle::Inert),
    ("checkwinsize", Toggle::Inert),
    ("cmdhist", Toggle::Inert),
    (
        "compat31",
        Toggle::Opaque("switches bash to an older version's behaviour"),
    ),
    (
        "compat32",
        Toggle::Opaque("switches bash to an older version's behaviour"),
    ),
    (
        "compat40",
        Toggle::Opaque("switches bash to an older version's behaviour"),
    ),
    (
        "compat41",
        Toggle::Opaque("switches bash to an older version's behaviour"),
    ),
    (
        "compat42",
        Toggle::Opaque("switches bash to an older version's behaviour"),
    ),
    (
        "compat43",
        Toggle::Opaque("switches bash to an older version's behaviour"),
    ),
    (
        "compat44",
        Toggle::Opaque("switches bash to an older version's behaviour"),
    ),
    ("complete_fullquote", Toggle::Inert),
    ("direxpand", Toggle::Inert),
    ("dirspell", Toggle::Inert),
    ("dotglob", Toggle::Inert),
    ("execfail", Toggle::Inert),
    (
        "expand_aliases",
        Toggle::OnOpaque("makes aliases (`alias`, `BASH_ALIASES`) rename commands"),
    ),
    (
        "extdebug",
        Toggle::OnOpaque("lets a DEBUG trap skip or replace the commands that follow"),
    ),
    ("extglob", Toggle::Inert),
    ("extquote", Toggle::Inert),
    ("failglob", Toggle::Inert),
    ("force_fignore", Toggle::Inert),
    ("globasciiranges", Toggle::Inert),
    ("globskipdots", Toggle::Inert),
    ("globstar", Toggle::Inert),
    ("gnu_errfmt", Toggle::Inert),
    ("histappend", Toggle::Inert),
    ("histreedit", Toggle::Inert),
    ("histverify", Toggle::Inert),
    ("hostcomplete", Toggle::Inert),
    ("huponexit", Toggle::Inert),
    ("inherit_errexit", Toggle::Inert),
    (
        "interactive_comments",
        Toggle::OffOpaque("without it `#` starts no comment: the rest of a line runs"),
    ),
    ("lastpipe", Toggle::Inert),
    ("lithist", Toggle::Inert),
    ("localvar_inherit", Toggle::Inert),
    ("localvar_unset", Toggle::Inert),
    ("login_shell", Toggle::Inert),
    ("mailwarn", Toggle::Inert),
    ("no_empty_cmd_completion", Toggle::Inert),
    ("nocaseglob", Toggle::Inert),
    ("nocasematch", Toggle::Inert),
    ("noexpand_translation", Toggle::Inert),
    ("nullglob", Toggle::Inert),
    ("patsub_replacement", Toggle::Inert),
    ("progcomp", Toggle::Inert),
    ("progcomp_alias", Toggle::Inert),
    ("promptvars", Toggle::Inert),
    ("restricted_shell", Toggle::Inert),
    ("shift_verbose", Toggle::Inert),
    ("sourcepath", Toggle::Inert),
    ("varredir_close", Toggle::Inert),
    ("xpg_echo", Toggle::Inert),
];

/// Why turning the option `name` on (`on`) or off is opaque, if it is;
/// an option bash does not list here is opaque too (`shopt` when `shopt`
/// is true, else `set -o`).
pub(crate) fn option_toggle(name: &str, on: bool, shopt: bool) -> Option<String> {
    let toggle = if shopt {
        SHOPT_OPTIONS
            .iter()
            .find(|(option, _)| *option == name)
            .map(|(_, toggle)| *toggle)
    } else {
        SET_OPTIONS
            .iter()
            .find(|(option, _, _)| *option == name)
            .map(|(_, _, toggle)| *toggle)
    };
    let kind = if shopt { "shopt" } else { "set -o" };
    let reason = match toggle {
        None => {
            return Some(format!(
                "the `{kind}` option `{name}`, which the scan does not model"
            ));
        }
        Some(Toggle::Inert) => return None,
        Some(Toggle::OnOpaque(reason)) if on => reason,
        Some(Toggle::OffOpaque(reason)) if !on => reason,
        Some(Toggle::Opaque(reason)) => reason,
        Some(_) => return None,
    };
    let state = if on { "on" } else { "off" };
    Some(format!(
        "the line turns the `{kind}` option `{name}` {state}: it {reason}"
    ))
}

/// Why the `set` letter `letter` turned on (`on`) or off is opaque, if it
/// is (`c`, `i`, `l`, `r`, `s`, `D` are bash's command line only: not
/// options of `set`, handled by the caller).
pub(crate) fn letter_toggle(letter: char, on: bool) -> Option<String> {
    match SET_OPTIONS
        .iter()
        .find(|(_, short, _)| *short == Some(letter))
    {
        Some((name, _, _)) => option_toggle(name, on, false),
        None => Some(format!(
            "the `set` flag `-{letter}`, which the scan does not model"
        )),
    }
}

/// Why the arguments of `set` are opaque, one reason per option that is:
/// `-x`/`+x` letters, `-o NAME`/`+o NAME`; the options end at `--`, `-`
/// or the first other word (the positional parameters).
pub(crate) fn judge_set(args: &[Word]) -> Vec<String> {
    let mut reasons = Vec::new();
    let mut i = 0;
    while let Some(word) = args.get(i) {
        let text = word.text.as_str();
        if matches!(text, "--" | "-") {
            break;
        }
        let (on, cluster) = match (text.strip_prefix('-'), text.strip_prefix('+')) {
            (Some(cluster), _) => (true, cluster),
            (None, Some(cluster)) => (false, cluster),
            _ => break,
        };
        if word.dynamic {
            reasons.push(format!("`set {text}`: options only known at run time"));
            break;
        }
        let mut step = 1;
        for letter in cluster.chars() {
            if letter == 'o' {
                // `set -o` alone lists the options.
                if let Some(name) = args.get(i + step) {
                    reasons.extend(option_word(name, on, false));
                }
                step += 1;
            } else {
                reasons.extend(letter_toggle(letter, on));
            }
        }
        i += step;
    }
    reasons
}

/// Why the arguments of `shopt` are opaque: the names it sets (`-s`) or
/// unsets (`-u`); `-o` names `set -o` options; `-p`/`-q` alone only print.
pub(crate) fn judge_shopt(args: &[Word]) -> Vec<String> {
    let mut on = None;
    let mut set_names = false;
    let mut i = 0;
    while let Some(word) = args.get(i) {
        let Some(flags) = word.text.strip_prefix('-') else {
            break;
        };
        i += 1;
        if flags == "-" {
            break;
        }
        if word.dynamic {
            return vec![format!(
                "`shopt {}`: options only known at run time",
                word.text
            )];
        }
        for flag in flags.chars() {
            match flag {
                's' => on = Some(true),
                'u' => on = Some(false),
                'o' => set_names = true,
                'p' | 'q' => {}
                other => return vec![format!("`shopt -{other}`, which the scan does not model")],
            }
        }
    }
    let Some(on) = on else {
        return Vec::new();
    };
    args[i..]
        .iter()
        .flat_map(|name| option_word(name, on, !set_names))
        .collect()
}

/// The judgement of one option name given as a word.
pub(crate) fn option_word(name: &Word, on: bool, shopt: bool) -> Option<String> {
    if name.dynamic {
        return Some(format!(
            "the line turns on or off an option only known at run time (`{}`)",
            name.text
        ));
    }
    option_toggle(&name.text, on, shopt)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    /// The variables the bash manual's PARAMETERS section names (bash
    /// 5.2: "Shell Variables", Bourne and bash ones), as data: the installed
    /// bash may not print every one with `compgen -v`.
    const MANUAL: &[&str] = &[
        "CDPATH",
        "HOME",
        "IFS",
        "MAIL",
        "MAILPATH",
        "OPTARG",
        "OPTIND",
        "PATH",
        "PS1",
        "PS2",
        "_",
        "BASH",
        "BASHOPTS",
        "BASHPID",
        "BASH_ALIASES",
        "BASH_ARGC",
        "BASH_ARGV",
        "BASH_ARGV0",
        "BASH_CMDS",
        "BASH_COMMAND",
        "BASH_COMPAT",
        "BASH_ENV",
        "BASH_EXECUTION_STRING",
        "BASH_LINENO",
        "BASH_LOADABLES_PATH",
        "BASH_REMATCH",
        "BASH_SOURCE",
        "BASH_SUBSHELL",
        "BASH_VERSINFO",
        "BASH_VERSION",
        "BASH_XTRACEFD",
        "CHILD_MAX",
        "COLUMNS",
        "COMP_CWORD",
        "COMP_KEY",
        "COMP_LINE",
        "COMP_POINT",
        "COMP_TYPE",
        "COMP_WORDBREAKS",
        "COMP_WORDS",
        "COMPREPLY",
        "COPROC",
        "DIRSTACK",
        "EMACS",
        "ENV",
        "EPOCHREALTIME",
        "EPOCHSECONDS",
        "EUID",
        "EXECIGNORE",
        "FCEDIT",
        "FIGNORE",
        "FUNCNAME",
        "FUNCNEST",
        "GLOBIGNORE",
        "GROUPS",
        "histchars",
        "HISTCMD",
        "HISTCONTROL",
        "HISTFILE",
        "HISTFILESIZE",
        "HISTIGNORE",
        "HISTSIZE",
        "HISTTIMEFORMAT",
        "HOSTFILE",
        "HOSTNAME",
        "HOSTTYPE",
        "IGNOREEOF",
        "INPUTRC",
        "INSIDE_EMACS",
        "LANG",
        "LC_ALL",
        "LC_COLLATE",
        "LC_CTYPE",
        "LC_MESSAGES",
        "LC_NUMERIC",
        "LC_TIME",
        "LINENO",
        "LINES",
        "MACHTYPE",
        "MAILCHECK",
        "MAPFILE",
        "OLDPWD",
        "OPTERR",
        "OSTYPE",
        "PIPESTATUS",
        "POSIXLY_CORRECT",
        "PPID",
        "PROMPT_COMMAND",
        "PROMPT_DIRTRIM",
        "PS0",
        "PS3",
        "PS4",
        "PWD",
        "RANDOM",
        "READLINE_ARGUMENT",
        "READLINE_LINE",
        "READLINE_MARK",
        "READLINE_POINT",
        "REPLY",
        "SECONDS",
        "SHELL",
        "SHELLOPTS",
        "SHLVL",
        "SRANDOM",
        "TIMEFORMAT",
        "TMOUT",
        "TMPDIR",
        "UID",
        "auto_resume",
        "TEXTDOMAIN",
        "TEXTDOMAINDIR",
    ];

    /// The installed bash's output for `script`, run with an empty
    /// environment and no startup files (`None` without bash).
    fn clean_bash(script: &str) -> Option<Vec<String>> {
        let output = std::process::Command::new("bash")
            .env_clear()
            .args(["--norc", "--noprofile", "-c", script])
            .output()
            .ok()?;
        Some(
            String::from_utf8_lossy(&output.stdout)
                .lines()
                .map(|line| line.split_whitespace().next().unwrap_or("").to_string())
                .filter(|name| !name.is_empty())
                .collect(),
        )
    }

    #[test]
    fn names_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for variable in VARIABLES {
            assert!(seen.insert(variable.name), "`{}` twice", variable.name);
        }
    }

    #[test]
    fn every_variable_bash_knows_is_classified() {
        let mut names: Vec<String> = MANUAL.iter().map(|n| n.to_string()).collect();
        match clean_bash("compgen -v") {
            Some(found) => {
                assert!(found.iter().any(|n| n == "BASH_CMDS"), "{found:?}");
                names.extend(found);
            }
            None => println!("bash is not installed: only the manual's list is checked"),
        }
        let unclassified: Vec<&String> = names.iter().filter(|n| meaning(n).is_none()).collect();
        assert!(
            unclassified.is_empty(),
            "bash gives these variables a meaning and the table does not classify them: {unclassified:?}"
        );
    }

    #[test]
    fn every_option_bash_knows_is_classified() {
        let Some(shopt) = clean_bash("shopt") else {
            println!("bash is not installed: nothing to compare");
            return;
        };
        let set = clean_bash("set -o").unwrap_or_default();
        assert!(shopt.len() > 40 && set.len() > 20, "{shopt:?} {set:?}");
        for name in &shopt {
            assert!(
                SHOPT_OPTIONS.iter().any(|(option, _)| option == name),
                "the shopt option `{name}` is not classified"
            );
        }
        for name in &set {
            assert!(
                SET_OPTIONS.iter().any(|(option, _, _)| option == name),
                "the set -o option `{name}` is not classified"
            );
        }
    }

    fn opaque(line: &str) -> Vec<String> {
        crate::shell::bash_scan::scan(line).unwrap().opaque
    }

    /// Every way of assigning one of bash's tables, in and out of a
    /// function, is opaque.
    #[test]
    fn assignments_to_bash_variables_are_opaque() {
        let lines = [
            "BASH_CMDS[ls]=/bin/bash; ls -c 'rm -rf src'",
            "shopt -s expand_aliases; BASH_ALIASES[ls]='rm -rf src'\nls",
            "BASH_ALIASES=([ls]='rm -rf src')",
            "declare -A BASH_ALIASES=([ls]='rm -rf src')",
            "declare -A BASH_ALIASES='([ls]=rm)'",
            "declare 'BASH_CMDS[ls]=/bin/rm'",
            "declare -n x=BASH_CMDS; x[ls]=/bin/rm; ls",
            "declare -n x; x=BASH_CMDS; x[ls]=/bin/rm",
            "typeset -n x=BASH_ALIASES",
            "export BASH_ENV=./x; bash -c true",
            "BASH_CMDS+=([ls]=/bin/rm)",
            "read 'BASH_CMDS[ls]' <<< /bin/rm",
            "printf -v 'BASH_CMDS[ls]' /bin/rm",
            "mapfile BASH_ALIASES < f",
            "(( BASH_CMDS[ls]=1 ))",
            "let 'BASH_CMDS[ls]=1'",
            ": ${BASH_ENV:=x}",
            "for BASH_ENV in x; do bash -c true; done",
            "f() { BASH_CMDS[ls]=/bin/rm; }; f; ls",
            "f() { local -n r=BASH_CMDS; r[ls]=/bin/rm; }",
            "env BASH_ENV=x bash -c true",
            "sudo SHELLOPTS=xtrace bash -c true",
            "PATH=tools:$PATH ls",
            "PATH=; ls",
            "unset PATH; ls",
            "f() { local PATH; ls; }",
            "export PATH=$PWD/bin:$PATH; make",
            "PATH+=:.; ls",
            "read PATH < f; ls",
            "env PATH=tools ls",
            "CDPATH=/etc cd ssh",
            "HOME=/etc; cd; cat passwd",
            "POSIXLY_CORRECT=1 ls",
            "LD_PRELOAD=./x.so ls",
            "set -k; bash -c true BASH_ENV=x",
            "set +o interactive-comments",
            "bash -O expand_aliases -c 'ls'",
            "bash +O interactive_comments -c 'ls'",
            "bash -k -c 'ls'",
            "bash --rcfile /dev/stdin -i -c true <<< 'rm -rf src'",
            "bash --rcfile <(echo rm -rf src) -ic true",
            "bash --init-file <(echo rm -rf src) -i",
            "sh -o posix -c ls",
            ": {PATH}>/dev/null; ls",
            "PATH=./bin:$PATH; enable -n cd; cd x",
            "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=x git log",
            "GIT_SSH_COMMAND='rm -rf src' git fetch",
            "env PAGER='rm -rf src' git log",
            "exec {BASH_XTRACEFD}>log",
        ];
        for line in lines {
            let line = line.replace("\\n", "\n");
            assert!(!opaque(&line).is_empty(), "{line:?} is not opaque");
        }
    }

    /// The ordinary uses stay clear.
    #[test]
    fn ordinary_assignments_stay_clear() {
        for line in [
            "IFS= read -r line < f",
            "while IFS=: read -r a b; do echo $a; done < f",
            "export PATH=\"$HOME/.cargo/bin:$PATH\"; cargo build",
            "PATH=/usr/local/bin:$PATH make",
            "export PATH=$PWD/bin:$PATH",
            "LANG=C sort f",
            "TMPDIR=/tmp cargo test",
            "RANDOM=42; echo $RANDOM",
            "local IFS=,",
            "export RUST_LOG=debug",
            "declare -A map=([a]=1)",
            "set -euo pipefail",
            "set -- a b",
            "set +x",
            "shopt -s nullglob globstar extglob",
            "bash --rcfile ./rc -i -c true",
            "bash -eux -c ls",
            "env -i PATH=/usr/bin:/bin make",
            "for i in 1 2; do echo $i; done",
            "(( i = SECONDS + 1 ))",
            "exec {fd}>log; echo x >&$fd",
        ] {
            assert!(opaque(line).is_empty(), "{line:?}: {:?}", opaque(line));
        }
    }

    /// tree-sitter reads `_+=v a` as the program `_+=v`; bash assigns `_`
    /// and runs `a` (a fuzz find of the new grammar).
    #[test]
    fn misparsed_assignments_are_assignments() {
        let scanned = crate::shell::bash_scan::scan("_+=m4 a && X=1 m1").unwrap();
        assert!(scanned.patterns.iter().any(|p| p == "a"), "{scanned:?}");
        assert!(!opaque("_+=x BASH_CMDS+=([ls]=/bin/rm) ls").is_empty());
    }

    #[test]
    fn path_values() {
        for value in [
            "/usr/bin:/bin",
            "\"$HOME/.cargo/bin:$PATH\"",
            "$PATH:/usr/local/bin",
            "${PATH}:~/bin",
            "/sbin",
        ] {
            assert!(trusted_path_value(value), "{value}");
        }
        for value in [
            "",
            "tools:$PATH",
            ".:$PATH",
            ":$PATH",
            "$PATH:",
            "$PWD/bin:$PATH",
            "/usr/../tmp:$PATH",
            "/tmp/x",
            "$HOME/$X",
            "/binx",
            "$(pwd)",
        ] {
            assert!(!trusted_path_value(value), "{value}");
        }
    }

    #[test]
    fn toggles() {
        assert!(option_toggle("expand_aliases", true, true).is_some());
        assert!(option_toggle("expand_aliases", false, true).is_none());
        assert!(option_toggle("interactive_comments", false, true).is_some());
        assert!(option_toggle("nullglob", true, true).is_none());
        assert!(option_toggle("pipefail", true, false).is_none());
        assert!(option_toggle("posix", false, false).is_some());
        assert!(option_toggle("frob", true, false).is_some());
        assert!(letter_toggle('k', true).is_some());
        assert!(letter_toggle('e', true).is_none());
        assert!(letter_toggle('H', false).is_none());
        let words = |line: &str| -> Vec<Word> {
            line.split(' ')
                .flat_map(crate::shell::shell_word::words_of)
                .collect()
        };
        assert!(judge_set(&words("-euo pipefail")).is_empty());
        assert!(judge_set(&words("-e -- -k")).is_empty());
        assert!(judge_set(&words("-o")).is_empty());
        assert_eq!(judge_set(&words("-ek")).len(), 1);
        assert_eq!(judge_set(&words("+o interactive-comments")).len(), 1);
        assert_eq!(judge_set(&words("-o posix")).len(), 1);
        assert!(judge_shopt(&words("-s nullglob globstar")).is_empty());
        assert!(judge_shopt(&words("-u expand_aliases")).is_empty());
        assert!(judge_shopt(&words("expand_aliases")).is_empty());
        assert_eq!(judge_shopt(&words("-s expand_aliases")).len(), 1);
        assert_eq!(judge_shopt(&words("-so keyword")).len(), 1);
        assert_eq!(judge_shopt(&words("-u interactive_comments")).len(), 1);
        assert_eq!(judge_shopt(&words("-s $X")).len(), 1);
    }
}
