//! What the scanner knows about programs and bash builtins, as data: one
//! [`Program`] entry per name, read by the walk of `shell_command` (what
//! runs, which words are paths) and by `shell_eval` (which words are
//! variable names).
//!
//! The principle is "accept what is modelled, ask for the rest": a program
//! with [`Options::Known`] has every option it takes listed, and an option
//! that is not (or an abbreviation that matches none or several) makes the
//! command opaque, naming the program and the option. Every bash builtin
//! and keyword has an entry; a program without one runs nothing the scan
//! needs to see (its words are checked as paths when they look like ones).
//!
//! To add a program: add one entry to [`PROGRAMS`] (its options, what it
//! runs, what it evaluates, which names it sets, which words are paths)
//! with an `example` when it runs a command or evaluates text: the
//! property test at the end of this file then hides `rm -f x` in it under
//! generated option spellings (clustered, attached, `--long=v`,
//! abbreviated, `--`) and checks the scan reports it or is opaque.

/// An option of a program: a short letter, a long name, or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Opt {
    /// The letter of `-x`.
    pub(crate) short: Option<char>,
    /// The name of `--name`, with its dashes.
    pub(crate) long: Option<&'static str>,
}

/// A short option.
pub(crate) const fn s(c: char) -> Opt {
    Opt {
        short: Some(c),
        long: None,
    }
}

/// A long option.
pub(crate) const fn l(name: &'static str) -> Opt {
    Opt {
        short: None,
        long: Some(name),
    }
}

/// An option with both spellings.
pub(crate) const fn sl(c: char, name: &'static str) -> Opt {
    Opt {
        short: Some(c),
        long: Some(name),
    }
}

/// How a program's options are read.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Options {
    /// Options change nothing the scan models (`echo -n`, `pwd -P`): every
    /// word is an operand for the walk (paths are still found).
    Any,
    /// The program takes no options: the first word is an operand.
    None,
    /// Exactly these options; any other is opaque.
    Known(&'static Spec),
}

/// The options a program takes.
#[derive(Debug)]
pub(crate) struct Spec {
    /// Short letters that take no value.
    pub(crate) flags: &'static str,
    /// Short letters that take a value: the rest of the cluster, or the
    /// next word.
    pub(crate) values: &'static str,
    /// Short letters whose value is optional and only attached (`-m[file]`).
    pub(crate) optional: &'static str,
    /// Long options that take no value (`--name=v` is accepted for those
    /// listed in `long_optional`).
    pub(crate) long_flags: &'static [&'static str],
    /// Long options that take a value: `--name=v` or `--name v`.
    pub(crate) long_values: &'static [&'static str],
    /// Long options whose value is optional and only given with `=`.
    pub(crate) long_optional: &'static [&'static str],
    /// Long options that take two values (`bwrap --bind SRC DEST`).
    pub(crate) long_pairs: &'static [&'static str],
    /// `+x` is an option too (`set +e`, `declare +x`).
    pub(crate) plus: bool,
    /// Whether GNU-style abbreviations of long options are accepted.
    pub(crate) abbreviations: bool,
    /// bash's own rule: a value letter in a cluster takes the next word,
    /// and the cluster goes on (`bash -Ox extglob` is `-O extglob -x`).
    pub(crate) values_from_next: bool,
    /// tar's old style: a first word without a dash is a cluster whose
    /// value letters take the next words (`tar czfI a.tgz prog src`).
    pub(crate) bundled_first: bool,
}

/// An empty spec to start entries from.
const SPEC: Spec = Spec {
    flags: "",
    values: "",
    optional: "",
    long_flags: &[],
    long_values: &[],
    long_optional: &[],
    long_pairs: &[],
    plus: false,
    abbreviations: true,
    values_from_next: false,
    bundled_first: false,
};

/// What a program runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Runs {
    /// Nothing the scan needs to follow.
    Nothing,
    /// The command made of its operands, after `skip` operands
    /// (`timeout DURATION cmd`: 1, `nice cmd`: 0). Without a command it
    /// runs nothing (`reads_stdin` false) unless `shell_without` is set.
    Command {
        /// Operands before the command.
        skip: usize,
        /// Without a command it starts an interactive shell (`chroot /`,
        /// `fakeroot`): it reads commands from its input.
        shell_without: bool,
    },
    /// A special shape the walk knows by name.
    Shape(Shape),
    /// It runs code the scan cannot see (a remote command, a language of
    /// its own): always opaque, for the reason given.
    Opaque(&'static str),
}

/// The shapes of commands that need more than "skip options, then the
/// command".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// `sudo [opts] [NAME=v…] cmd`, `-s`/`-i` run the command through a
    /// shell, `-e`/`-l`/`-v`/`-k` run none.
    Sudo,
    /// `env [opts] [NAME=v…] cmd`, `-S STRING` splits a command line.
    Env,
    /// `command [-p] cmd`; `-v`/`-V` only look the name up.
    CommandBuiltin,
    /// `taskset MASK cmd` or `taskset -c LIST cmd`; `-p` acts on a pid.
    Taskset,
    /// `flock [opts] FILE [opts] cmd` or `flock FILE -c STRING`.
    Flock,
    /// `su [opts] [-] [USER [ARGS…]]`: args go to the user's shell.
    Su,
    /// `runuser -u USER cmd` or like `su`.
    Runuser,
    /// `xargs [opts] [cmd]`: completes the command with its input.
    Xargs,
    /// `find … -exec cmd ;` (also `-execdir`, `-ok`, `-okdir`).
    Find,
    /// `watch [opts] STRING…` (a shell command line) or `-x cmd`.
    Watch,
    /// `eval TEXT…`: the operands joined are a command line.
    Eval,
    /// `trap [opts] TEXT SIGNAL…`: the first operand is a command line.
    Trap,
    /// `source FILE` / `. FILE`: a file of commands.
    Source,
    /// A bash-like shell: `-c SCRIPT`, a script file or its input.
    Shell,
    /// A shell whose language is not bash's: opaque.
    OtherShell,
    /// `sg GROUP [-c] COMMAND`: the command is run by `/bin/sh -c`.
    Sg,
    /// `gdb … --args cmd`: only `-batch` without gdb commands is modelled.
    Gdb,
    /// `perf record|stat|trace [opts] cmd`.
    Perf,
    /// `busybox APPLET …`, `toybox APPLET …`.
    Multicall,
    /// `jobs -x cmd`: runs the command (job specs replaced by pids).
    Jobs,
    /// `entr [opts] cmd`, `-s` runs a shell command line.
    Entr,
    /// `script [opts] [FILE]` without `-c`: an interactive shell reading
    /// its input.
    Script,
    /// `hyperfine CMD…`: every operand is a command line run by a shell.
    ScriptOperands,
    /// `setarch ARCH [opts] cmd` (`linux32`/`linux64` without `ARCH`).
    Setarch,
    /// `alias NAME=VALUE`: renames commands for later lines (opaque);
    /// `alias` alone or `alias -p` prints.
    Alias,
    /// `zip`: `-TT`/`--unzip-command` run a shell command.
    Zip,
    /// `set [opts] [args]`: options judged by `shell_settings`.
    Set,
    /// `shopt [-su] NAME…`: options judged by `shell_settings`.
    Shopt,
}

/// What an option's value is: every option that takes a value has one
/// (a test checks it), and the walk handles each kind; an option given
/// with no kind in the table is opaque.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Value {
    /// Data the program reads as such (a number, a name, a format, a
    /// signal, a descriptor number).
    Inert,
    /// A path the program reads (or changes into).
    Read,
    /// A path the program writes or creates.
    Written,
    /// A path written, or, when it starts with `|` or `!`, a shell command
    /// its output is piped to (`strace -o '|cmd'`).
    WrittenOrPipe,
    /// A program it runs (`faketime --date-prog`): seen as a command.
    Program,
    /// The shell that runs its shell commands (`su -s`, `hyperfine -S`):
    /// a bash-like shell of the table, else opaque.
    Shell,
    /// A command line, scanned like the top level (`flock -c`, `su -c`,
    /// `compgen -C`).
    Script,
    /// A file a shell sources (`bash --rcfile`): a literal file is like a
    /// script file; a device, descriptor or `<(…)` is opaque.
    Sourced,
    /// A command name (a function): analysed as a command of one word
    /// (`complete -F f`).
    CommandName,
    /// Text bash expands again (`compgen -W`): opaque when it holds an
    /// expansion or an escape.
    Expanded,
    /// `NAME=value` put in the environment of the command it runs
    /// (`strace -E`, `bwrap --setenv NAME VALUE`): judged like an
    /// assignment to one of bash's variables.
    Environment,
    /// `KEY=VALUE` settings (`git -c`): keys on this list are inert, any
    /// other is opaque.
    Config(&'static [&'static str]),
    /// Present at all: opaque for this reason.
    Opaque(&'static str),
}

/// Which words a builtin takes as variable names it assigns (or reads by
/// name); `shell_eval` checks them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Names {
    /// None.
    None,
    /// Every operand, and the value of the option given (`read NAME…`,
    /// `read -a ARRAY`).
    Operands(Option<char>),
    /// The value of this option (`printf -v NAME`, `wait -p NAME`).
    OptionValue(char),
    /// The first operand (`mapfile ARRAY`, default `MAPFILE`).
    FirstOperand,
    /// The second operand (`getopts OPTSTRING NAME`).
    SecondOperand,
    /// `NAME`, `NAME=value` operands and attribute flags (`declare`).
    Declarations,
    /// Operands are arithmetic (`let`).
    Arithmetic,
    /// Operands are names to unset (`unset`).
    Unset,
    /// The operand after `-v` is a name (`test -v`, `[ -v ]`).
    TestOperand,
}

/// Which words are paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Paths {
    /// Words that look like paths (absolute, `~`, `..`).
    LookLike,
    /// Every operand (`rm`, `cp`, `cat` …).
    Operands,
    /// A directory change: the target (no operand is `~`, `-` is
    /// `$OLDPWD`); it never makes a bash pattern.
    Cd,
    /// A change through the directory stack (`pushd DIR`, `popd`): every
    /// operand is a path; it never makes a bash pattern.
    DirStack,
}

/// One program or builtin.
#[derive(Debug)]
pub(crate) struct Program {
    /// The names it runs as.
    pub(crate) names: &'static [&'static str],
    /// A bash builtin or keyword.
    pub(crate) builtin: bool,
    /// How its options are read.
    pub(crate) options: Options,
    /// What it runs.
    pub(crate) runs: Runs,
    /// What the value of each option that takes one is: its spellings
    /// (`"-o --output"`, separated by spaces) and its kind.
    pub(crate) values: &'static [(&'static str, Value)],
    /// Which words are variable names.
    pub(crate) names_set: Names,
    /// Which words are paths, besides those that look like paths.
    pub(crate) paths: Paths,
    /// A line running `{cmd}` through this program, with `{opts}` where
    /// options go: the property test puts a hidden command there (data
    /// for the tests only).
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) example: Option<&'static str>,
}

/// An entry that runs nothing and takes any option.
const PLAIN: Program = Program {
    names: &[],
    builtin: false,
    options: Options::Any,
    runs: Runs::Nothing,
    values: &[],
    names_set: Names::None,
    paths: Paths::LookLike,
    example: None,
};

/// A builtin that runs nothing and whose options change nothing modelled.
const BUILTIN: Program = Program {
    builtin: true,
    ..PLAIN
};

/// A program that runs the command after `skip` operands.
const fn command_after(skip: usize) -> Runs {
    Runs::Command {
        skip,
        shell_without: false,
    }
}

/// The options of bash-like shells (`-c` and `-s` are read by the `Shell`
/// shape; `-o`/`-O` take an option name).
const SHELL_OPTIONS: Spec = Spec {
    flags: "abcefhiklmnprstuvxBCEHPT",
    values: "oO",
    long_flags: &[
        "--norc",
        "--noprofile",
        "--login",
        "--posix",
        "--restricted",
        "--verbose",
        "--noediting",
        "--debugger",
        "--debug",
        "--dump-strings",
        "--dump-po-strings",
        "--help",
        "--version",
        "--pretty-print",
        "--protected",
        "--wordexp",
    ],
    long_values: &["--rcfile", "--init-file"],
    plus: true,
    abbreviations: false,
    values_from_next: true,
    ..SPEC
};

/// The table. Names are unique (checked by a test).
pub(crate) const PROGRAMS: &[Program] = &[
    // ---- bash keywords: tree-sitter parses them as syntax, so one in the
    // place of a program means it misread the compound command around it
    // (`! for …` gave commands `for V in y`, `do m1`, `done`) ----
    Program {
        names: &[
            "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until",
            "do", "done", "in", "function", "{", "}", "!", "[[", "]]",
        ],
        runs: Runs::Opaque(
            "a reserved word where the parser expected a program: it misread the compound command",
        ),
        ..BUILTIN
    },
    Program {
        names: &["time"],
        options: Options::Known(&Spec {
            flags: "apvq",
            values: "fo",
            long_flags: &[
                "--append",
                "--portability",
                "--verbose",
                "--quiet",
                "--help",
                "--version",
            ],
            long_values: &["--format", "--output"],
            ..SPEC
        }),
        runs: command_after(0),
        example: Some("time {opts} {cmd}"),
        values: &[
            ("-f --format", Value::Inert),
            ("-o --output", Value::Written),
        ],
        ..BUILTIN
    },
    Program {
        names: &["coproc"],
        options: Options::None,
        runs: command_after(0),
        example: Some("coproc {cmd}"),
        ..BUILTIN
    },
    // ---- bash builtins that run nothing and whose options do not matter ----
    Program {
        names: &[
            ":", "true", "false", "echo", "pwd", "exit", "return", "break", "continue", "shift",
            "times", "suspend", "logout", "help", "caller", "type", "dirs", "disown", "kill",
            "ulimit", "umask", "bg", "fg", "compopt", "unalias", "history",
        ],
        ..BUILTIN
    },
    Program {
        names: &["set"],
        runs: Runs::Shape(Shape::Set),
        ..BUILTIN
    },
    Program {
        names: &["shopt"],
        runs: Runs::Shape(Shape::Shopt),
        ..BUILTIN
    },
    Program {
        names: &["wait"],
        options: Options::Known(&Spec {
            flags: "fn",
            values: "p",
            ..SPEC
        }),
        names_set: Names::OptionValue('p'),
        values: &[("-p", Value::Inert)],
        ..BUILTIN
    },
    Program {
        names: &["cd", "chdir"],
        options: Options::Known(&Spec {
            flags: "LPe@",
            ..SPEC
        }),
        paths: Paths::Cd,
        builtin: true,
        ..PLAIN
    },
    Program {
        names: &["pushd", "popd"],
        paths: Paths::DirStack,
        ..BUILTIN
    },
    Program {
        names: &["push-location", "set-location"],
        paths: Paths::DirStack,
        ..PLAIN
    },
    Program {
        names: &["test", "["],
        options: Options::None,
        names_set: Names::TestOperand,
        ..BUILTIN
    },
    Program {
        names: &["let"],
        options: Options::None,
        names_set: Names::Arithmetic,
        ..BUILTIN
    },
    Program {
        names: &["unset"],
        options: Options::Known(&Spec {
            flags: "fvn",
            ..SPEC
        }),
        names_set: Names::Unset,
        ..BUILTIN
    },
    Program {
        names: &["read"],
        options: Options::Known(&Spec {
            flags: "ers",
            values: "adinNptu",
            ..SPEC
        }),
        names_set: Names::Operands(Some('a')),
        values: &[("-a -d -i -n -N -p -t -u", Value::Inert)],
        ..BUILTIN
    },
    Program {
        names: &["printf"],
        options: Options::Known(&Spec {
            values: "v",
            ..SPEC
        }),
        names_set: Names::OptionValue('v'),
        values: &[("-v", Value::Inert)],
        ..BUILTIN
    },
    Program {
        names: &["mapfile", "readarray"],
        options: Options::Known(&Spec {
            flags: "t",
            values: "dnOsuCc",
            ..SPEC
        }),
        names_set: Names::FirstOperand,
        values: &[
            ("-d -n -O -s -u -c", Value::Inert),
            (
                "-C",
                Value::Opaque("evaluates its callback with each line read appended"),
            ),
        ],
        ..BUILTIN
    },
    Program {
        names: &["getopts"],
        options: Options::None,
        names_set: Names::SecondOperand,
        ..BUILTIN
    },
    Program {
        names: &["declare", "typeset", "local", "export", "readonly"],
        options: Options::Known(&Spec {
            flags: "aAfFgiIlnprtux",
            plus: true,
            ..SPEC
        }),
        names_set: Names::Declarations,
        ..BUILTIN
    },
    Program {
        names: &["complete", "compgen"],
        options: Options::Known(&Spec {
            flags: "abcdefgjksuvDEI",
            values: "oAGWFCXPS",
            plus: true,
            ..SPEC
        }),
        example: Some("compgen {opts} -C '{cmd}' a"),
        values: &[
            ("-o -A -G -X -P -S", Value::Inert),
            ("-C", Value::Script),
            ("-F", Value::CommandName),
            ("-W", Value::Expanded),
        ],
        ..BUILTIN
    },
    Program {
        names: &["bind"],
        options: Options::Known(&Spec {
            flags: "lpsvPSVX",
            values: "mqufrx",
            ..SPEC
        }),
        values: &[
            ("-m -q -u -r", Value::Inert),
            ("-f", Value::Read),
            (
                "-x",
                Value::Opaque("binds a key sequence to a shell command"),
            ),
        ],
        ..BUILTIN
    },
    Program {
        names: &["fc"],
        options: Options::Any,
        runs: Runs::Opaque("re-runs or edits and runs commands from the history"),
        ..BUILTIN
    },
    Program {
        names: &["enable"],
        options: Options::Known(&Spec {
            flags: "adnps",
            values: "f",
            ..SPEC
        }),
        values: &[("-f", Value::Opaque("loads a builtin from a shared object"))],
        ..BUILTIN
    },
    Program {
        names: &["hash"],
        options: Options::Known(&Spec {
            flags: "dlrt",
            values: "p",
            ..SPEC
        }),
        values: &[(
            "-p",
            Value::Opaque("can make a command name run another program for later lines"),
        )],
        ..BUILTIN
    },
    Program {
        names: &["alias"],
        runs: Runs::Shape(Shape::Alias),
        ..BUILTIN
    },
    Program {
        names: &["jobs"],
        options: Options::Known(&Spec {
            flags: "lnprsx",
            ..SPEC
        }),
        runs: Runs::Shape(Shape::Jobs),
        example: Some("jobs -x {cmd}"),
        ..BUILTIN
    },
    Program {
        names: &["eval"],
        options: Options::None,
        runs: Runs::Shape(Shape::Eval),
        example: Some("eval '{cmd}'"),
        ..BUILTIN
    },
    Program {
        names: &["trap"],
        options: Options::Known(&Spec {
            flags: "lpP",
            ..SPEC
        }),
        runs: Runs::Shape(Shape::Trap),
        example: Some("trap {opts} '{cmd}' EXIT"),
        ..BUILTIN
    },
    Program {
        names: &["source", "."],
        options: Options::None,
        runs: Runs::Shape(Shape::Source),
        ..BUILTIN
    },
    Program {
        names: &["command"],
        options: Options::Known(&Spec {
            flags: "pvV",
            ..SPEC
        }),
        runs: Runs::Shape(Shape::CommandBuiltin),
        example: Some("command {opts} {cmd}"),
        ..BUILTIN
    },
    Program {
        names: &["builtin"],
        options: Options::Known(&SPEC),
        runs: command_after(0),
        example: Some("builtin eval '{cmd}'"),
        ..BUILTIN
    },
    Program {
        names: &["exec"],
        options: Options::Known(&Spec {
            flags: "cl",
            values: "a",
            ..SPEC
        }),
        runs: command_after(0),
        example: Some("exec {opts} {cmd}"),
        values: &[("-a", Value::Inert)],
        ..BUILTIN
    },
    // ---- exec wrappers ----
    Program {
        names: &["sudo"],
        options: Options::Known(&Spec {
            flags: "AbBEeHiKklNnPSsVv",
            values: "CcDgpRrTtUu",
            optional: "h",
            long_flags: &[
                "--askpass",
                "--background",
                "--bell",
                "--edit",
                "--help",
                "--set-home",
                "--login",
                "--remove-timestamp",
                "--reset-timestamp",
                "--list",
                "--non-interactive",
                "--preserve-groups",
                "--stdin",
                "--shell",
                "--version",
                "--validate",
            ],
            long_values: &[
                "--auth-type",
                "--close-from",
                "--login-class",
                "--chdir",
                "--group",
                "--prompt",
                "--chroot",
                "--role",
                "--type",
                "--command-timeout",
                "--other-user",
                "--user",
            ],
            long_optional: &["--preserve-env", "--host"],
            ..SPEC
        }),
        runs: Runs::Shape(Shape::Sudo),
        example: Some("sudo {opts} {cmd}"),
        values: &[
            (
                "-C -c -g -p -r -T -t -U -u -h --auth-type --close-from --login-class --group --prompt --role --type --command-timeout --other-user --user --preserve-env --host",
                Value::Inert,
            ),
            ("-D -R --chdir --chroot", Value::Read),
        ],
        ..PLAIN
    },
    Program {
        names: &["doas"],
        options: Options::Known(&Spec {
            flags: "nsL",
            values: "uC",
            ..SPEC
        }),
        runs: command_after(0),
        example: Some("doas {opts} {cmd}"),
        values: &[("-u", Value::Inert), ("-C", Value::Read)],
        ..PLAIN
    },
    Program {
        names: &["env"],
        options: Options::Known(&Spec {
            flags: "i0v",
            values: "uCS",
            long_flags: &[
                "--ignore-environment",
                "--null",
                "--debug",
                "--list-signal-handling",
                "--help",
                "--version",
            ],
            long_values: &["--unset", "--chdir", "--split-string"],
            long_optional: &["--block-signal", "--default-signal", "--ignore-signal"],
            ..SPEC
        }),
        runs: Runs::Shape(Shape::Env),
        example: Some("env {opts} A=1 {cmd}"),
        values: &[
            (
                "-u --unset --block-signal --default-signal --ignore-signal",
                Value::Inert,
            ),
            ("-C --chdir", Value::Read),
            ("-S --split-string", Value::Script),
        ],
        ..PLAIN
    },
    Program {
        names: &["nohup"],
        options: Options::Known(&Spec {
            long_flags: &["--help", "--version"],
            ..SPEC
        }),
        runs: command_after(0),
        example: Some("nohup {opts} {cmd}"),
        ..PLAIN
    },
    Program {
        names: &["timeout"],
        options: Options::Known(&Spec {
            flags: "v",
            values: "sk",
            long_flags: &[
                "--preserve-status",
                "--foreground",
                "--verbose",
                "--help",
                "--version",
            ],
            long_values: &["--signal", "--kill-after"],
            ..SPEC
        }),
        runs: command_after(1),
        example: Some("timeout {opts} 5 {cmd}"),
        values: &[("-s -k --signal --kill-after", Value::Inert)],
        ..PLAIN
    },
    Program {
        names: &["nice"],
        options: Options::Known(&Spec {
            values: "n",
            long_flags: &["--help", "--version"],
            long_values: &["--adjustment"],
            ..SPEC
        }),
        runs: command_after(0),
        example: Some("nice {opts} {cmd}"),
        values: &[("-n --adjustment", Value::Inert)],
        ..PLAIN
    },
    Program {
        names: &["ionice"],
        options: Options::Known(&Spec {
            flags: "tVh",
            values: "cnpPu",
            long_flags: &["--ignore", "--help", "--version"],
            long_values: &["--class", "--classdata", "--pid", "--pgid", "--uid"],
            ..SPEC
        }),
        runs: command_after(0),
        example: Some("ionice {opts} {cmd}"),
        values: &[(
            "-c -n -p -P -u --class --classdata --pid --pgid --uid",
            Value::Inert,
        )],
        ..PLAIN
    },
    Program {
        names: &["stdbuf"],
        options: Options::Known(&Spec {
            values: "ioe",
            long_flags: &["--help", "--version"],
            long_values: &["--input", "--output", "--error"],
            ..SPEC
        }),
        runs: command_after(0),
        example: Some("stdbuf {opts} {cmd}"),
        values: &[("-i -o -e --input --output --error", Value::Inert)],
        ..PLAIN
    },
    Program {
        names: &["setsid"],
        options: Options::Known(&Spec {
            flags: "cfwhV",
            long_flags: &["--ctty", "--fork", "--wait", "--help", "--version"],
            ..SPEC
        }),
        runs: command_after(0),
        example: Some("setsid {opts} {cmd}"),
        ..PLAIN
    },
    Program {
        names: &["xargs"],
        options: Options::Known(&Spec {
            flags: "0oprtx",
            values: "adEILnPs",
            optional: "eil",
            long_flags: &[
                "--null",
                "--open-tty",
                "--interactive",
                "--no-run-if-empty",
                "--verbose",
                "--exit",
                "--show-limits",
                "--help",
                "--version",
            ],
            long_values: &[
                "--arg-file",
                "--delimiter",
                "--max-args",
                "--max-procs",
                "--max-chars",
                "--process-slot-var",
            ],
            long_optional: &["--eof", "--replace", "--max-lines"],
            ..SPEC
        }),
        runs: Runs::Shape(Shape::Xargs),
        example: Some("xargs {opts} {cmd}"),
        values: &[
            (
                "-d -E -I -L -n -P -s -e -i -l --delimiter --max-args --max-procs --max-chars --eof --replace --max-lines",
                Value::Inert,
            ),
            ("-a --arg-file", Value::Read),
            (
                "--process-slot-var",
                Value::Opaque("sets an environment variable of the commands it runs"),
            ),
        ],
        ..PLAIN
    },
    Program {
        names: &["busybox", "toybox"],
        options: Options::None,
        runs: Runs::Shape(Shape::Multicall),
        example: Some("busybox {cmd}"),
        ..PLAIN
    },
    Program {
        names: &["watch"],
        options: Options::Known(&Spec {
            flags: "bcegtxpwrhv",
            values: "nq",
            optional: "d",
            long_flags: &[
                "--beep",
                "--color",
                "--no-color",
                "--errexit",
                "--chgexit",
                "--no-title",
                "--exec",
                "--precise",
                "--no-wrap",
                "--no-rerun",
                "--help",
                "--version",
            ],
            long_values: &["--interval", "--equexit"],
            long_optional: &["--differences"],
            ..SPEC
        }),
        runs: Runs::Shape(Shape::Watch),
        example: Some("watch {opts} '{cmd}'"),
        values: &[("-n -q -d --interval --equexit --differences", Value::Inert)],
        ..PLAIN
    },
    Program {
        names: &["find"],
        options: Options::Any,
        runs: Runs::Shape(Shape::Find),
        example: Some("find . -exec {cmd} ;"),
        ..PLAIN
    },
    Program {
        names: &["unbuffer"],
        options: Options::Known(&Spec { flags: "p", ..SPEC }),
        runs: command_after(0),
        example: Some("unbuffer {opts} {cmd}"),
        ..PLAIN
    },
    Program {
        names: &["taskset"],
        options: Options::Known(&Spec {
            flags: "apcVh",
            long_flags: &["--all-tasks", "--pid", "--cpu-list", "--help", "--version"],
            ..SPEC
        }),
        runs: Runs::Shape(Shape::Taskset),
        example: Some("taskset {opts} 0x1 {cmd}"),
        ..PLAIN
    },
    Program {
        names: &["flock"],
        options: Options::Known(&Spec {
            flags: "sxunoFhV",
            values: "wEc",
            long_flags: &[
                "--shared",
                "--exclusive",
                "--unlock",
                "--nonblock",
                "--close",
                "--no-fork",
                "--verbose",
                "--help",
                "--version",
            ],
            long_values: &["--timeout", "--conflict-exit-code", "--command"],
            ..SPEC
        }),
        runs: Runs::Shape(Shape::Flock),
        example: Some("flock {opts} lock {cmd}"),
        values: &[
            ("-w -E --timeout --conflict-exit-code", Value::Inert),
            ("-c --command", Value::Script),
        ],
        ..PLAIN
    },
    Program {
        names: &["su"],
        options: Options::Known(&Spec {
            flags: "flmpPhV",
            values: "cgGsw",
            long_flags: &[
                "--fast",
                "--login",
                "--preserve-environment",
                "--pty",
                "--help",
                "--version",
            ],
            long_values: &[
                "--command",
                "--session-command",
                "--group",
                "--supp-group",
                "--shell",
                "--whitelist-environment",
            ],
            ..SPEC
        }),
        runs: Runs::Shape(Shape::Su),
        example: Some("su {opts} -c '{cmd}' root"),
        values: &[
            (
                "-g -G -w --group --supp-group --whitelist-environment",
                Value::Inert,
            ),
            ("-c --command --session-command", Value::Script),
            ("-s --shell", Value::Shell),
        ],
        ..PLAIN
    },
    Program {
        names: &["runuser"],
        options: Options::Known(&Spec {
            flags: "flmpPhV",
            values: "cgGsuw",
            long_flags: &[
                "--fast",
                "--login",
                "--preserve-environment",
                "--pty",
                "--help",
                "--version",
            ],
            long_values: &[
                "--command",
                "--session-command",
                "--group",
                "--supp-group",
                "--shell",
                "--user",
                "--whitelist-environment",
            ],
            ..SPEC
        }),
        runs: Runs::Shape(Shape::Runuser),
        example: Some("runuser {opts} -u root -- {cmd}"),
        values: &[
            (
                "-g -G -u -w --group --supp-group --user --whitelist-environment",
                Value::Inert,
            ),
            ("-c --command --session-command", Value::Script),
            ("-s --shell", Value::Shell),
        ],
        ..PLAIN
    },
    Program {
        names: &["script"],
        options: Options::Known(&Spec {
            flags: "aefqhVk",
            values: "cBEIOoTm",
            optional: "t",
            long_flags: &[
                "--append",
                "--return",
                "--flush",
                "--force",
                "--quiet",
                "--logging-keys",
                "--help",
                "--version",
            ],
            long_values: &[
                "--command",
                "--log-in",
                "--log-out",
                "--log-io",
                "--log-timing",
                "--echo",
                "--output-limit",
                "--logging-format",
            ],
            long_optional: &["--timing"],
            ..SPEC
        }),
        runs: Runs::Shape(Shape::Script),
        example: Some("script {opts} -c '{cmd}' /dev/null"),
        values: &[
            (
                "-E -o -m --echo --output-limit --logging-format",
                Value::Inert,
            ),
            (
                "-B -I -O -T -t --log-in --log-out --log-io --log-timing --timing",
                Value::Written,
            ),
            ("-c --command", Value::Script),
        ],
        ..PLAIN
    },
    Program {
        names: &["eatmydata", "chronic", "dumb-init", "catatonit"],
        options: Options::Known(&Spec {
            // `chronic -ev`, `dumb-init -c -v --single-child -r s:r`.
            flags: "evcV",
            values: "r",
            long_flags: &["--single-child", "--verbose", "--version", "--help"],
            long_values: &["--rewrite"],
            abbreviations: false,
            ..SPEC
        }),
        runs: command_after(0),
        example: Some("eatmydata {opts} {cmd}"),
        values: &[("-r --rewrite", Value::Inert)],
        ..PLAIN
    },
    Program {
        names: &["ifne"],
        options: Options::Known(&Spec {
            flags: "n",
            abbreviations: false,
            ..SPEC
        }),
        runs: command_after(0),
        example: Some("ifne {opts} {cmd}"),
        ..PLAIN
    },
    Program {
        names: &["tini"],
        options: Options::Known(&Spec {
            flags: "hsvwgl",
            values: "pe",
            abbreviations: false,
            ..SPEC
        }),
        runs: command_after(0),
        example: Some("tini {opts} -- {cmd}"),
        values: &[("-p -e", Value::Inert)],
        ..PLAIN
    },
    Program {
        names: &["cgexec"],
        options: Options::Known(&Spec {
            flags: "h",
            values: "gb",
            long_flags: &["--sticky"],
            abbreviations: false,
            ..SPEC
        }),
        runs: command_after(0),
        example: Some("cgexec {opts} {cmd}"),
        values: &[("-g -b", Value::Inert)],
        ..PLAIN
    },
    Program {
        names: &["setarch", "linux32", "linux64"],
        options: Options::Any,
        runs: Runs::Shape(Shape::Setarch),
        example: Some("setarch x86_64 -R {cmd}"),
        ..PLAIN
    },
    Program {
        names: &["hyperfine"],
        options: Options::Known(&Spec {
            flags: "NihV",
            values: "wmMrspCcDSunLP",
            long_flags: &[
                "--ignore-failure",
                "--show-output",
                "--help",
                "--version",
                "-N",
            ],
            long_values: &[
                "--warmup",
                "--min-runs",
                "--max-runs",
                "--runs",
                "--setup",
                "--prepare",
                "--conclude",
                "--cleanup",
                "--parameter-step-size",
                "--shell",
                "--time-unit",
                "--command-name",
                "--style",
                "--sort",
                "--export-asciidoc",
                "--export-csv",
                "--export-json",
                "--export-markdown",
                "--export-orgmode",
                "--output",
                "--input",
            ],
            long_pairs: &["--parameter-list"],
            ..SPEC
        }),
        runs: Runs::Shape(Shape::ScriptOperands),
        example: Some("hyperfine {opts} '{cmd}'"),
        values: &[
            (
                "-w -m -M -r -D -u -n -L -P --warmup --min-runs --max-runs --runs --parameter-step-size --time-unit --command-name --style --sort --parameter-list",
                Value::Inert,
            ),
            (
                "-s --setup -p --prepare -C --conclude -c --cleanup",
                Value::Script,
            ),
            ("-S --shell", Value::Shell),
            (
                "--export-asciidoc --export-csv --export-json --export-markdown --export-orgmode --output",
                Value::Written,
            ),
            ("--input", Value::Read),
        ],
        ..PLAIN
    },
    Program {
        names: &["chroot"],
        options: Options::Known(&Spec {
            long_flags: &["--skip-chdir", "--help", "--version"],
            long_values: &["--userspec", "--groups"],
            ..SPEC
        }),
        runs: Runs::Command {
            skip: 1,
            shell_without: true,
        },
        example: Some("chroot {opts} / {cmd}"),
        values: &[("--userspec --groups", Value::Inert)],
        ..PLAIN
    },
    Program {
        names: &["nsenter"],
        options: Options::Known(&Spec {
            flags: "aFZcehV",
            values: "tSGN",
            optional: "muinpUCTrw",
            long_flags: &[
                "--all",
                "--no-fork",
                "--follow-context",
                "--preserve-credentials",
                "--env",
                "--join-cgroup",
                "--help",
                "--version",
            ],
            long_values: &[
                "--target",
                "--setuid",
                "--setgid",
                "--net-socket",
                "--keep-caps",
            ],
            long_optional: &[
                "--mount", "--uts", "--ipc", "--net", "--pid", "--user", "--cgroup", "--time",
                "--root", "--wd", "--wdns",
            ],
            ..SPEC
        }),
        runs: Runs::Command {
            skip: 0,
            shell_without: true,
        },
        example: Some("nsenter {opts} {cmd}"),
        values: &[
            (
                "-t -S -G -N --target --setuid --setgid --net-socket --keep-caps",
                Value::Inert,
            ),
            (
                "-m -u -i -n -p -U -C -T -r -w --mount --uts --ipc --net --pid --user --cgroup --time --root --wd --wdns",
                Value::Read,
            ),
        ],
        ..PLAIN
    },
    Program {
        names: &["unshare"],
        options: Options::Known(&Spec {
            flags: "fcrhVl",
            values: "SGRw",
            optional: "muinpUCT",
            long_flags: &[
                "--fork",
                "--kill-child",
                "--map-root-user",
                "--map-current-user",
                "--map-auto",
                "--keep-caps",
                "--load-interp",
                "--help",
                "--version",
            ],
            long_values: &[
                "--setuid",
                "--setgid",
                "--root",
                "--wd",
                "--map-user",
                "--map-group",
                "--map-users",
                "--map-groups",
                "--propagation",
                "--setgroups",
                "--monotonic",
                "--boottime",
            ],
            long_optional: &[
                "--mount",
                "--uts",
                "--ipc",
                "--net",
                "--pid",
                "--user",
                "--cgroup",
                "--time",
                "--mount-proc",
                "--mount-binfmt",
            ],
            ..SPEC
        }),
        runs: Runs::Command {
            skip: 0,
            shell_without: true,
        },
        example: Some("unshare {opts} {cmd}"),
        values: &[
            (
                "-S -G --setuid --setgid --map-user --map-group --map-users --map-groups --propagation --setgroups --monotonic --boottime",
                Value::Inert,
            ),
            ("-R -w --root --wd --mount-proc --mount-binfmt", Value::Read),
            (
                "-m -u -i -n -p -U -C -T --mount --uts --ipc --net --pid --user --cgroup --time",
                Value::Written,
            ),
        ],
        ..PLAIN
    },
    Program {
        names: &["setpriv"],
        options: Options::Known(&Spec {
            flags: "dhV",
            long_flags: &[
                "--dump",
                "--clear-groups",
                "--keep-groups",
                "--init-groups",
                "--nnp",
                "--no-new-privs",
                "--reset-env",
                "--list-caps",
                "--help",
                "--version",
            ],
            long_values: &[
                "--ruid",
                "--euid",
                "--rgid",
                "--egid",
                "--reuid",
                "--regid",
                "--groups",
                "--inh-caps",
                "--ambient-caps",
                "--bounding-set",
                "--securebits",
                "--pdeathsig",
                "--selinux-label",
                "--apparmor-profile",
                "--landlock-access",
                "--landlock-rule",
                "--seccomp-filter",
            ],
            ..SPEC
        }),
        runs: command_after(0),
        example: Some("setpriv {opts} {cmd}"),
        values: &[
            (
                "--ruid --euid --rgid --egid --reuid --regid --groups --inh-caps --ambient-caps --bounding-set --securebits --pdeathsig --selinux-label --apparmor-profile --landlock-access",
                Value::Inert,
            ),
            ("--landlock-rule --seccomp-filter", Value::Read),
        ],
        ..PLAIN
    },
    Program {
        names: &["systemd-run"],
        options: Options::Known(&Spec {
            flags: "rGSPtqhd",
            values: "upEHM",
            long_flags: &[
                "--user",
                "--system",
                "--scope",
                "--remain-after-exit",
                "--send-sighup",
                "--pty",
                "--pipe",
                "--quiet",
                "--wait",
                "--collect",
                "--same-dir",
                "--shell",
                "--no-block",
                "--no-ask-password",
                "--slice-inherit",
                "--help",
                "--version",
            ],
            long_values: &[
                "--unit",
                "--property",
                "--description",
                "--slice",
                "--service-type",
                "--uid",
                "--gid",
                "--nice",
                "--working-directory",
                "--setenv",
                "--on-active",
                "--on-boot",
                "--on-startup",
                "--on-unit-active",
                "--on-unit-inactive",
                "--on-calendar",
                "--on-timezone-change",
                "--on-clock-change",
                "--timer-property",
                "--path-property",
                "--socket-property",
                "--machine",
                "--host",
            ],
            ..SPEC
        }),
        runs: command_after(0),
        example: Some("systemd-run {opts} {cmd}"),
        values: &[
            (
                "-u --unit --description --slice --service-type --uid --gid --nice --on-active --on-boot --on-startup --on-unit-active --on-unit-inactive --on-calendar --on-timezone-change --on-clock-change",
                Value::Inert,
            ),
            ("--working-directory", Value::Read),
            ("-E --setenv", Value::Environment),
            (
                "-p --property --timer-property --path-property --socket-property",
                Value::Opaque("sets unit properties, some of which run commands (`ExecStartPre=`)"),
            ),
            (
                "-H --host",
                Value::Opaque("runs the command on another host"),
            ),
            (
                "-M --machine",
                Value::Opaque("runs the command in a container"),
            ),
        ],
        ..PLAIN
    },
    Program {
        names: &["chrt"],
        options: Options::Known(&Spec {
            flags: "abdfiomprevRhV",
            values: "TPD",
            long_flags: &[
                "--all-tasks",
                "--batch",
                "--deadline",
                "--fifo",
                "--idle",
                "--other",
                "--rr",
                "--ext",
                "--reset-on-fork",
                "--max",
                "--pid",
                "--verbose",
                "--help",
                "--version",
            ],
            long_values: &["--sched-runtime", "--sched-period", "--sched-deadline"],
            ..SPEC
        }),
        runs: command_after(1),
        example: Some("chrt {opts} 0 {cmd}"),
        values: &[(
            "-T -P -D --sched-runtime --sched-period --sched-deadline",
            Value::Inert,
        )],
        ..PLAIN
    },
    Program {
        names: &["prlimit"],
        options: Options::Known(&Spec {
            flags: "hVo",
            values: "p",
            optional: "cdefilmnqrstuvxy",
            long_flags: &["--noheadings", "--raw", "--verbose", "--help", "--version"],
            long_values: &["--pid", "--output"],
            long_optional: &[
                "--core",
                "--data",
                "--nice",
                "--fsize",
                "--sigpending",
                "--memlock",
                "--rss",
                "--nofile",
                "--msgqueue",
                "--rtprio",
                "--stack",
                "--cpu",
                "--nproc",
                "--as",
                "--locks",
                "--rttime",
            ],
            ..SPEC
        }),
        runs: command_after(0),
        example: Some("prlimit {opts} {cmd}"),
        values: &[(
            "-p --pid --output -c -d -e -f -i -l -m -n -q -r -s -t -u -v -x -y --core --data --nice --fsize --sigpending --memlock --rss --nofile --msgqueue --rtprio --stack --cpu --nproc --as --locks --rttime",
            Value::Inert,
        )],
        ..PLAIN
    },
    Program {
        names: &["numactl"],
        options: Options::Known(&Spec {
            flags: "alsHbS",
            values: "imNCPpw",
            long_flags: &[
                "--all",
                "--localalloc",
                "--show",
                "--hardware",
                "--balancing",
                "--strict",
                "--help",
            ],
            long_values: &[
                "--interleave",
                "--membind",
                "--cpunodebind",
                "--physcpubind",
                "--preferred",
                "--preferred-many",
                "--weighted-interleave",
            ],
            ..SPEC
        }),
        runs: command_after(0),
        example: Some("numactl {opts} {cmd}"),
        values: &[(
            "-i -m -N -C -P -p -w --interleave --membind --cpunodebind --physcpubind --preferred --preferred-many --weighted-interleave",
            Value::Inert,
        )],
        ..PLAIN
    },
    Program {
        names: &["nocache"],
        options: Options::Known(&Spec {
            values: "n",
            ..SPEC
        }),
        runs: command_after(0),
        example: Some("nocache {opts} {cmd}"),
        values: &[("-n", Value::Inert)],
        ..PLAIN
    },
    Program {
        names: &["fakeroot"],
        options: Options::Known(&Spec {
            flags: "uhv",
            values: "lisb",
            long_flags: &["--unknown-is-real", "--help", "--version"],
            long_values: &["--lib", "--faked"],
            abbreviations: false,
            ..SPEC
        }),
        runs: Runs::Command {
            skip: 0,
            shell_without: true,
        },
        example: Some("fakeroot {opts} {cmd}"),
        values: &[
            ("-b", Value::Inert),
            ("-i", Value::Read),
            ("-s", Value::Written),
            (
                "-l --lib",
                Value::Opaque("preloads a library into the command it runs"),
            ),
            (
                "--faked",
                Value::Opaque("runs another program as its daemon"),
            ),
        ],
        ..PLAIN
    },
    Program {
        names: &["faketime"],
        options: Options::Known(&Spec {
            flags: "f",
            values: "mp",
            long_flags: &["--exclude-monotonic", "--help", "--version"],
            long_values: &["--date-prog"],
            ..SPEC
        }),
        runs: command_after(1),
        example: Some("faketime {opts} '2020-01-01' {cmd}"),
        values: &[("-m -p", Value::Inert), ("--date-prog", Value::Program)],
        ..PLAIN
    },
    Program {
        names: &["proot"],
        options: Options::Known(&Spec {
            flags: "0ViRSh",
            values: "rbmqwvk",
            long_flags: &[
                "--root-id",
                "--help",
                "--version",
                "--kill-on-exit",
                "--link2symlink",
            ],
            long_values: &[
                "--rootfs",
                "--bind",
                "--mount",
                "--qemu",
                "--pwd",
                "--cwd",
                "--verbose",
                "--kernel-release",
            ],
            ..SPEC
        }),
        runs: Runs::Command {
            skip: 0,
            shell_without: true,
        },
        example: Some("proot {opts} {cmd}"),
        values: &[
            ("-v -k --verbose --kernel-release", Value::Inert),
            (
                "-r -b -m -w --rootfs --bind --mount --pwd --cwd",
                Value::Read,
            ),
            ("-q --qemu", Value::Program),
        ],
        ..PLAIN
    },
    Program {
        names: &["firejail"],
        options: Options::Known(&Spec {
            // firejail's options are all `--name` or `--name=value`.
            long_flags: &[
                "--quiet",
                "--noprofile",
                "--private",
                "--net",
                "--noroot",
                "--seccomp",
                "--caps.drop",
                "--nonewprivs",
                "--nosound",
                "--no3d",
                "--x11",
                "--appimage",
                "--debug",
            ],
            long_optional: &[
                "--profile",
                "--private",
                "--net",
                "--caps.drop",
                "--seccomp",
                "--whitelist",
                "--blacklist",
                "--read-only",
                "--read-write",
                "--name",
                "--dns",
                "--ip",
                "--netfilter",
                "--rlimit-as",
                "--timeout",
                "--env",
                "--x11",
                "--join",
            ],
            abbreviations: false,
            ..SPEC
        }),
        runs: Runs::Command {
            skip: 0,
            shell_without: true,
        },
        example: Some("firejail {opts} {cmd}"),
        values: &[
            (
                "--net --caps.drop --seccomp --name --dns --ip --netfilter --rlimit-as --timeout --x11 --join",
                Value::Inert,
            ),
            (
                "--profile --private --whitelist --blacklist --read-only --read-write",
                Value::Read,
            ),
            ("--env", Value::Environment),
        ],
        ..PLAIN
    },
    Program {
        names: &["bwrap"],
        options: Options::Known(&Spec {
            long_flags: &[
                "--unshare-all",
                "--unshare-user",
                "--unshare-user-try",
                "--unshare-ipc",
                "--unshare-pid",
                "--unshare-net",
                "--unshare-uts",
                "--unshare-cgroup",
                "--unshare-cgroup-try",
                "--share-net",
                "--die-with-parent",
                "--new-session",
                "--as-pid-1",
                "--clearenv",
                "--disable-userns",
                "--assert-userns-disabled",
                "--help",
                "--version",
            ],
            long_values: &[
                "--args",
                "--argv0",
                "--userns",
                "--userns2",
                "--pidns",
                "--uid",
                "--gid",
                "--hostname",
                "--chdir",
                "--unsetenv",
                "--lock-file",
                "--sync-fd",
                "--remount-ro",
                "--proc",
                "--dev",
                "--tmpfs",
                "--mqueue",
                "--dir",
                "--seccomp",
                "--add-seccomp-fd",
                "--exec-label",
                "--file-label",
                "--block-fd",
                "--userns-block-fd",
                "--info-fd",
                "--json-status-fd",
                "--cap-add",
                "--cap-drop",
                "--perms",
                "--size",
            ],
            long_pairs: &[
                "--setenv",
                "--bind",
                "--bind-try",
                "--dev-bind",
                "--dev-bind-try",
                "--ro-bind",
                "--ro-bind-try",
                "--bind-fd",
                "--ro-bind-fd",
                "--file",
                "--bind-data",
                "--ro-bind-data",
                "--symlink",
                "--chmod",
                "--overlay-src",
            ],
            abbreviations: false,
            ..SPEC
        }),
        runs: command_after(0),
        example: Some("bwrap {opts} {cmd}"),
        values: &[
            (
                "--argv0 --userns --userns2 --pidns --uid --gid --hostname --unsetenv --sync-fd --seccomp --add-seccomp-fd --exec-label --file-label --block-fd --userns-block-fd --info-fd --json-status-fd --cap-add --cap-drop --perms --size --bind-fd --ro-bind-fd --file --bind-data --ro-bind-data --chmod",
                Value::Inert,
            ),
            (
                "--chdir --lock-file --remount-ro --proc --dev --tmpfs --mqueue --dir --bind --bind-try --dev-bind --dev-bind-try --ro-bind --ro-bind-try --symlink --overlay-src",
                Value::Read,
            ),
            ("--setenv", Value::Environment),
            (
                "--args",
                Value::Opaque("reads more arguments from a file descriptor"),
            ),
        ],
        ..PLAIN
    },
    Program {
        names: &["strace"],
        options: Options::Known(&Spec {
            flags: "AcCdDfFhiknqrtTvVwxyzZY",
            values: "abeEIoOpPsSuUX",
            long_flags: &[
                "--summary-only",
                "--summary",
                "--follow-forks",
                "--output-separately",
                "--quiet",
                "--help",
                "--version",
                "--successful-only",
                "--failed-only",
                "--instruction-pointer",
                "--stack-traces",
                "--syscall-number",
                "--output-append-mode",
                "--no-abbrev",
                "--summary-wall-clock",
                "--debug",
                "--seccomp-bpf",
            ],
            long_values: &[
                "--trace",
                "--signal",
                "--status",
                "--output",
                "--attach",
                "--string-limit",
                "--user",
                "--env",
                "--trace-path",
                "--summary-columns",
                "--detach-on",
                "--interruptible",
                "--columns",
                "--abbrev",
                "--verbose",
                "--raw",
                "--read",
                "--write",
                "--kvm",
                "--const-print-style",
                "--decode-pids",
                "--summary-syscall-overhead",
                "--summary-sort-by",
                "--inject",
                "--fault",
            ],
            long_optional: &[
                "--daemonize",
                "--relative-timestamps",
                "--absolute-timestamps",
                "--syscall-times",
                "--strings-in-hex",
                "--decode-fds",
                "--tips",
            ],
            ..SPEC
        }),
        runs: command_after(0),
        example: Some("strace {opts} {cmd}"),
        values: &[
            (
                "-a -b -e -I -O -p -s -S -u -U -X --trace --signal --status --attach --string-limit --user --summary-columns --detach-on --interruptible --columns --abbrev --verbose --raw --read --write --kvm --const-print-style --decode-pids --summary-syscall-overhead --summary-sort-by --inject --fault --daemonize --relative-timestamps --absolute-timestamps --syscall-times --strings-in-hex --decode-fds --tips",
                Value::Inert,
            ),
            ("-P --trace-path", Value::Read),
            ("-o --output", Value::WrittenOrPipe),
            ("-E --env", Value::Environment),
        ],
        ..PLAIN
    },
    Program {
        names: &["ltrace"],
        options: Options::Known(&Spec {
            flags: "bcCfhiLrStTV",
            values: "aAeFlnopsuwxD",
            long_flags: &["--demangle", "--help", "--version", "--no-signals"],
            long_values: &["--align", "--config", "--indent", "--output", "--library"],
            ..SPEC
        }),
        runs: command_after(0),
        example: Some("ltrace {opts} {cmd}"),
        values: &[
            (
                "-a -A -e -n -p -s -u -w -x -D --align --indent",
                Value::Inert,
            ),
            ("-F -l --config --library", Value::Read),
            ("-o --output", Value::Written),
        ],
        ..PLAIN
    },
    Program {
        names: &["valgrind"],
        options: Options::Known(&Spec {
            // valgrind's options are `--name=value`; `-q`, `-v`, `-s`, `-h`.
            flags: "qvsh",
            long_flags: &[
                "--help",
                "--help-debug",
                "--help-dyn-options",
                "--version",
                "--quiet",
                "--verbose",
            ],
            long_optional: &[
                "--alignment",
                "--allow-mismatched-debuginfo",
                "--aspace-minaddr",
                "--avg-transtab-entry-size",
                "--child-silent-after-fork",
                "--debuginfo-server",
                "--default-suppressions",
                "--demangle",
                "--dsymutil",
                "--error-exitcode",
                "--error-limit",
                "--error-markers",
                "--errors-for-leak-kinds",
                "--exit-on-first-error",
                "--expensive-definedness-checks",
                "--extra-debuginfo-path",
                "--fair-sched",
                "--free-fill",
                "--freelist-big-blocks",
                "--freelist-vol",
                "--fullpath-after",
                "--gen-suppressions",
                "--ignore-range-below-sp",
                "--ignore-ranges",
                "--input-fd",
                "--keep-debuginfo",
                "--keep-stacktraces",
                "--kernel-variant",
                "--leak-check",
                "--leak-check-heuristics",
                "--leak-resolution",
                "--log-fd",
                "--log-file",
                "--log-socket",
                "--main-stacksize",
                "--malloc-fill",
                "--max-stackframe",
                "--max-threads",
                "--merge-recursive-frames",
                "--num-callers",
                "--num-transtab-sectors",
                "--partial-loads-ok",
                "--read-inline-info",
                "--read-var-info",
                "--redzone-size",
                "--require-text-symbol",
                "--resync-filter",
                "--run-cxx-freeres",
                "--run-libc-freeres",
                "--show-below-main",
                "--show-emwarns",
                "--show-error-list",
                "--show-leak-kinds",
                "--show-mismatched-frees",
                "--show-possibly-lost",
                "--show-reachable",
                "--sigill-diagnostics",
                "--sim-hints",
                "--smc-check",
                "--soname-synonyms",
                "--suppressions",
                "--time-stamp",
                "--tool",
                "--trace-children",
                "--trace-children-skip",
                "--trace-children-skip-by-arg",
                "--track-fds",
                "--track-origins",
                "--undef-value-errors",
                "--unw-stack-scan-frames",
                "--unw-stack-scan-thresh",
                "--valgrind-stacksize",
                "--vgdb",
                "--vgdb-error",
                "--vgdb-poll",
                "--vgdb-prefix",
                "--vgdb-shadow-registers",
                "--vgdb-stop-at",
                "--workaround-gcc296-bugs",
                "--xml",
                "--xml-fd",
                "--xml-file",
                "--xml-socket",
                "--xml-user-comment",
                "--xtree-leak",
                "--xtree-leak-file",
                "--xtree-memory",
                "--xtree-memory-file",
            ],
            abbreviations: false,
            ..SPEC
        }),
        runs: command_after(0),
        values: &[
            (
                "--alignment --allow-mismatched-debuginfo --aspace-minaddr --avg-transtab-entry-size --child-silent-after-fork --debuginfo-server --default-suppressions --demangle --dsymutil --error-exitcode --error-limit --error-markers --errors-for-leak-kinds --exit-on-first-error --expensive-definedness-checks --fair-sched --free-fill --freelist-big-blocks --freelist-vol --fullpath-after --gen-suppressions --ignore-range-below-sp --ignore-ranges --input-fd --keep-debuginfo --keep-stacktraces --kernel-variant --leak-check --leak-check-heuristics --leak-resolution --log-fd --log-socket --main-stacksize --malloc-fill --max-stackframe --max-threads --merge-recursive-frames --num-callers --num-transtab-sectors --partial-loads-ok --read-inline-info --read-var-info --redzone-size --require-text-symbol --resync-filter --run-cxx-freeres --run-libc-freeres --show-below-main --show-emwarns --show-error-list --show-leak-kinds --show-mismatched-frees --show-possibly-lost --show-reachable --sigill-diagnostics --sim-hints --smc-check --soname-synonyms --time-stamp --tool --trace-children --trace-children-skip --trace-children-skip-by-arg --track-fds --track-origins --undef-value-errors --unw-stack-scan-frames --unw-stack-scan-thresh --valgrind-stacksize --vgdb --vgdb-error --vgdb-poll --vgdb-shadow-registers --vgdb-stop-at --workaround-gcc296-bugs --xml --xml-fd --xml-socket --xml-user-comment --xtree-leak --xtree-memory",
                Value::Inert,
            ),
            ("--extra-debuginfo-path --suppressions", Value::Read),
            (
                "--log-file --vgdb-prefix --xml-file --xtree-leak-file --xtree-memory-file",
                Value::Written,
            ),
        ],
        example: Some("valgrind {opts} {cmd}"),
        ..PLAIN
    },
    Program {
        names: &["catchsegv"],
        options: Options::None,
        runs: command_after(0),
        example: Some("catchsegv {cmd}"),
        ..PLAIN
    },
    Program {
        names: &["xvfb-run"],
        options: Options::Known(&Spec {
            flags: "ah",
            values: "efnpsw",
            long_flags: &["--auto-servernum", "--help"],
            long_values: &[
                "--error-file",
                "--auth-file",
                "--server-num",
                "--xauth-protocol",
                "--server-args",
                "--wait",
            ],
            abbreviations: false,
            ..SPEC
        }),
        runs: command_after(0),
        example: Some("xvfb-run {opts} {cmd}"),
        values: &[
            (
                "-n -p -s -w --server-num --xauth-protocol --server-args --wait",
                Value::Inert,
            ),
            ("-e -f --error-file --auth-file", Value::Written),
        ],
        ..PLAIN
    },
    Program {
        names: &["dbus-run-session"],
        options: Options::Known(&Spec {
            long_flags: &["--help", "--version"],
            long_optional: &["--config-file", "--dbus-daemon"],
            abbreviations: false,
            ..SPEC
        }),
        runs: command_after(0),
        example: Some("dbus-run-session {opts} {cmd}"),
        values: &[
            ("--config-file", Value::Read),
            ("--dbus-daemon", Value::Program),
        ],
        ..PLAIN
    },
    Program {
        names: &["torsocks"],
        options: Options::Known(&Spec {
            flags: "idqh",
            values: "uapP",
            long_flags: &["--isolate", "--debug", "--quiet", "--help", "--version"],
            long_values: &["--user", "--pass", "--address", "--port"],
            ..SPEC
        }),
        runs: command_after(0),
        example: Some("torsocks {opts} {cmd}"),
        values: &[("-u -a -p -P --user --pass --address --port", Value::Inert)],
        ..PLAIN
    },
    Program {
        names: &["proxychains", "proxychains4"],
        options: Options::Known(&Spec {
            flags: "q",
            values: "f",
            abbreviations: false,
            ..SPEC
        }),
        runs: command_after(0),
        example: Some("proxychains {opts} {cmd}"),
        values: &[("-f", Value::Read)],
        ..PLAIN
    },
    Program {
        names: &["sg"],
        options: Options::None,
        runs: Runs::Shape(Shape::Sg),
        example: Some("sg users '{cmd}'"),
        ..PLAIN
    },
    Program {
        names: &["pkexec"],
        options: Options::Known(&Spec {
            long_flags: &[
                "--disable-internal-agent",
                "--keep-cwd",
                "--help",
                "--version",
            ],
            long_values: &["--user"],
            abbreviations: false,
            ..SPEC
        }),
        runs: Runs::Command {
            skip: 0,
            shell_without: true,
        },
        example: Some("pkexec {opts} {cmd}"),
        values: &[("--user", Value::Inert)],
        ..PLAIN
    },
    Program {
        names: &["caffeinate"],
        options: Options::Known(&Spec {
            flags: "dimsu",
            values: "tw",
            abbreviations: false,
            ..SPEC
        }),
        runs: command_after(0),
        example: Some("caffeinate {opts} {cmd}"),
        values: &[("-t -w", Value::Inert)],
        ..PLAIN
    },
    Program {
        names: &["entr"],
        options: Options::Known(&Spec {
            flags: "acdnprsz",
            abbreviations: false,
            ..SPEC
        }),
        runs: Runs::Shape(Shape::Entr),
        example: Some("entr {opts} {cmd}"),
        ..PLAIN
    },
    Program {
        names: &["gdb"],
        options: Options::Any,
        runs: Runs::Shape(Shape::Gdb),
        example: Some("gdb -batch --args {cmd}"),
        ..PLAIN
    },
    Program {
        names: &["perf"],
        options: Options::Any,
        runs: Runs::Shape(Shape::Perf),
        example: Some("perf stat {cmd}"),
        ..PLAIN
    },
    Program {
        names: &["parallel"],
        runs: Runs::Opaque("composes and runs command lines from its arguments and input"),
        ..PLAIN
    },
    Program {
        names: &["ssh"],
        runs: Runs::Opaque(
            "runs a command on another host (and `-o ProxyCommand`/`LocalCommand` here)",
        ),
        ..PLAIN
    },
    // ---- programs with options whose values run or write ----
    Program {
        names: &["tar"],
        options: Options::Known(&Spec {
            flags: "ABGJMOPRSUWZacdhijklmnoprstuvwxz",
            values: "CFHIKLNTVXbfg",
            long_flags: &[
                "--absolute-names",
                "--acls",
                "--anchored",
                "--append",
                "--auto-compress",
                "--block-number",
                "--bzip2",
                "--catenate",
                "--check-device",
                "--check-links",
                "--clamp-mtime",
                "--compare",
                "--compress",
                "--concatenate",
                "--confirmation",
                "--create",
                "--delay-directory-restore",
                "--delete",
                "--dereference",
                "--diff",
                "--exclude-backups",
                "--exclude-caches",
                "--exclude-caches-all",
                "--exclude-caches-under",
                "--exclude-vcs",
                "--exclude-vcs-ignores",
                "--extract",
                "--force-local",
                "--full-time",
                "--get",
                "--gunzip",
                "--gzip",
                "--hard-dereference",
                "--help",
                "--ignore-case",
                "--ignore-command-error",
                "--ignore-failed-read",
                "--ignore-zeros",
                "--incremental",
                "--interactive",
                "--keep-directory-symlink",
                "--keep-newer-files",
                "--keep-old-files",
                "--list",
                "--lzip",
                "--lzma",
                "--lzop",
                "--multi-volume",
                "--no-acls",
                "--no-anchored",
                "--no-auto-compress",
                "--no-check-device",
                "--no-delay-directory-restore",
                "--no-ignore-case",
                "--no-ignore-command-error",
                "--no-null",
                "--no-overwrite-dir",
                "--no-recursion",
                "--no-same-owner",
                "--no-same-permissions",
                "--no-seek",
                "--no-selinux",
                "--no-unquote",
                "--no-verbatim-files-from",
                "--no-wildcards",
                "--no-wildcards-match-slash",
                "--no-xattrs",
                "--null",
                "--numeric-owner",
                "--old-archive",
                "--one-file-system",
                "--overwrite",
                "--overwrite-dir",
                "--portability",
                "--posix",
                "--preserve-order",
                "--preserve-permissions",
                "--read-full-records",
                "--recursion",
                "--recursive-unlink",
                "--remove-files",
                "--restrict",
                "--same-order",
                "--same-owner",
                "--same-permissions",
                "--seek",
                "--selinux",
                "--show-defaults",
                "--show-omitted-dirs",
                "--show-snapshot-field-ranges",
                "--show-stored-names",
                "--show-transformed-names",
                "--skip-old-files",
                "--sparse",
                "--test-label",
                "--to-stdout",
                "--touch",
                "--uncompress",
                "--ungzip",
                "--unlink-first",
                "--unquote",
                "--update",
                "--usage",
                "--utc",
                "--verbatim-files-from",
                "--verbose",
                "--verify",
                "--version",
                "--wildcards",
                "--wildcards-match-slash",
                "--xattrs",
                "--xz",
                "--zstd",
                "--preserve",
            ],
            long_values: &[
                "--add-file",
                "--after-date",
                "--blocking-factor",
                "--checkpoint-action",
                "--directory",
                "--exclude",
                "--exclude-from",
                "--exclude-ignore",
                "--exclude-ignore-recursive",
                "--exclude-tag",
                "--exclude-tag-all",
                "--exclude-tag-under",
                "--file",
                "--files-from",
                "--format",
                "--group",
                "--group-map",
                "--hole-detection",
                "--index-file",
                "--info-script",
                "--label",
                "--level",
                "--listed-incremental",
                "--mode",
                "--mtime",
                "--new-volume-script",
                "--newer",
                "--newer-mtime",
                "--no-quote-chars",
                "--owner",
                "--owner-map",
                "--pax-option",
                "--quote-chars",
                "--quoting-style",
                "--record-size",
                "--rmt-command",
                "--rsh-command",
                "--sort",
                "--sparse-version",
                "--starting-file",
                "--strip-components",
                "--suffix",
                "--tape-length",
                "--to-command",
                "--transform",
                "--use-compress-program",
                "--volno-file",
                "--warning",
                "--xattrs-exclude",
                "--xattrs-include",
                "--xform",
            ],
            long_optional: &[
                "--atime-preserve",
                "--backup",
                "--checkpoint",
                "--occurrence",
                "--one-top-level",
                "--totals",
            ],
            bundled_first: true,
            ..SPEC
        }),
        values: &[
            (
                "-H -K -L -V -b --blocking-factor --exclude --exclude-ignore --exclude-ignore-recursive --exclude-tag --exclude-tag-all --exclude-tag-under --format --group --group-map --hole-detection --label --level --mode --mtime --no-quote-chars --owner --owner-map --pax-option --quote-chars --quoting-style --record-size --sort --sparse-version --starting-file --strip-components --suffix --tape-length --transform --warning --xattrs-exclude --xattrs-include --xform --atime-preserve --backup --checkpoint --occurrence --one-top-level --totals",
                Value::Inert,
            ),
            (
                "-C --directory -X --exclude-from -T --files-from -f --file --add-file -N --newer --after-date --newer-mtime",
                Value::Read,
            ),
            (
                "-g --listed-incremental --index-file --volno-file",
                Value::Written,
            ),
            (
                "-I --use-compress-program --to-command -F --info-script --new-volume-script",
                Value::Script,
            ),
            ("--rsh-command --rmt-command", Value::Program),
            (
                "--checkpoint-action",
                Value::Opaque("can run a shell command at each checkpoint (`exec=`)"),
            ),
        ],
        example: Some("tar {opts} --to-command='{cmd}' -xf a.tar"),
        ..PLAIN
    },
    Program {
        names: &["git"],
        options: Options::Known(&Spec {
            // git's own options, before the subcommand (whose options are
            // not read: they are the subcommand's operands).
            flags: "vhpP",
            values: "Cc",
            long_flags: &[
                "--version",
                "--help",
                "--paginate",
                "--no-pager",
                "--no-replace-objects",
                "--no-lazy-fetch",
                "--no-optional-locks",
                "--no-advice",
                "--bare",
                "--literal-pathspecs",
                "--glob-pathspecs",
                "--noglob-pathspecs",
                "--icase-pathspecs",
                "--html-path",
                "--man-path",
                "--info-path",
            ],
            long_values: &[
                "--git-dir",
                "--work-tree",
                "--namespace",
                "--config-env",
                "--super-prefix",
                "--list-cmds",
                "--attr-source",
            ],
            long_optional: &["--exec-path"],
            abbreviations: false,
            ..SPEC
        }),
        values: &[
            (
                "--namespace --super-prefix --list-cmds --attr-source",
                Value::Inert,
            ),
            ("-C --git-dir --work-tree", Value::Read),
            ("-c", Value::Config(GIT_INERT_SETTINGS)),
            (
                "--config-env",
                Value::Opaque("sets a configuration key (some name commands) from the environment"),
            ),
            (
                "--exec-path",
                Value::Opaque("runs git's commands from another directory"),
            ),
        ],
        ..PLAIN
    },
    Program {
        names: &["zip"],
        runs: Runs::Shape(Shape::Zip),
        ..PLAIN
    },
    Program {
        names: &["scp", "sftp", "sshfs"],
        runs: Runs::Opaque(
            "copies with ssh, whose `-o ProxyCommand`, `-F` config and `-S` program run commands here",
        ),
        ..PLAIN
    },
    Program {
        names: &["rsync"],
        runs: Runs::Opaque(
            "runs a remote shell (`-e`, `--rsh`, `--rsync-path`), and the scan does not read rsync's options",
        ),
        ..PLAIN
    },
    // ---- shells ----
    Program {
        names: &[
            "bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "yash", "rbash", "ksh93", "oksh",
            "loksh", "lksh", "posh",
        ],
        options: Options::Known(&SHELL_OPTIONS),
        runs: Runs::Shape(Shape::Shell),
        example: Some("bash {opts} -c '{cmd}'"),
        values: &[
            ("-o -O", Value::Inert),
            ("--rcfile --init-file", Value::Sourced),
        ],
        ..PLAIN
    },
    Program {
        names: &[
            "fish",
            "csh",
            "tcsh",
            "pwsh",
            "powershell",
            "nu",
            "elvish",
            "xonsh",
            "rc",
        ],
        runs: Runs::Shape(Shape::OtherShell),
        ..PLAIN
    },
    // ---- file commands (§8.1's list, plus `ln` and `tee`) ----
    Program {
        names: &[
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
            "ln",
            "tee",
        ],
        paths: Paths::Operands,
        ..PLAIN
    },
];

impl Program {
    /// The kind of the value of `option` (by either spelling), if the
    /// table gives one.
    pub(crate) fn value_of(&self, option: Opt) -> Option<Value> {
        self.values.iter().find_map(|(spellings, kind)| {
            spellings
                .split(' ')
                .any(|spelling| same_spelling(spelling, option))
                .then_some(*kind)
        })
    }
}

/// Whether `spelling` (`-o`, `--output`) is one of `option`'s.
fn same_spelling(spelling: &str, option: Opt) -> bool {
    match spelling.strip_prefix("--") {
        Some(_) => option.long == Some(spelling),
        None => {
            let mut letters = spelling.chars().skip(1);
            option.short.is_some() && letters.next() == option.short && letters.next().is_none()
        }
    }
}

/// Whether `program` runs a command given as its words (after options
/// and operands of its own): the wrappers the `bash -c` predicate skips.
pub(crate) fn wraps(program: &Program) -> bool {
    match program.runs {
        Runs::Command { .. } => true,
        Runs::Shape(shape) => !matches!(
            shape,
            Shape::Eval
                | Shape::Trap
                | Shape::Source
                | Shape::Shell
                | Shape::OtherShell
                | Shape::Alias
                | Shape::ScriptOperands
                | Shape::Set
                | Shape::Shopt
                | Shape::Zip
        ),
        Runs::Nothing | Runs::Opaque(_) => false,
    }
}

/// Whether `program` is a bash-like shell (`-c`, a script file, its input).
pub(crate) fn is_shell(program: &Program) -> bool {
    program.runs == Runs::Shape(Shape::Shell)
}

/// Whether `program` changes directory (its target is a path, it makes no
/// bash pattern).
pub(crate) fn changes_directory(program: &Program) -> bool {
    matches!(program.paths, Paths::Cd | Paths::DirStack)
}

/// Whether every operand of `program` is a path.
pub(crate) fn operands_are_paths(program: &Program) -> bool {
    matches!(program.paths, Paths::Operands | Paths::Cd | Paths::DirStack)
}

/// The names of the entries `keep` selects, in table order.
pub(crate) fn names_where(keep: fn(&Program) -> bool) -> Vec<&'static str> {
    PROGRAMS
        .iter()
        .filter(|program| keep(program))
        .flat_map(|program| program.names.iter().copied())
        .collect()
}

/// `git -c KEY=VALUE` settings known to change nothing the scan models
/// (keys compared without case; one ending in `.` stands for its section).
/// Any other key is opaque: `core.sshCommand`, `core.pager`, `alias.*`,
/// `core.fsmonitor`, `core.hooksPath`, `diff.external`, `gpg.program` …
/// name commands.
pub(crate) const GIT_INERT_SETTINGS: &[&str] = &[
    "user.name",
    "user.email",
    "color.",
    "core.autocrlf",
    "core.quotepath",
    "core.safecrlf",
    "core.filemode",
    "core.ignorecase",
    "core.longpaths",
    "core.abbrev",
    "core.eol",
    "core.whitespace",
    "core.symlinks",
    "init.defaultbranch",
    "advice.",
    "safe.directory",
    "pull.rebase",
    "pull.ff",
    "merge.ff",
    "merge.conflictstyle",
    "push.default",
    "push.autosetupremote",
    "commit.gpgsign",
    "tag.gpgsign",
    "log.",
    "diff.renames",
    "diff.algorithm",
    "diff.noprefix",
    "diff.mnemonicprefix",
    "diff.colormoved",
    "diff.context",
    "fetch.prune",
    "rebase.autosquash",
    "rebase.autostash",
    "http.sslverify",
    "http.postbuffer",
    "protocol.version",
    "gc.auto",
    "maintenance.auto",
    "status.",
    "format.pretty",
    "i18n.",
    "column.",
    "grep.linenumber",
    "branch.sort",
    "versionsort.",
    "rerere.enabled",
    "submodule.recurse",
    "checkout.defaultremote",
    "feature.manyfiles",
    "index.threads",
    "pack.threads",
];

/// Why the setting `KEY[=VALUE]` is opaque, if its key is not on `inert`.
pub(crate) fn setting_reason(setting: &str, inert: &[&str]) -> Option<String> {
    let key = setting
        .split('=')
        .next()
        .unwrap_or(setting)
        .to_ascii_lowercase();
    let known = inert.iter().any(|entry| {
        key == *entry || (entry.ends_with('.') && key.starts_with(entry) && key.len() > entry.len())
    });
    (!known).then(|| {
        format!(
            "sets `{key}`, which the scan does not know to be inert (some settings name commands)"
        )
    })
}

/// The entry for `name`, if the table has one. The first entry wins
/// (`wait` is listed once among the plain builtins and once with its
/// options: the later one is the exact one, so lookups go last to first).
pub(crate) fn find(name: &str) -> Option<&'static Program> {
    PROGRAMS
        .iter()
        .rev()
        .find(|program| program.names.contains(&name))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use crate::shell::bash_scan::scan;
    use proptest::prelude::*;

    /// bash 5.2's builtins (`compgen -b`, `enable -a`) and keywords
    /// (`compgen -k`).
    const BASH_BUILTINS: &[&str] = &[
        ".",
        ":",
        "[",
        "alias",
        "bg",
        "bind",
        "break",
        "builtin",
        "caller",
        "cd",
        "command",
        "compgen",
        "complete",
        "compopt",
        "continue",
        "declare",
        "dirs",
        "disown",
        "echo",
        "enable",
        "eval",
        "exec",
        "exit",
        "export",
        "false",
        "fc",
        "fg",
        "getopts",
        "hash",
        "help",
        "history",
        "jobs",
        "kill",
        "let",
        "local",
        "logout",
        "mapfile",
        "popd",
        "printf",
        "pushd",
        "pwd",
        "read",
        "readarray",
        "readonly",
        "return",
        "set",
        "shift",
        "shopt",
        "source",
        "suspend",
        "test",
        "times",
        "trap",
        "true",
        "type",
        "typeset",
        "ulimit",
        "umask",
        "unalias",
        "unset",
        "wait",
    ];
    const BASH_KEYWORDS: &[&str] = &[
        "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until",
        "do", "done", "in", "function", "time", "{", "}", "!", "[[", "]]", "coproc",
    ];

    #[test]
    fn names_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for program in PROGRAMS {
            for name in program.names {
                assert!(seen.insert(*name), "`{name}` has two entries");
            }
        }
    }

    /// Option values that run, source or write are seen or asked.
    #[test]
    fn executed_option_values() {
        for line in [
            "strace -o '|rm -rf src' true",
            "strace -o'!rm -rf src' true",
            "strace --output='|rm -rf src' true",
            "strace -qqo '|rm -rf src' true",
            "flock l -c 'rm -rf src'",
            "tar -I 'rm -rf src' -cf a.tar x",
            "tar --use-compress-program='rm -rf src' -cf a.tar x",
            "tar cIf 'rm -rf src' a.tar x",
            "tar -xf a.tar --to-command='rm -rf src'",
            "tar -F 'rm -rf src' -cf a.tar x",
        ] {
            let scanned = line_scan(line);
            assert!(
                scanned.patterns.iter().any(|p| p == "rm -rf src"),
                "{line}: {scanned:?}"
            );
        }
        for line in [
            "strace -o \"$OUT\" true",
            "strace --out '|rm -rf src' true",
            "su -s /usr/bin/rm root",
            "su --shell=/usr/bin/python3 -c x root",
            "runuser -u u -s /bin/rm x",
            "hyperfine -S python3 'import os'",
            "tar --checkpoint=1 --checkpoint-action=exec='rm -rf src' -cf a.tar x",
            "tar --rsh-command=$X -cf h:a.tar x",
            "git -c core.sshCommand='rm -rf src' fetch",
            "git -c alias.x='!rm -rf src' x",
            "git -c core.pager='rm -rf src' log",
            "git --exec-path=./evil status",
            "git --config-env=core.pager=X log",
            "zip -TT 'rm -rf src' -T a.zip x",
            "zip --unzip-command='rm -rf src' -T a.zip x",
            "scp -o ProxyCommand='rm -rf src' a h:b",
            "rsync -e 'sh -c \"rm -rf src\"' a h:b",
            "systemd-run -p ExecStartPre='/bin/rm -rf src' true",
            "strace -E BASH_ENV=./x bash -c true",
            "bwrap --setenv BASH_ENV ./x bash -c true",
            "bash --rcfile /dev/fd/3 -i",
            "sh --init-file /proc/self/fd/0 -i",
            "xargs --process-slot-var=BASH_ENV bash -c true",
        ] {
            assert!(!line_scan(line).opaque.is_empty(), "{line}");
        }
        for line in [
            "strace -f -o trace.log ./app",
            "su -s /bin/bash -c 'ls' root",
            "git -c user.name=x -c color.ui=always commit -m x",
            "git -C sub status",
            "tar -czf out.tgz src",
            "tar xzf a.tgz -C out",
            "zip -r a.zip src",
            "find . -name x -fprint out.txt",
        ] {
            assert!(
                line_scan(line).opaque.is_empty(),
                "{line}: {:?}",
                line_scan(line).opaque
            );
        }
        assert!(
            line_scan("find . -fprintf /etc/x '%p' -quit")
                .path_args
                .contains(&"/etc/x".to_string())
        );
        assert!(
            line_scan("tar -cf /tmp/a.tar src")
                .path_args
                .contains(&"/tmp/a.tar".to_string())
        );
    }

    /// Every option that takes a value says what the value is.
    #[test]
    fn every_value_option_has_a_kind() {
        let mut missing = Vec::new();
        for program in PROGRAMS {
            let Options::Known(spec) = program.options else {
                continue;
            };
            let shorts = spec.values.chars().chain(spec.optional.chars()).map(s);
            let longs = spec
                .long_values
                .iter()
                .chain(spec.long_optional)
                .chain(spec.long_pairs)
                .map(|long| l(long));
            for option in shorts.chain(longs) {
                if program.value_of(option).is_none() {
                    missing.push(format!("{} {option:?}", program.names[0]));
                }
            }
        }
        assert!(missing.is_empty(), "values without a kind: {missing:#?}");
    }

    /// The options a program's `--help` lists: on each line that starts
    /// (after blanks) with `-`, the `-x` and `--name` words before the
    /// description (two blanks), without their `=ARG`, `[=ARG]` or `<ARG>`.
    fn help_options(help: &str) -> Vec<String> {
        let mut found = Vec::new();
        for line in help.lines() {
            let trimmed = line.trim_start();
            if !trimmed.starts_with('-') || trimmed.len() == line.len() {
                continue;
            }
            let head = trimmed.split("  ").next().unwrap_or("");
            for token in head.split([',', ' ', '|', '/']) {
                let token = token.trim_matches(['[', ']']);
                let name: String = token
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
                    .collect();
                let long = name.len() > 2 && name.starts_with("--");
                let short = name.len() == 2 && name.starts_with('-') && name != "--";
                if (long || short) && !found.contains(&name) {
                    found.push(name);
                }
            }
        }
        found
    }

    /// Whether the entry's options know `option` (`-x` or `--name`).
    fn classifies(spec: &Spec, option: &str) -> bool {
        match option.strip_prefix("--") {
            Some(_) => spec
                .long_flags
                .iter()
                .chain(spec.long_values)
                .chain(spec.long_optional)
                .chain(spec.long_pairs)
                .any(|long| *long == option),
            None => option.chars().nth(1).is_some_and(|c| {
                spec.flags.contains(c) || spec.values.contains(c) || spec.optional.contains(c)
            }),
        }
    }

    /// Every option the `--help` of a tabled program installed here lists
    /// is one its entry classifies (programs not installed are skipped,
    /// and named).
    #[test]
    fn every_option_of_installed_programs_is_classified() {
        let mut skipped = Vec::new();
        let mut checked = Vec::new();
        let mut unclassified = Vec::new();
        for program in PROGRAMS.iter().filter(|p| !p.builtin) {
            let Options::Known(spec) = program.options else {
                continue;
            };
            for name in program.names {
                let Some(output) = std::process::Command::new(name)
                    .arg("--help")
                    .env_clear()
                    .env(
                        "PATH",
                        "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                    )
                    .env("LC_ALL", "C")
                    .stdin(std::process::Stdio::null())
                    .output()
                    .ok()
                else {
                    skipped.push(*name);
                    continue;
                };
                let help = format!(
                    "{}{}",
                    String::from_utf8_lossy(&output.stdout),
                    String::from_utf8_lossy(&output.stderr)
                );
                checked.push(*name);
                for option in help_options(&help) {
                    if !classifies(spec, &option) {
                        unclassified.push(format!("{name} {option}"));
                    }
                }
            }
        }
        println!("--help checked: {checked:?}; not installed: {skipped:?}");
        assert!(
            unclassified.is_empty(),
            "options --help lists that the table does not classify: {unclassified:#?}"
        );
    }

    #[test]
    fn every_bash_builtin_and_keyword_has_an_explicit_entry() {
        let mut names: Vec<String> = BASH_BUILTINS
            .iter()
            .chain(BASH_KEYWORDS)
            .map(|name| name.to_string())
            .collect();
        // The machine's bash, when it has one, may know more.
        if let Ok(output) = std::process::Command::new("bash")
            .args(["--norc", "--noprofile", "-c", "compgen -b; compgen -k"])
            .output()
        {
            names.extend(
                String::from_utf8_lossy(&output.stdout)
                    .lines()
                    .map(str::to_string),
            );
        }
        for name in &names {
            let program = find(name).unwrap_or_else(|| panic!("no entry for the builtin `{name}`"));
            assert!(program.builtin, "`{name}` is a builtin");
        }
    }

    fn line_scan(line: &str) -> crate::shell::bash_scan::BashScan {
        scan(line).unwrap()
    }

    fn caught(line: &str) -> bool {
        let scanned = line_scan(line);
        scanned.patterns.iter().any(|p| p == "rm -f x") || !scanned.opaque.is_empty()
    }

    #[test]
    fn wraps_column() {
        for line in [
            "jobs -x rm -f x",
            "chrt -o 0 rm -f x",
            "prlimit --nofile=10 rm -f x",
            "nsenter -t 1 -mfile -u rm -f x",
            "unshare --mount=/x -r rm -f x",
            "bwrap --ro-bind / / --dev /dev rm -f x",
            "strace -f -o log rm -f x",
            "perf record -g -o out rm -f x",
            "gdb -batch --args rm -f x",
            "sg users 'rm -f x'",
            "firejail --private --net=none rm -f x",
            "timeout --kill 1 5 rm -f x",
            "sudo -h rm -f x",
            "builtin exec rm -f x",
        ] {
            assert!(
                line_scan(line).patterns.iter().any(|p| p == "rm -f x"),
                "{line}"
            );
        }
        // Options that mean no command runs.
        assert!(
            !line_scan("command -v rm")
                .patterns
                .iter()
                .any(|p| p.starts_with("rm"))
        );
        assert!(
            !line_scan("jobs -l")
                .patterns
                .iter()
                .any(|p| p.starts_with("-l"))
        );
        assert!(!line_scan("sudo -l rm").patterns.iter().any(|p| p == "rm"));
        // Remote and composed commands are asked.
        assert!(!line_scan("ssh host ls").opaque.is_empty());
        assert!(!line_scan("parallel echo ::: a").opaque.is_empty());
        assert!(
            !line_scan("gdb -ex 'shell rm -f x' --args ls")
                .opaque
                .is_empty()
        );
    }

    #[test]
    fn evaluates_column() {
        for line in [
            "compgen -C 'rm -f x' a",
            "complete -C 'rm -f x' ls",
            "env --split-str='rm -f x'",
            "flock l -c 'rm -f x'",
            "su --comm='rm -f x' root",
            "watch -n 1 'rm -f x'",
            "entr -s 'rm -f x'",
            "trap 'rm -f x' EXIT",
            "eval -- rm -f x",
        ] {
            assert!(
                line_scan(line).patterns.iter().any(|p| p == "rm -f x"),
                "{line}"
            );
        }
        for line in [
            "compgen -W '$(rm -f x)' a",
            "mapfile -C 'rm -f x #' -c 1 a < f",
            "bind -x '\"\\C-x\": rm -f x'",
            "fc -s rm",
            "enable -f ./x.so rm",
            "hash -p /tmp/evil ls",
            "alias ls='rm -f x'",
            "fish -c 'rm -f x'",
            "read -Q x",
        ] {
            assert!(!line_scan(line).opaque.is_empty(), "{line}");
        }
        for line in [
            "compgen -W 'a b' a",
            "complete -F _git git",
            "alias",
            "trap - EXIT",
        ] {
            assert!(line_scan(line).opaque.is_empty(), "{line}");
        }
    }

    #[test]
    fn sets_column() {
        // A variable bash runs as code, however a builtin sets it.
        for line in [
            "read PS4 < f",
            "read -r -a PROMPT_COMMAND < f",
            "printf -v PS4 '%s' x",
            "mapfile -t BASH_ENV < f",
            "readarray ENV < f",
            "getopts ab PS1",
            "wait -n -p PS4",
            "declare -n r=PS4",
            "declare -n r; r=PS0",
            "declare -n r=$name",
            "local -n r=\"$1\"",
            "export PS4='$(rm -f x)'",
            "builtin read PS4 < f",
            "MAILPATH='/var/mail/u?$(rm -f x)'",
        ] {
            assert!(!line_scan(line).opaque.is_empty(), "{line}");
        }
        // Ordinary names stay clear.
        for line in [
            "read -r line < f",
            "read -ra parts < f",
            "printf -v n '%d' 3",
            "printf '%s -v PS4' x",
            "mapfile -t lines < f",
            "getopts ab opt",
            "wait -n -p pid",
            "declare -n r=X",
            "export PATH=/bin",
            "let i=1+2 j=i",
        ] {
            assert!(
                line_scan(line).opaque.is_empty(),
                "{line}: {:?}",
                line_scan(line).opaque
            );
        }
    }

    /// Ordinary commands of build tools, version control, package
    /// managers, pipelines and wrappers stay clear of `bash_opaque`.
    const ORDINARY: &[&str] = &[
        "git status",
        "git log --oneline -n 5",
        "git diff --stat HEAD~1",
        "git commit -m 'fix: x'",
        "cargo build --release",
        "cargo test -p agent-tools --lib shell_",
        "cargo clippy --all-targets -- -D warnings",
        "cargo fmt --all",
        "npm run test -- --watch",
        "npm install",
        "npx tsc --noEmit",
        "pnpm -r build",
        "yarn test",
        "pip install -r requirements.txt",
        "python3 -m pytest -q",
        "go test ./...",
        "make -j4",
        "make -C build install",
        "cmake -S . -B build",
        "ls -la | grep x",
        "find . -name '*.rs' | xargs wc -l",
        "find . -type f -name '*.tmp' -exec ls -l {} +",
        "grep -rn TODO src | head -20",
        "cat README.md | wc -l",
        "sort file | uniq -c | sort -rn",
        "sed -n 1,20p src/lib.rs",
        "awk '{print $1}' f",
        "tar -czf out.tgz src",
        "curl -fsSL https://example.com -o page.html",
        "docker build -t app .",
        "docker run --rm app",
        "kubectl get pods",
        "timeout 60 cargo test",
        "timeout -s KILL 10s ./run.sh",
        "nice -n 10 make -j4",
        "ionice -c3 cargo build",
        "env RUST_LOG=debug cargo run",
        "env -i PATH=/usr/bin make",
        "sudo -u postgres psql -c 'select 1'",
        "sudo apt-get install -y jq",
        "time cargo build",
        "nohup ./server &",
        "xargs -0 -n1 echo < list",
        "strace -f -o trace.log ./app",
        "valgrind --leak-check=full ./app",
        "bash -c 'echo hi'",
        "bash scripts/build.sh",
        "sh -ec 'make && make test'",
        "read -r line < README.md",
        "while read -r a b; do echo \"$a\"; done < f",
        "printf -v n '%d' 3",
        "printf '%s\\n' a b",
        "mapfile -t lines < f",
        "set -euo pipefail",
        "shopt -s nullglob globstar",
        "declare -a arr=(1 2 3)",
        "local x=1",
        "export PATH=\"$HOME/bin:$PATH\"",
        "source .venv/bin/activate",
        "cd src && ls",
        "pushd build && make && popd",
        "echo -n hi",
        "echo -e 'a\\tb'",
        "test -f Cargo.toml && echo yes",
        "[ -d target ] || mkdir target",
        "trap 'rm -f tmp' EXIT",
        "command -v cargo",
        "type -a git",
        "hash -r",
        "getopts ab opt",
        "wait",
        "jobs -l",
        "kill %1",
        "ulimit -n 4096",
        "umask 022",
        "complete -F _git git",
        "compgen -W 'a b c' a",
        "history -c",
        "alias",
        "unalias ll",
        "cp -r a b",
        "rm -rf target",
        "chmod +x run.sh",
        "ln -s a b",
        "tee out.log < in",
        "watch -n 1 'ls -l'",
        "flock /tmp/lock make",
        "taskset -c 0 ./bench",
        "unshare -r id",
        "chrt -o 0 ./app",
    ];

    #[test]
    fn ordinary_commands_stay_clear() {
        let opaque: Vec<(&str, Vec<String>)> = ORDINARY
            .iter()
            .map(|line| (*line, line_scan(line).opaque))
            .filter(|(_, reasons)| !reasons.is_empty())
            .collect();
        println!(
            "ordinary commands: {} of {} opaque",
            opaque.len(),
            ORDINARY.len()
        );
        assert!(opaque.is_empty(), "{opaque:#?}");
    }

    #[test]
    fn paths_column() {
        let paths = |line| line_scan(line).path_args;
        assert_eq!(paths("rm -f a b"), ["a", "b"]);
        assert_eq!(paths("env -C dir ls"), ["dir"]);
        assert_eq!(paths("time -o out ls"), ["out"]);
        assert_eq!(paths("strace --output=log ls"), ["log"]);
        assert!(paths("echo a b").is_empty());
        assert_eq!(paths("sudo -e notes"), ["notes"]);
    }

    /// Options a program takes that mean it runs no command, or runs it
    /// differently from its example: left out of the generated spellings
    /// (each is checked by the columns' tests above).
    const MODES: &[(&str, char, &str)] = &[
        ("command", 'v', ""),
        ("command", 'V', ""),
        ("sudo", 'e', "--edit"),
        ("sudo", 'l', "--list"),
        ("sudo", 'v', "--validate"),
        ("taskset", 'p', "--pid"),
        ("watch", 'x', "--exec"),
    ];

    fn excluded(program: &Program, short: Option<char>, long: Option<&str>) -> bool {
        let short_spelling = short.map(|c| format!("-{c}"));
        let spellings = [short_spelling.as_deref(), long];
        let coded = program
            .values
            .iter()
            .filter(|(written, _)| {
                written
                    .split(' ')
                    .any(|spelling| spellings.contains(&Some(spelling)))
            })
            .map(|(_, kind)| *kind)
            .any(|kind| {
                matches!(
                    kind,
                    Value::Script | Value::CommandName | Value::Expanded | Value::Opaque(_)
                )
            });
        let name = program.names[0];
        coded
            || MODES.iter().any(|(program, c, l)| {
                *program == name && (short == Some(*c) || (!l.is_empty() && long == Some(*l)))
            })
    }

    /// The shortest prefix of `long` no other long option of `spec` starts
    /// with, if it is shorter than `long`.
    fn abbreviation(spec: &Spec, long: &str) -> Option<String> {
        let all: Vec<&str> = spec
            .long_flags
            .iter()
            .chain(spec.long_values)
            .chain(spec.long_optional)
            .chain(spec.long_pairs)
            .copied()
            .filter(|other| *other != long)
            .collect();
        (4..long.len()).map(|n| &long[..n]).find_map(|prefix| {
            (!all.iter().any(|other| other.starts_with(prefix))).then(|| prefix.to_string())
        })
    }

    /// Every spelling of every option of `program` the generator may use.
    fn spellings(program: &Program) -> Vec<String> {
        let Options::Known(spec) = program.options else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let flags: Vec<char> = spec
            .flags
            .chars()
            .filter(|c| !excluded(program, Some(*c), None))
            .collect();
        for c in &flags {
            out.push(format!("-{c}"));
        }
        if flags.len() >= 2 {
            out.push(format!("-{}{}", flags[0], flags[flags.len() - 1]));
        }
        for c in spec
            .values
            .chars()
            .filter(|c| !excluded(program, Some(*c), None))
        {
            out.push(format!("-{c} V"));
            out.push(format!("-{c}V"));
            if let Some(flag) = flags.first() {
                out.push(format!("-{flag}{c} V"));
                out.push(format!("-{flag}{c}V"));
            }
        }
        for c in spec
            .optional
            .chars()
            .filter(|c| !excluded(program, Some(*c), None))
        {
            out.push(format!("-{c}"));
            out.push(format!("-{c}V"));
        }
        let longs = |list: &'static [&'static str]| {
            list.iter()
                .copied()
                .filter(|long| !excluded(program, None, Some(long)))
                .collect::<Vec<_>>()
        };
        for long in longs(spec.long_flags) {
            out.push(long.to_string());
            if spec.abbreviations
                && let Some(short) = abbreviation(spec, long)
            {
                out.push(short);
            }
        }
        for long in longs(spec.long_values) {
            out.push(format!("{long} V"));
            out.push(format!("{long}=V"));
            if spec.abbreviations
                && let Some(short) = abbreviation(spec, long)
            {
                out.push(format!("{short} V"));
                out.push(format!("{short}=V"));
            }
        }
        for long in longs(spec.long_optional) {
            out.push(format!("{long}=V"));
        }
        for long in longs(spec.long_pairs) {
            out.push(format!("{long} V W"));
        }
        out
    }

    /// The entries that run a command or evaluate text, with an example.
    fn examples() -> Vec<(&'static Program, &'static str)> {
        PROGRAMS
            .iter()
            .filter_map(|program| program.example.map(|example| (program, example)))
            .collect()
    }

    #[test]
    fn every_entry_that_runs_or_evaluates_has_an_example() {
        for program in PROGRAMS {
            let runs = !matches!(program.runs, Runs::Nothing | Runs::Opaque(_))
                || program
                    .values
                    .iter()
                    .any(|(_, kind)| *kind == Value::Script);
            let exempt = matches!(
                program.runs,
                Runs::Shape(
                    Shape::Source
                        | Shape::OtherShell
                        | Shape::Alias
                        | Shape::Set
                        | Shape::Shopt
                        | Shape::Zip
                )
            );
            assert!(
                !runs || exempt || program.example.is_some(),
                "`{}` runs commands and has no example",
                program.names[0]
            );
        }
        for (program, example) in examples() {
            let line = example.replace("{opts}", "").replace("{cmd}", "rm -f x");
            assert!(
                line_scan(&line).patterns.iter().any(|p| p == "rm -f x"),
                "`{}`: the example {line:?} does not show `rm -f x`",
                program.names[0]
            );
        }
    }

    /// Words before a wrapped command that set a variable for it (bash's
    /// `NAME+=v` and `NAME[i]=v` as well as `NAME=v` after `coproc` and
    /// `time`, and env's and sudo's any `NAME=v`): the command after them
    /// is seen (a fuzz find: `coproc X+=a m2` ran `m2` unseen). For the
    /// other wrappers such a word is the program, seen either way.
    #[test]
    fn assignment_words_before_a_wrapped_command_are_skipped() {
        const ASSIGNING: &[&str] = &["coproc", "time", "env", "sudo"];
        for (program, example) in examples() {
            let name = program.names[0];
            // In a script (`compgen -C '…'`) bash's own rule applies: a
            // word that is no assignment is the program.
            let script = example.contains("'{cmd}'");
            // A file named like an assignment is the program for every
            // wrapper but env and sudo: it must be seen.
            let path_program = example
                .replace("{opts}", "")
                .replace("{cmd}", "./x=y rm -f x");
            if !["env", "sudo"].contains(&name) && !script {
                let scanned = line_scan(&path_program);
                assert!(
                    caught(&path_program) || scanned.patterns.iter().any(|p| p == "./x=y rm -f x"),
                    "`{name}`: {path_program:?} hides the program ./x=y: {scanned:?}"
                );
            }
            for assign in [
                "X=a", "X+=a", "X[0]=a", "X[0]+=a", "1X=a", "X.Y=a", "X+=a Y=b",
            ] {
                let valid = !["1X=a", "X.Y=a"].contains(&assign);
                let line = example
                    .replace("{opts}", "")
                    .replace("{cmd}", &format!("{assign} rm -f x"));
                let scanned = line_scan(&line);
                let as_program = scanned
                    .patterns
                    .iter()
                    .any(|p| p == &format!("{assign} rm -f x"));
                // env and sudo take any `NAME=` word; bash (after coproc
                // and time, and in scripts) only a shell name's.
                let must_skip = if script || ["coproc", "time"].contains(&name) {
                    valid
                } else {
                    ASSIGNING.contains(&name)
                };
                assert!(
                    caught(&line) || !must_skip && as_program,
                    "`{name}`: {line:?} hides what runs: {scanned:?}"
                );
            }
        }
    }

    fn example_cases() -> impl Strategy<Value = String> {
        let cases = examples();
        (0..cases.len()).prop_flat_map(move |k| {
            let (program, example) = cases[k];
            let spellings = spellings(program);
            let pick = if spellings.is_empty() {
                Just(Vec::new()).boxed()
            } else {
                proptest::collection::vec(proptest::sample::select(spellings), 0..4).boxed()
            };
            let name = program.names[0];
            (pick, any::<bool>()).prop_map(move |(options, dashes)| {
                let mut opts = options.join(" ");
                // `--` ends the options: only where no option follows.
                let option_follows = example
                    .split("{opts}")
                    .nth(1)
                    .is_some_and(|rest| rest.starts_with(" -"));
                if dashes && !option_follows && !opts.is_empty() {
                    opts.push_str(" --");
                }
                example
                    .replace("{opts}", &opts)
                    .replace("{cmd}", "rm -f x")
                    .replacen(program.names[0], name, 1)
            })
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// A hidden `rm -f x` under any spelling of a program's options is
        /// a pattern of its own, or the line is opaque.
        #[test]
        fn hidden_command_is_seen_or_asked(line in example_cases()) {
            prop_assert!(caught(&line), "{line:?}: {:?}", line_scan(&line));
        }

        /// An option the table does not list, anywhere among the options,
        /// is opaque.
        #[test]
        fn unknown_options_are_asked(
            k in 0..PROGRAMS.len(),
            letter in proptest::char::range('a', 'z'),
            long in "--[a-z]{3,8}-zz",
        ) {
            let program = &PROGRAMS[k];
            let Options::Known(spec) = program.options else {
                return Ok(());
            };
            let name = program.names[0];
            // tree-sitter parses these as declarations, which `shell_eval`
            // reads (bash rejects their unknown options and runs nothing).
            if program.names_set == Names::Declarations || program.names_set == Names::Unset {
                return Ok(());
            }
            let known = spec.flags.contains(letter)
                || spec.values.contains(letter)
                || spec.optional.contains(letter);
            if !known {
                let line = format!("{name} -{letter} rm -f x");
                prop_assert!(!line_scan(&line).opaque.is_empty(), "{line}");
            }
            let line = format!("{name} {long} rm -f x");
            prop_assert!(!line_scan(&line).opaque.is_empty(), "{line}");
        }
    }
}
