//! What one simple command runs, seen through the programs that run other
//! programs: wrappers (`sudo`, `env`, `xargs`, `find -exec` …), shells
//! given a script (`bash -c`, `sh -c` with any options), `eval` and
//! `trap` strings; and which of its words are paths the file system will
//! use. What each program does is data in the program table
//! (`programs.rs`); this module is the walk that reads it: it parses a
//! command's options as its entry lists them (an unlisted one is opaque),
//! follows the command a wrapper runs, collects the scripts given as text,
//! and the special shapes (`find -exec … ;`, `xargs`, `su USER ARGS`,
//! `flock FILE cmd` …) the entries name.

use crate::shell::programs::{
    self, Opt, Options, Paths, Program, Runs, Shape, Spec, Value, l, s, sl,
};
use std::sync::LazyLock;

use crate::shell::shell_settings;
use crate::shell::shell_word::Word;

/// Commands that run the command given after their options: derived from
/// the program table (`programs.rs`, the entries that run a command given
/// as words). Read by `bash_scan::shell_c_script`.
pub static WRAPPERS: LazyLock<Vec<&'static str>> =
    LazyLock::new(|| programs::names_where(programs::wraps));

/// Shells whose `-c` script, or heredoc / here-string input, is parsed:
/// the program table's `Shell` entries.
pub static SHELLS: LazyLock<Vec<&'static str>> =
    LazyLock::new(|| programs::names_where(programs::is_shell));

/// Directory-changing commands: they never produce a bash pattern (§8.1),
/// their target is checked as a path (the program table's `Cd` and
/// `DirStack` entries).
pub static CD_COMMANDS: LazyLock<Vec<&'static str>> =
    LazyLock::new(|| programs::names_where(programs::changes_directory));

/// Commands whose every non-option argument is a path (§8.1's list, plus
/// `ln` and `tee`, which create links and write files): the program
/// table's entries whose operands are paths.
pub static FILE_COMMANDS: LazyLock<Vec<&'static str>> =
    LazyLock::new(|| programs::names_where(programs::operands_are_paths));

/// How many wrappers deep a command is followed before it is reported as
/// not seen through.
const MAX_WRAPPER_DEPTH: usize = 32;

/// How many `xargs` / `find -exec` deep the command they complete with
/// their input is followed (each level analyses its command three times).
const MAX_INPUT_DEPTH: usize = 3;

/// What a simple command runs.
#[derive(Debug, Default)]
pub struct Analysis {
    /// Every command that runs: the command itself first, then each command
    /// a wrapper runs.
    pub commands: Vec<Vec<Word>>,
    /// Scripts the command runs that are given as text (`bash -c`, `eval`,
    /// `trap`, `env -S`, `watch`): parsed as command lines in turn.
    pub scripts: Vec<String>,
    /// Words the file system will use as paths.
    pub paths: Vec<Word>,
    /// What could not be seen through, one reason each.
    pub opaque: Vec<String>,
    /// A shell was started without a script: it reads its commands from
    /// its standard input (a heredoc or here-string the caller can parse,
    /// or something else that cannot be seen).
    pub reads_stdin: bool,
    /// How many `xargs` / `find -exec` inputs this analysis is inside.
    input_depth: usize,
    /// How many words, and bytes of words, this analysis has copied (its
    /// commands, and those analysed again for `xargs` / `find -exec`
    /// input), bounded by [`MAX_ANALYSED_WORDS`] and [`MAX_ANALYSED_BYTES`].
    words: usize,
    bytes: usize,
    /// The command an `xargs` completes with its input, listed after the
    /// command as written (which the caller analyses next).
    completed: Option<Vec<Word>>,
}

/// The name a program runs as: its base name, and `bash` for
/// `/proc/…/exe` (the executable of a process: the shell itself for
/// `/proc/self/exe`).
fn program_name(program: &str) -> &str {
    if program.starts_with("/proc/") && program.ends_with("/exe") {
        "bash"
    } else {
        base_name(program)
    }
}

/// The program name without its directory.
pub fn base_name(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

/// Analyses the command made of `words`.
pub fn analyze(words: &[Word]) -> Analysis {
    let mut out = Analysis::default();
    analyze_into(words, 0, &mut out);
    // A path given to an option that takes paths is also one that looks
    // like a path: keep the first.
    let mut seen = std::collections::HashSet::new();
    out.paths.retain(|word| seen.insert(word.text.clone()));
    out
}

/// Most words the commands of one simple command may add up to, wrappers'
/// commands included (each wrapper repeats the words after it), and those
/// analysed again with `xargs` / `find -exec` input: one budget for the
/// whole analysis, so a chain of wrappers costs at most this many word
/// copies however it nests.
const MAX_ANALYSED_WORDS: usize = 16 * 1024;

/// Most bytes of words one analysis may copy (1 MiB, eight times the
/// longest command line): a long word behind many wrappers is copied once
/// per level.
const MAX_ANALYSED_BYTES: usize = 1024 * 1024;

/// Why an analysis stopped at its budget.
fn over_budget_reason() -> String {
    format!(
        "the command wraps more than {MAX_ANALYSED_WORDS} words ({MAX_ANALYSED_BYTES} bytes) of commands in commands"
    )
}

/// Marks `out` opaque for its spent budget (once).
fn mark_over_budget(out: &mut Analysis) {
    let reason = over_budget_reason();
    if !out.opaque.contains(&reason) {
        out.opaque.push(reason);
    }
}

fn analyze_into(words: &[Word], depth: usize, out: &mut Analysis) {
    let Some(first) = words.first() else {
        return;
    };
    if depth > MAX_WRAPPER_DEPTH {
        out.opaque
            .push(format!("more than {MAX_WRAPPER_DEPTH} nested wrappers"));
        return;
    }
    // Each wrapper level copies the rest of the line: a chain of
    // `xargs xargs …` or `find -exec find -exec …` would make that
    // quadratic. Past the bound the line is asked as a whole.
    out.words += words.len();
    out.bytes += words.iter().map(|w| w.text.len()).sum::<usize>();
    if out.words > MAX_ANALYSED_WORDS || out.bytes > MAX_ANALYSED_BYTES {
        mark_over_budget(out);
        return;
    }
    out.commands.push(words.to_vec());
    if first.dynamic || first.glob.is_some() {
        out.opaque.push(format!(
            "the program `{}` is only known when the command runs",
            first.text
        ));
    }
    let name = program_name(&first.text);
    let args = &words[1..];
    let Some(program) = programs::find(name) else {
        collect_paths(name, Paths::LookLike, args, out);
        return;
    };
    let parsed = match parse_options(args, program.options) {
        Ok(parsed) => parsed,
        Err(option) => {
            let kind = if program.builtin { "the builtin " } else { "" };
            out.opaque.push(format!(
                "{kind}`{name}` with the option `{option}`, which the scan does not model"
            ));
            collect_paths(name, program.paths, args, out);
            return;
        }
    };
    option_values(program, name, &parsed, depth, out);
    // The index in `args` where the command it runs starts, if any.
    let inner = match program.runs {
        Runs::Nothing => None,
        Runs::Opaque(reason) => {
            out.opaque.push(format!("`{name}` {reason}"));
            None
        }
        Runs::Command {
            skip,
            shell_without,
        } => {
            // `coproc X=1 cmd` runs `cmd` with `X` set; for the other
            // wrappers such a word fails as a program name, and seeing the
            // command after it asks for more, never less.
            let start = skip_assignments(args, parsed.end + skip, bash_assignment);
            if start >= args.len() && shell_without {
                out.reads_stdin = true;
            }
            Some(start)
        }
        Runs::Shape(shape) => shape_inner(shape, name, args, &parsed, depth, out),
    };
    let completed = out.completed.take();
    // A wrapper's own arguments end where the command it runs starts (that
    // command's paths are collected when it is analysed); find's paths end
    // at its first `-exec`.
    let own = match (program.runs, inner) {
        (_, Some(i)) => &args[..i.min(args.len())],
        (Runs::Shape(Shape::Find), None) => {
            let end = args
                .iter()
                .position(|w| FIND_EXECS.contains(&w.text.as_str()))
                .unwrap_or(args.len());
            &args[..end]
        }
        _ => args,
    };
    collect_paths(name, program.paths, own, out);
    if let Some(i) = inner
        && i < args.len()
    {
        analyze_into(&args[i..], depth + 1, out);
    }
    out.commands.extend(completed);
}

/// What the values of the options given mean, as the program's entry
/// says (see [`Value`]); a value of an option the entry gives no kind is
/// opaque.
fn option_values(program: &Program, name: &str, parsed: &Parsed, depth: usize, out: &mut Analysis) {
    for (option, value) in &parsed.given {
        let Some(value) = value else {
            continue;
        };
        let Some(kind) = program.value_of(*option) else {
            out.opaque.push(format!(
                "`{name}` with the option `{}`, whose value the table does not classify",
                spelling(*option)
            ));
            continue;
        };
        option_value(kind, name, value, depth, out);
    }
    // `NAME=value` words, or `NAME VALUE` pairs (`bwrap --setenv`).
    let pairs: &[&str] = match program.options {
        Options::Known(spec) => spec.long_pairs,
        _ => &[],
    };
    for (spellings, kind) in program.values {
        if *kind != Value::Environment {
            continue;
        }
        for spelling in spellings.split(' ') {
            let option = match spelling.strip_prefix("--") {
                Some(_) => l_owned(spelling),
                None => s(spelling.chars().nth(1).unwrap_or('-')),
            };
            let values: Vec<&str> = parsed
                .values(option)
                .iter()
                .map(|w| w.text.as_str())
                .collect();
            let dynamic = parsed.values(option).iter().any(|w| w.dynamic);
            let assignments: Vec<String> = if pairs.contains(&spelling) {
                values.chunks(2).map(|pair| pair.join("=")).collect()
            } else {
                values.iter().map(|v| v.to_string()).collect()
            };
            if dynamic && !assignments.is_empty() {
                out.opaque.push(format!(
                    "`{name} {spelling}` sets an environment only known when the command runs"
                ));
            }
            for assignment in assignments {
                if let Some(reason) = shell_settings::environment_reason(&assignment) {
                    out.opaque.push(format!("`{name} {spelling}` {reason}"));
                }
            }
        }
    }
}

/// The table's spelling of a long option as an [`Opt`] (the spellings of
/// the entries are `'static`).
fn l_owned(spelling: &'static str) -> Opt {
    l(spelling)
}

/// How an option is written, for reasons.
fn spelling(option: Opt) -> String {
    match (option.long, option.short) {
        (Some(long), _) => long.to_string(),
        (None, Some(short)) => format!("-{short}"),
        (None, None) => String::new(),
    }
}

/// One option's value, as its kind says.
fn option_value(kind: Value, name: &str, value: &Word, depth: usize, out: &mut Analysis) {
    match kind {
        Value::Inert | Value::Environment => {}
        Value::Read | Value::Written => out.paths.push(value.clone()),
        Value::WrittenOrPipe => match value.text.strip_prefix(['|', '!']) {
            Some(command) => script_text(
                name,
                &Word {
                    text: command.to_string(),
                    ..value.clone()
                },
                out,
            ),
            None if value.dynamic => out.opaque.push(format!(
                "`{name}` writes to `{}`, which may be a command (`|…`) only known when it runs",
                value.text
            )),
            None => out.paths.push(value.clone()),
        },
        Value::Program | Value::CommandName => {
            analyze_into(std::slice::from_ref(value), depth + 1, out);
        }
        Value::Shell => {
            let first = value.text.split_whitespace().next().unwrap_or("");
            let bash_like = programs::find(base_name(first))
                .is_some_and(|p| p.runs == Runs::Shape(Shape::Shell));
            if value.dynamic || !bash_like {
                out.opaque.push(format!(
                    "`{name}` runs its commands with `{}`, which is not a shell the scan reads",
                    value.text
                ));
            }
        }
        Value::Script => script_text(name, value, out),
        Value::Sourced => startup_file(name, Some(value), out),
        Value::Expanded => {
            if value.dynamic || value.text.contains(['$', '`', '\\']) {
                out.opaque.push(format!(
                    "`{name}` expands the text `{}` again when it runs",
                    value.text
                ));
            }
        }
        Value::Config(inert) => {
            if value.dynamic {
                out.opaque.push(format!(
                    "`{name}` is given a setting only known when it runs"
                ));
            } else if let Some(reason) = programs::setting_reason(&value.text, inert) {
                out.opaque.push(format!("`{name}` {reason}"));
            }
        }
        Value::Opaque(reason) => out.opaque.push(format!("`{name}` {reason}")),
    }
}

/// `find`'s actions that write a file (`-fprint FILE`, `-fprintf FILE
/// FORMAT` …) and read one (`-files0-from FILE`): their file is a path.
fn find_outputs(args: &[Word], out: &mut Analysis) {
    for pair in args.windows(2) {
        if matches!(
            pair[0].text.as_str(),
            "-fprint" | "-fprint0" | "-fprintf" | "-fls" | "-files0-from"
        ) {
            out.paths.push(pair[1].clone());
        }
    }
}

/// The actions of `find` that run a command.
const FIND_EXECS: &[&str] = &["-exec", "-execdir", "-ok", "-okdir"];

/// A script given as a word: parsed in turn, opaque when only known at
/// run time.
fn script_text(name: &str, value: &Word, out: &mut Analysis) {
    if value.dynamic {
        out.opaque.push(format!(
            "`{name}` runs the text `{}`, only known when the command runs",
            value.text
        ));
    }
    out.scripts.push(value.text.clone());
}

/// The start of the command a program of a special shape runs, if any
/// (the scripts and reasons it adds go to `out`).
fn shape_inner(
    shape: Shape,
    name: &str,
    args: &[Word],
    parsed: &Parsed,
    depth: usize,
    out: &mut Analysis,
) -> Option<usize> {
    let end = parsed.end;
    let operands = &args[end..];
    match shape {
        Shape::Sudo => {
            let i = skip_assignments(args, end, env_assignment);
            if parsed.any(&[
                s('e'),
                l("--edit"),
                s('l'),
                l("--list"),
                s('v'),
                l("--validate"),
            ]) {
                // `sudo -e FILE` edits files; `-l`/`-v` run nothing.
                out.paths.extend(args[i..].iter().cloned());
                return None;
            }
            if parsed.any(&[s('s'), l("--shell"), s('i'), l("--login")]) {
                if i < args.len() {
                    out.scripts.push(join(&args[i..]));
                } else {
                    out.reads_stdin = true;
                }
                return None;
            }
            Some(i)
        }
        Shape::Env => {
            // `-S STRING`: the string is split into the command, the
            // arguments after it follow (its value was pushed as a script:
            // replace it by the string with the arguments).
            let split = parsed.values(sl('S', "--split-string"));
            if !split.is_empty() {
                let count = split.len();
                out.scripts
                    .truncate(out.scripts.len().saturating_sub(count));
                for script in split {
                    let mut text = script.text.clone();
                    for rest in operands {
                        text.push(' ');
                        text.push_str(&rest.text);
                    }
                    out.scripts.push(text);
                }
                return None;
            }
            // `env - …` is `env -i …`.
            let start = end + usize::from(args.get(end).is_some_and(|w| w.text == "-"));
            Some(skip_assignments(args, start, env_assignment))
        }
        Shape::CommandBuiltin => (!parsed.any(&[s('v'), s('V')])).then_some(end),
        Shape::Taskset => {
            if parsed.any(&[s('p'), l("--pid")]) {
                return None;
            }
            // `taskset MASK cmd`, `taskset -c LIST cmd`: one operand first.
            Some(end + 1)
        }
        Shape::Flock => {
            if parsed.has(sl('c', "--command")) {
                return None;
            }
            // `flock FILE [options] cmd …` or `flock FILE -c STRING`.
            let after = args.get(end + 1..).unwrap_or_default();
            let spec = match programs::find("flock").map(|p| p.options) {
                Some(options) => options,
                None => Options::Any,
            };
            match parse_options(after, spec) {
                Ok(more) => {
                    let scripts = more.values(sl('c', "--command"));
                    if scripts.is_empty() {
                        Some(end + 1 + more.end)
                    } else {
                        for script in scripts {
                            script_text(name, script, out);
                        }
                        None
                    }
                }
                Err(option) => {
                    out.opaque.push(format!(
                        "`{name}` with the option `{option}`, which the scan does not model"
                    ));
                    None
                }
            }
        }
        Shape::Su | Shape::Runuser => {
            if shape == Shape::Runuser && parsed.has(sl('u', "--user")) {
                // `runuser -u USER [--] COMMAND …` runs the command itself.
                return Some(end);
            }
            if parsed.any(&[sl('c', "--command"), l("--session-command")]) {
                return None;
            }
            // `su [-] [USER [ARGS…]]`: the arguments after the user go to
            // the user's shell (`su root -c 'cmd'`).
            let user = end + usize::from(args.get(end).is_some_and(|w| w.text == "-"));
            if user + 1 < args.len() {
                shell_script(&args[user + 1..], out);
            } else {
                // The user's shell reads its commands from the input.
                out.reads_stdin = true;
            }
            None
        }
        Shape::Xargs => {
            if end >= args.len() {
                // xargs without a command runs echo.
                return None;
            }
            let replace = xargs_replace(parsed);
            filled_by_input(&args[end..], replace.as_deref(), "xargs", depth, out);
            Some(end)
        }
        Shape::Watch => {
            if parsed.any(&[s('x'), l("--exec")]) {
                Some(end)
            } else {
                if !operands.is_empty() {
                    out.scripts.push(join(operands));
                }
                None
            }
        }
        Shape::Find => {
            find_outputs(args, out);
            let mut k = 0;
            while k < args.len() {
                if FIND_EXECS.contains(&args[k].text.as_str()) {
                    let start = k + 1;
                    let mut stop = start;
                    while stop < args.len() && !matches!(args[stop].text.as_str(), ";" | "+") {
                        stop += 1;
                    }
                    analyze_into(&args[start..stop], depth + 1, out);
                    filled_by_input(&args[start..stop], Some("{}"), "find", depth, out);
                    out.commands.extend(out.completed.take());
                    k = stop;
                }
                k += 1;
            }
            None
        }
        Shape::Eval => {
            if operands.iter().any(|w| w.dynamic) {
                out.opaque
                    .push("`eval` of text only known when the command runs".to_string());
            }
            if !operands.is_empty() {
                out.scripts.push(join(operands));
            }
            None
        }
        Shape::Trap => {
            if operands.len() >= 2 && operands[0].text != "-" {
                if operands[0].dynamic {
                    out.opaque
                        .push("`trap` of text only known when the command runs".to_string());
                }
                out.scripts.push(operands[0].text.clone());
            }
            None
        }
        Shape::Source => {
            match operands.first() {
                Some(file) if file.dynamic => out
                    .opaque
                    .push("`source` of a file only known when the command runs".to_string()),
                Some(file) => script_file(file, out),
                None => {}
            }
            None
        }
        Shape::Shell => {
            shell_script(args, out);
            None
        }
        Shape::OtherShell => {
            out.opaque.push(format!(
                "a `{name}` command line, which is not parsed as bash"
            ));
            None
        }
        Shape::Sg => {
            // `sg GROUP [-c] COMMAND`: `/bin/sh -c COMMAND`.
            let mut rest = operands.get(1..).unwrap_or_default();
            if rest.first().is_some_and(|w| w.text == "-c") {
                rest = &rest[1..];
            }
            if rest.is_empty() {
                out.reads_stdin = true;
            } else {
                if rest.iter().any(|w| w.dynamic) {
                    out.opaque
                        .push("`sg` runs text only known when the command runs".to_string());
                }
                out.scripts.push(join(rest));
            }
            None
        }
        Shape::Gdb => {
            // Only `gdb -batch … --args cmd …` without gdb commands is
            // modelled: gdb commands (`-ex`, `-x`, its input) can run shell
            // commands.
            let args_at = args.iter().position(|w| w.text == "--args");
            let batch = args
                .iter()
                .any(|w| matches!(w.text.as_str(), "-batch" | "--batch"));
            let commands = args[..args_at.unwrap_or(args.len())].iter().any(|w| {
                let text = w.text.trim_start_matches('-');
                matches!(
                    text.split('=').next().unwrap_or(text),
                    "ex" | "x"
                        | "iex"
                        | "ix"
                        | "eval-command"
                        | "command"
                        | "init-command"
                        | "init-eval-command"
                ) || !w.text.starts_with('-')
            });
            match args_at {
                Some(at) if batch && !commands => Some(at + 1),
                _ => {
                    out.opaque
                        .push("`gdb` runs gdb commands, which can run shell commands".to_string());
                    None
                }
            }
        }
        Shape::Perf => {
            let sub = operands.first()?;
            if !matches!(sub.text.as_str(), "record" | "stat" | "trace") {
                return None;
            }
            let rest = &args[end + 1..];
            match parse_options(rest, Options::Known(&PERF_OPTIONS)) {
                Ok(more) => Some(end + 1 + more.end),
                Err(option) => {
                    out.opaque.push(format!(
                        "`perf {}` with the option `{option}`, which the scan does not model",
                        sub.text
                    ));
                    None
                }
            }
        }
        Shape::Multicall => {
            if operands.first().is_some_and(|w| w.text.starts_with("--")) {
                return None;
            }
            Some(end)
        }
        Shape::Jobs => parsed.has(s('x')).then_some(end),
        Shape::Entr => {
            if parsed.has(s('s')) {
                if !operands.is_empty() {
                    out.scripts.push(join(operands));
                }
                return None;
            }
            Some(end)
        }
        Shape::Script => {
            if !parsed.any(&[sl('c', "--command")]) {
                // Without `-c`, `script` runs an interactive shell on its
                // input.
                out.reads_stdin = true;
            }
            None
        }
        Shape::ScriptOperands => {
            for operand in operands {
                script_text(name, operand, out);
            }
            None
        }
        Shape::Setarch => {
            let skip = usize::from(name == "setarch");
            let rest = args.get(skip..).unwrap_or_default();
            match parse_options(rest, Options::Known(&SETARCH_OPTIONS)) {
                Ok(more) => Some(skip + more.end),
                Err(option) => {
                    out.opaque.push(format!(
                        "`{name}` with the option `{option}`, which the scan does not model"
                    ));
                    None
                }
            }
        }
        Shape::Alias => {
            if operands.iter().any(|w| w.dynamic || w.text.contains('=')) {
                out.opaque
                    .push("`alias` can rename commands for later lines".to_string());
            }
            None
        }
        Shape::Zip => {
            // zip's options are not clustered: `-TT CMD`, `-TTCMD`,
            // `--unzip-command CMD` (or an abbreviation of it).
            let runs = args.iter().any(|w| {
                let text = w.text.as_str();
                text.starts_with("-TT")
                    || (text.len() >= 4
                        && "--unzip-command".starts_with(text.split('=').next().unwrap_or(text)))
            });
            if runs {
                out.opaque
                    .push("`zip` tests the archive with a shell command (`-TT`)".to_string());
            }
            None
        }
        Shape::Set => {
            out.opaque.extend(shell_settings::judge_set(args));
            None
        }
        Shape::Shopt => {
            out.opaque.extend(shell_settings::judge_shopt(args));
            None
        }
    }
}

/// The options of `perf record`, `perf stat` and `perf trace` that come
/// before the command.
const PERF_OPTIONS: Spec = Spec {
    flags: "aqvgBdnRrsTPSi",
    values: "ecCFGmoptuIxM",
    optional: "",
    long_flags: &[
        "--all-cpus",
        "--quiet",
        "--verbose",
        "--no-inherit",
        "--per-core",
        "--per-socket",
        "--per-thread",
        "--detailed",
        "--null",
        "--raw-samples",
        "--sample-cpu",
        "--timestamp",
        "--no-buildid",
        "--no-buildid-cache",
        "--stat",
        "--group",
    ],
    long_values: &[
        "--event",
        "--count",
        "--cpu",
        "--freq",
        "--cgroup",
        "--mmap-pages",
        "--output",
        "--pid",
        "--tid",
        "--uid",
        "--call-graph",
        "--repeat",
        "--interval-print",
        "--delay",
        "--field-separator",
        "--metrics",
        "--timeout",
        "--filter",
        "--input",
    ],
    long_optional: &[],
    long_pairs: &[],
    plus: false,
    abbreviations: true,
    values_from_next: false,
    bundled_first: false,
};

/// The options of `setarch` (after its architecture), `linux32` and
/// `linux64`.
const SETARCH_OPTIONS: Spec = Spec {
    flags: "v3BFILRSTXZhV",
    values: "",
    optional: "",
    long_flags: &[
        "--verbose",
        "--3gb",
        "--4gb",
        "--uname-2.6",
        "--addr-compat-layout",
        "--fdpic-funcptrs",
        "--short-inode",
        "--addr-limit-3gb",
        "--whole-seconds",
        "--addr-no-randomize",
        "--mmap-page-zero",
        "--read-implies-exec",
        "--sticky-timeouts",
        "--list",
        "--help",
        "--version",
    ],
    long_values: &[],
    long_optional: &[],
    long_pairs: &[],
    plus: false,
    abbreviations: true,
    values_from_next: false,
    bundled_first: false,
};

/// The options of a command as it was written.
#[derive(Debug, Default)]
pub(crate) struct Parsed {
    /// The index of the first operand (after `--`).
    pub(crate) end: usize,
    /// Each option given, with its value if it takes one.
    given: Vec<(Opt, Option<Word>)>,
}

impl Parsed {
    /// The values given to `option` (by either spelling).
    pub(crate) fn values(&self, option: Opt) -> Vec<&Word> {
        self.given
            .iter()
            .filter(|(given, _)| same_option(*given, option))
            .filter_map(|(_, value)| value.as_ref())
            .collect()
    }

    /// Whether `option` was given.
    fn has(&self, option: Opt) -> bool {
        self.given
            .iter()
            .any(|(given, _)| same_option(*given, option))
    }

    /// Whether any of `options` was given.
    fn any(&self, options: &[Opt]) -> bool {
        options.iter().any(|option| self.has(*option))
    }
}

/// Whether two options are the same (they share a spelling).
fn same_option(a: Opt, b: Opt) -> bool {
    (a.short.is_some() && a.short == b.short) || (a.long.is_some() && a.long == b.long)
}

/// Reads the options at the start of `args` as `options` says; the error
/// is the first option the program does not take (unknown, or an
/// abbreviation that matches none or several).
pub(crate) fn parse_options(args: &[Word], options: Options) -> Result<Parsed, String> {
    let spec = match options {
        Options::Any => return Ok(Parsed::default()),
        Options::None => {
            let end = usize::from(args.first().is_some_and(|w| w.text == "--"));
            return Ok(Parsed {
                end,
                given: Vec::new(),
            });
        }
        Options::Known(spec) => spec,
    };
    let mut parsed = Parsed::default();
    let mut i = 0;
    while let Some(word) = args.get(i) {
        let text = word.text.as_str();
        if word.dynamic && text.starts_with(['-', '+']) {
            // `-$X`: an option only known at run time.
            return Err(text.to_string());
        }
        if text == "--" {
            i += 1;
            break;
        }
        if let Some(long) = text.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (long, None),
            };
            let full = resolve_long(spec, name).ok_or_else(|| text.to_string())?;
            let option = l(full);
            let with_value = |text: &str| Word {
                text: text.to_string(),
                ..word.clone()
            };
            if spec.long_pairs.contains(&full) {
                let first = value.map(with_value).or_else(|| {
                    i += 1;
                    args.get(i).cloned()
                });
                parsed.given.push((option, first));
                i += 1;
                parsed.given.push((option, args.get(i).cloned()));
            } else if spec.long_values.contains(&full) {
                let value = match value {
                    Some(value) => Some(with_value(value)),
                    None => {
                        i += 1;
                        args.get(i).cloned()
                    }
                };
                parsed.given.push((option, value));
            } else if spec.long_optional.contains(&full) {
                parsed.given.push((option, value.map(with_value)));
            } else if value.is_some() {
                // A flag given a value: the program refuses it.
                return Err(text.to_string());
            } else {
                parsed.given.push((option, None));
            }
            i += 1;
            continue;
        }
        // tar's old style: the first word is a cluster without its dash.
        let bundled = i == 0 && spec.bundled_first && !text.starts_with('-');
        let cluster = match text.strip_prefix('-') {
            Some(cluster) => cluster,
            None if bundled => text,
            None if spec.plus => match text.strip_prefix('+') {
                Some(cluster) => cluster,
                None => break,
            },
            None => break,
        };
        if cluster.is_empty() {
            break;
        }
        let mut step = 1;
        for (at, c) in cluster.char_indices() {
            let rest = &cluster[at + c.len_utf8()..];
            if spec.values.contains(c) && (spec.values_from_next || bundled) {
                step += 1;
                parsed.given.push((s(c), args.get(i + step - 1).cloned()));
                continue;
            }
            if spec.values.contains(c) {
                let value = if rest.is_empty() {
                    step = 2;
                    args.get(i + 1).cloned()
                } else {
                    Some(Word {
                        text: rest.to_string(),
                        ..word.clone()
                    })
                };
                parsed.given.push((s(c), value));
                break;
            }
            if spec.optional.contains(c) {
                let value = (!rest.is_empty()).then(|| Word {
                    text: rest.to_string(),
                    ..word.clone()
                });
                parsed.given.push((s(c), value));
                break;
            }
            if spec.flags.contains(c) {
                parsed.given.push((s(c), None));
                continue;
            }
            return Err(if cluster.len() == c.len_utf8() {
                text.to_string()
            } else {
                format!("-{c}` (in `{text}")
            });
        }
        i += step;
    }
    parsed.end = i.min(args.len());
    Ok(parsed)
}

/// The long option `name` (without dashes) stands for: itself, or the one
/// option it abbreviates when the program accepts abbreviations.
fn resolve_long(spec: &Spec, name: &str) -> Option<&'static str> {
    let all = || {
        spec.long_flags
            .iter()
            .chain(spec.long_values)
            .chain(spec.long_optional)
            .chain(spec.long_pairs)
            .copied()
    };
    if let Some(exact) = all().find(|long| long.strip_prefix("--") == Some(name)) {
        return Some(exact);
    }
    if !spec.abbreviations || name.is_empty() {
        return None;
    }
    let mut matches: Vec<&'static str> = all()
        .filter(|long| long.strip_prefix("--").is_some_and(|n| n.starts_with(name)))
        .collect();
    matches.sort_unstable();
    matches.dedup();
    match matches.as_slice() {
        [only] => Some(only),
        _ => None,
    }
}

/// The words joined by spaces.
pub fn join(words: &[Word]) -> String {
    let texts: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
    texts.join(" ")
}

/// The replace string of `xargs` options (`-I STR`, `-iSTR`, `-i`,
/// `--replace[=STR]`; `-i` and `--replace` alone mean `{}`), if any.
fn xargs_replace(parsed: &Parsed) -> Option<String> {
    let mut replace = None;
    for (option, value) in &parsed.given {
        if same_option(*option, s('I')) {
            replace = value.as_ref().map(|value| value.text.clone());
        } else if same_option(*option, s('i')) || same_option(*option, l("--replace")) {
            replace = Some(
                value
                    .as_ref()
                    .map_or_else(|| "{}".to_string(), |value| value.text.clone()),
            );
        }
    }
    replace.filter(|value| !value.is_empty())
}

/// `xargs` and `find -exec` complete `words` at run time: with their input
/// put in place of `replace`, or (no `replace`) appended. What the
/// completed command cannot be seen through, and the command as written
/// can, is opaque: `xargs env` runs a program named by its input,
/// `xargs -I{} sh -c 'echo {}'` and `find -exec bash -c 'echo {}' \;` run
/// scripts holding input (file names are text too).
fn filled_by_input(
    words: &[Word],
    replace: Option<&str>,
    runner: &str,
    depth: usize,
    out: &mut Analysis,
) {
    if words.is_empty() {
        return;
    }
    if out.input_depth >= MAX_INPUT_DEPTH {
        out.opaque.push(format!(
            "more than {MAX_INPUT_DEPTH} nested `xargs` or `find -exec` commands"
        ));
        return;
    }
    let filled: Vec<Word> = match replace {
        Some(replace) => words
            .iter()
            .map(|word| Word {
                dynamic: word.dynamic || word.text.contains(replace),
                ..word.clone()
            })
            .collect(),
        None => words
            .iter()
            .cloned()
            .chain(std::iter::once(Word {
                text: format!("<{runner} input>"),
                dynamic: true,
                glob: None,
            }))
            .collect(),
    };
    // The command as it runs: the input is only known then, so it is `*`
    // in the pattern (`xargs rm -f` runs `rm -f *`, `find -exec rm {} ;`
    // runs `rm *`), as an argument only known at run time: a rule for
    // `rm -f` alone does not allow it, one for `rm *` does.
    let completed: Vec<Word> = match replace {
        Some(replace) => words
            .iter()
            .map(|word| {
                if word.text.contains(replace) {
                    Word {
                        text: word.text.replace(replace, "*"),
                        dynamic: true,
                        glob: None,
                    }
                } else {
                    word.clone()
                }
            })
            .collect(),
        None => words
            .iter()
            .cloned()
            .chain(std::iter::once(Word {
                text: "*".to_string(),
                dynamic: true,
                glob: None,
            }))
            .collect(),
    };
    if completed.iter().zip(words).any(|(c, w)| c.text != w.text) || completed.len() != words.len()
    {
        out.words += completed.len();
        out.bytes += completed.iter().map(|w| w.text.len()).sum::<usize>();
        if out.words > MAX_ANALYSED_WORDS || out.bytes > MAX_ANALYSED_BYTES {
            mark_over_budget(out);
            return;
        }
        out.completed = Some(completed);
    }
    // Both analyses spend the line's one budget: nested `xargs` analyse
    // their command again at each level, which would otherwise multiply.
    let analyse = |words: &[Word], out: &mut Analysis| {
        let mut analysis = Analysis {
            input_depth: out.input_depth + 1,
            words: out.words,
            bytes: out.bytes,
            ..Analysis::default()
        };
        analyze_into(words, depth + 1, &mut analysis);
        out.words = analysis.words;
        out.bytes = analysis.bytes;
        analysis.opaque
    };
    let written = analyse(words, out);
    let completed = analyse(&filled, out);
    if out.words > MAX_ANALYSED_WORDS || out.bytes > MAX_ANALYSED_BYTES {
        // Not seen to the end: the reason is in both analyses, so the
        // comparison below would drop it.
        mark_over_budget(out);
        return;
    }
    for reason in completed {
        if !written.contains(&reason) {
            out.opaque.push(format!(
                "`{runner}` completes `{}` with its input, and then: {reason}",
                join(words)
            ));
        }
    }
}

/// The index of the first word at or after `i` that `assignment` does not
/// take for `NAME=value`.
fn skip_assignments(args: &[Word], mut i: usize, assignment: fn(&str) -> bool) -> usize {
    while args.get(i).is_some_and(|word| assignment(&word.text)) {
        i += 1;
    }
    i
}

/// How `env` and `sudo` read a word before the command: any `=` after the
/// first byte makes it `NAME=value` (`X+=a` sets `X+`, `./x=y` sets `./x`).
fn env_assignment(text: &str) -> bool {
    text.find('=').is_some_and(|at| at > 0)
}

/// How bash reads a word before the command (after `coproc`, `time`, and
/// for the other wrappers, where such a word fails as a program name):
/// `NAME=`, `NAME+=`, `NAME[i]=`, `NAME[i]+=`, with `NAME` a shell name.
/// Anything else, `./x=y` among them, is the program: a file of that name
/// runs, so it must be seen.
fn bash_assignment(text: &str) -> bool {
    let Some(at) = text.find('=') else {
        return false;
    };
    let mut name = text[..at].strip_suffix('+').unwrap_or(&text[..at]);
    if let Some(open) = name.find('[') {
        if !name.ends_with(']') {
            return false;
        }
        name = &name[..open];
    }
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A shell's arguments: its `-c` script, a script file, or none (it reads
/// standard input).
fn shell_script(args: &[Word], out: &mut Analysis) {
    let mut i = 0;
    let mut command_string = false;
    let mut stdin = false;
    while let Some(word) = args.get(i) {
        let text = word.text.as_str();
        if text == "--" || text == "-" {
            i += 1;
            break;
        }
        if text.starts_with("--") {
            if matches!(text, "--rcfile" | "--init-file") {
                startup_file(text, args.get(i + 1), out);
                i += 2;
            } else {
                if text == "--posix" {
                    out.opaque
                        .extend(shell_settings::option_toggle("posix", true, false));
                }
                i += 1;
            }
            continue;
        }
        let Some(cluster) = text.strip_prefix('-').or_else(|| text.strip_prefix('+')) else {
            break;
        };
        let on = text.starts_with('-');
        let mut step = 1;
        for c in cluster.chars() {
            match c {
                'c' if on => command_string = true,
                's' => stdin = true,
                // Each takes the next word (`-oO a b`): a `set -o` and a
                // `shopt` option.
                'o' | 'O' => {
                    if let Some(name) = args.get(i + step) {
                        out.opaque
                            .extend(shell_settings::option_word(name, on, c == 'O'));
                    }
                    step += 1;
                }
                // The command line's own: interactive, login, restricted,
                // dump strings.
                'c' | 'i' | 'l' | 'r' | 'D' => {}
                letter => out.opaque.extend(shell_settings::letter_toggle(letter, on)),
            }
        }
        i += step;
    }
    match args.get(i) {
        Some(script) if command_string => {
            if script.dynamic {
                out.opaque.push(
                    "a shell's `-c` script that is only known when the command runs".to_string(),
                );
            }
            out.scripts.push(script.text.clone());
        }
        Some(file) if !stdin => {
            if file.dynamic {
                out.opaque.push(
                    "a shell script whose file is only known when the command runs".to_string(),
                );
            } else {
                script_file(file, out);
            }
        }
        _ => out.reads_stdin = true,
    }
}

/// The file `--rcfile FILE` / `--init-file FILE` names, which an
/// interactive shell sources: a literal file is like a script file (the
/// command's pattern stands for it); a file only known at run time, a
/// device or a descriptor (`/dev/stdin`, `<(…)`, `/proc/self/fd/0`) is
/// text the scan cannot read.
fn startup_file(option: &str, file: Option<&Word>, out: &mut Analysis) {
    let Some(file) = file else {
        return;
    };
    let text = file.text.as_str();
    if file.dynamic
        || text.starts_with("/dev/")
        || text.starts_with("/proc/")
        || text.contains("<(")
    {
        out.opaque.push(format!(
            "a shell sources `{option} {text}`, a file only known when the command runs"
        ));
    }
}

/// A script file given to a shell or to `source`: standard input under
/// another name (`/dev/stdin`, `/dev/fd/0`, `/proc/self/fd/0`) makes the
/// command read its input (a heredoc or here-string the scanner parses);
/// another descriptor cannot be seen.
fn script_file(file: &Word, out: &mut Analysis) {
    let text = file.text.as_str();
    let descriptor = text
        .strip_prefix("/dev/fd/")
        .or_else(|| {
            let rest = text.strip_prefix("/proc/")?;
            let (_, fd) = rest.split_once("/fd/")?;
            Some(fd)
        })
        .map(|fd| fd.trim_end_matches('/'));
    match (text, descriptor) {
        ("/dev/stdin", _) | (_, Some("0")) => out.reads_stdin = true,
        (_, Some(_)) => out.opaque.push(format!(
            "a script read from the file descriptor `{text}`, only known when the command runs"
        )),
        _ => {}
    }
}

/// Whether `text` looks like a path whatever the command: absolute (under
/// a top-level folder that exists, so `grep '/api/v1'` or
/// `awk '/x/ {print}'` are not taken for paths), from home, or climbing out
/// with `..`.
fn path_like(text: &str) -> bool {
    (text.starts_with('/') && top_level_exists(text))
        || text.starts_with('~')
        || text == ".."
        || text.starts_with("../")
        || text.contains("/../")
        || text.ends_with("/..")
}

/// Whether the first component of the absolute path `text` exists (`/`
/// itself counts).
fn top_level_exists(text: &str) -> bool {
    let first = text.trim_start_matches('/').split('/').next().unwrap_or("");
    first.is_empty() || std::path::Path::new("/").join(first).exists()
}

fn collect_paths(name: &str, paths: Paths, args: &[Word], out: &mut Analysis) {
    if paths == Paths::Cd {
        match args
            .iter()
            .find(|w| !w.text.starts_with('-') || w.text == "-")
        {
            None => out.paths.push(Word {
                text: "~".to_string(),
                ..Word::default()
            }),
            Some(word) if word.text == "-" => out.paths.push(Word {
                text: "$OLDPWD".to_string(),
                dynamic: true,
                glob: None,
            }),
            Some(_) => {}
        }
    }
    let operands_are_paths = matches!(paths, Paths::Operands | Paths::Cd | Paths::DirStack);
    let mut options_done = false;
    for word in args {
        let text = word.text.as_str();
        if text == "--" {
            options_done = true;
            continue;
        }
        if !options_done && text.starts_with('-') {
            if let Some((_, value)) = text.split_once('=')
                && text.starts_with("--")
                && path_like(value)
            {
                out.paths.push(Word {
                    text: value.to_string(),
                    ..word.clone()
                });
            }
            continue;
        }
        if name == "chmod" && text.starts_with('+') {
            continue;
        }
        if operands_are_paths || path_like(text) {
            out.paths.push(word.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::shell_word::words_of;

    fn analyzed(line: &str) -> Analysis {
        let words: Vec<Word> = line.split(' ').flat_map(words_of).collect();
        analyze(&words)
    }

    fn commands(line: &str) -> Vec<String> {
        analyzed(line).commands.iter().map(|c| join(c)).collect()
    }

    #[test]
    fn wrappers() {
        assert_eq!(
            commands("sudo -u root env -i A=1 /bin/rm -f x"),
            [
                "sudo -u root env -i A=1 /bin/rm -f x",
                "env -i A=1 /bin/rm -f x",
                "/bin/rm -f x"
            ]
        );
        assert_eq!(commands("timeout -s KILL 5 rm x")[1], "rm x");
        assert_eq!(commands("nice -n 5 rm x")[1], "rm x");
        assert_eq!(commands("xargs -0 -n1 rm -f")[1], "rm -f");
        assert_eq!(commands("find . -name a -exec rm {} ;")[1], "rm {}");
        assert_eq!(commands("command -p rm x")[1], "rm x");
        assert_eq!(commands("command -v rm"), ["command -v rm"]);
        assert_eq!(commands("exec -a name rm x")[1], "rm x");
        assert_eq!(commands("busybox rm x")[1], "rm x");
        assert_eq!(commands("coproc rm x")[1], "rm x");
        assert_eq!(commands("taskset -c 1 rm x")[1], "rm x");
        assert_eq!(commands("taskset 0x1 rm x")[1], "rm x");
        assert_eq!(commands("flock -w 5 /tmp/l rm x")[1], "rm x");
        assert_eq!(analyzed("flock -c rm /tmp/l").scripts, ["rm"]);
        assert_eq!(analyzed("flock /tmp/l -c rm").scripts, ["rm"]);
        assert_eq!(analyzed("su -c rm root").scripts, ["rm"]);
        assert_eq!(analyzed("script -q -c rm /dev/null").scripts, ["rm"]);
    }

    #[test]
    fn scripts() {
        assert_eq!(analyzed("bash --norc -O extglob -c rm").scripts, ["rm"]);
        assert_eq!(analyzed("sh -e -- -c").scripts, Vec::<String>::new());
        assert_eq!(analyzed("sh -c -- x").scripts, ["x"]);
        assert_eq!(analyzed("eval rm -f x").scripts, ["rm -f x"]);
        assert_eq!(analyzed("trap rm EXIT").scripts, ["rm"]);
        assert!(analyzed("trap - EXIT").scripts.is_empty());
        assert_eq!(analyzed("env -S rm").scripts, ["rm"]);
        assert!(analyzed("bash").reads_stdin);
        assert!(!analyzed("bash x.sh").reads_stdin);
        assert!(!analyzed("$X -f").opaque.is_empty());
    }

    #[test]
    fn paths() {
        let texts = |line| {
            analyzed(line)
                .paths
                .into_iter()
                .map(|w| w.text)
                .collect::<Vec<_>>()
        };
        assert_eq!(texts("cat a /b"), ["a", "/b"]);
        assert_eq!(texts("grep -r x /etc --file=/tmp/p"), ["/etc", "/tmp/p"]);
        assert!(texts("grep /api/v1 f").is_empty());
        assert_eq!(texts("cat /api/v1"), ["/api/v1"]);
        assert_eq!(texts("cd"), ["~"]);
        assert_eq!(texts("tee -a /out/log"), ["/out/log"]);
        assert_eq!(texts("ls ../x y"), ["../x"]);
        assert_eq!(texts("time -o /tmp/t sudo /bin/rm -f x"), ["/tmp/t", "x"]);
    }

    #[test]
    fn options_in_clusters_attached_long_and_abbreviated() {
        let words = |line: &str| -> Vec<Word> { line.split(' ').flat_map(words_of).collect() };
        const SPEC: Spec = Spec {
            flags: "qv",
            values: "cuS",
            optional: "m",
            long_flags: &["--quiet"],
            long_values: &["--command", "--user"],
            long_optional: &["--mount"],
            long_pairs: &["--bind"],
            plus: false,
            abbreviations: true,
            values_from_next: false,
            bundled_first: false,
        };
        let values = |line: &str, option: Opt| -> Vec<String> {
            let parsed = parse_options(&words(line), Options::Known(&SPEC)).unwrap();
            parsed
                .values(option)
                .into_iter()
                .map(|w| w.text.clone())
                .collect()
        };
        let c = sl('c', "--command");
        assert_eq!(values("-qc ls", c), ["ls"]);
        assert_eq!(values("-cls", c), ["ls"]);
        assert_eq!(values("--command ls --command=pwd", c), ["ls", "pwd"]);
        assert_eq!(values("--comm ls --c=pwd", c), ["ls", "pwd"]);
        // `-u`'s value is not a `-c`: `-uc` is user `c`.
        assert!(values("-uc ls", c).is_empty());
        assert_eq!(values("-u root -vS ls", s('S')), ["ls"]);
        assert!(values("-- -c ls", c).is_empty());
        assert_eq!(values("-mx -c ls", s('m')), ["x"]);
        assert_eq!(values("--bind a b -c ls", l("--bind")), ["a", "b"]);
        let end = |line: &str| parse_options(&words(line), Options::Known(&SPEC)).map(|p| p.end);
        assert_eq!(end("-q --mount rm x"), Ok(2));
        assert_eq!(end("--bind a b rm"), Ok(3));
        assert_eq!(end("-- -q rm"), Ok(1));
        // Unknown, ambiguous (`--u` is only `--user`: fine) and refused.
        assert!(end("-z rm").is_err());
        assert!(end("--frob rm").is_err());
        assert!(end("--quiet=1 rm").is_err());
        assert_eq!(end("--u x rm"), Ok(2));
    }

    #[test]
    fn views_hold_what_they_did_before_the_table() {
        let sorted = |list: &[&'static str]| {
            let mut list = list.to_vec();
            list.sort_unstable();
            list
        };
        assert_eq!(
            sorted(&CD_COMMANDS),
            [
                "cd",
                "chdir",
                "popd",
                "push-location",
                "pushd",
                "set-location"
            ]
        );
        assert_eq!(
            sorted(&SHELLS),
            sorted(&[
                "bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "yash", "rbash", "ksh93",
                "oksh", "loksh", "lksh", "posh"
            ])
        );
        for name in [
            "sudo", "env", "xargs", "find", "script", "strace", "setarch", "time",
        ] {
            assert!(WRAPPERS.contains(&name), "{name}");
        }
        for name in ["eval", "bash", "zip", "set", "git", "tar", "rm"] {
            assert!(!WRAPPERS.contains(&name), "{name}");
        }
        for name in ["rm", "cp", "tee", "ln", "cd", "pushd", "cat"] {
            assert!(FILE_COMMANDS.contains(&name), "{name}");
        }
    }
}
