//! What one simple command runs, seen through the programs that run other
//! programs: wrappers (`sudo`, `env`, `xargs`, `find -exec` …), shells
//! given a script (`bash -c`, `sh -c` with any options), `eval` and
//! `trap` strings; and which of its words are paths the file system will
//! use.

use crate::shell_word::Word;

/// Commands that run the command given after their options.
pub const WRAPPERS: &[&str] = &[
    "sudo", "doas", "env", "command", "builtin", "exec", "nohup", "time", "timeout", "nice",
    "ionice", "stdbuf", "setsid", "xargs", "busybox", "toybox", "watch", "find", "coproc",
    "unbuffer", "taskset", "flock", "su", "runuser", "script",
];

/// Shells whose `-c` script, or heredoc / here-string input, is parsed.
pub const SHELLS: &[&str] = &[
    "bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "yash", "rbash", "ksh93", "oksh", "loksh",
    "lksh", "posh",
];

/// Shells whose language is not bash's: any command line given to them is
/// opaque (`fish -C 'rm x'`, `csh -c …`).
const OTHER_SHELLS: &[&str] = &[
    "fish",
    "csh",
    "tcsh",
    "pwsh",
    "powershell",
    "nu",
    "elvish",
    "xonsh",
    "rc",
];

/// Directory-changing commands: they never produce a bash pattern (§8.1),
/// their target is checked as a path.
pub const CD_COMMANDS: &[&str] = &[
    "cd",
    "chdir",
    "popd",
    "pushd",
    "push-location",
    "set-location",
];

/// Commands whose every non-option argument is a path (§8.1's list, plus
/// `ln` and `tee`, which create links and write files).
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
    "ln",
    "tee",
];

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
    out
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
    out.commands.push(words.to_vec());
    if first.dynamic || first.glob.is_some() {
        out.opaque.push(format!(
            "the program `{}` is only known when the command runs",
            first.text
        ));
    }
    let name = program_name(&first.text);
    let args = &words[1..];
    let inner = match name {
        "sudo" => {
            let i = skip_options(args, "uUgChprtTD", &LONG_SUDO);
            let i = skip_assignments(args, i);
            if args[..i].iter().any(|w| {
                w.text.starts_with('-') && !w.text.starts_with("--") && w.text.contains(['s', 'i'])
            }) && i < args.len()
            {
                out.scripts.push(join(&args[i..]));
            }
            Some(i)
        }
        "doas" => Some(skip_options(args, "uC", &[])),
        "env" => {
            const ENV_VALUES: &str = "uCS";
            let i = skip_options(args, ENV_VALUES, &["--unset", "--chdir", "--split-string"]);
            let options = &args[..i];
            // `-S STRING` (also `-vS STRING`, `-SSTRING`): the string is
            // split into the command, the arguments after it follow.
            for script in option_values(options, ENV_VALUES, 'S', "--split-string") {
                let mut text = script.text;
                for rest in &args[i..] {
                    text.push(' ');
                    text.push_str(&rest.text);
                }
                out.scripts.push(text);
            }
            out.paths
                .extend(option_values(options, ENV_VALUES, 'C', "--chdir"));
            Some(skip_assignments(args, i))
        }
        "command" => {
            let i = skip_options(args, "", &[]);
            // `command -v NAME` / `-V` only looks the name up.
            let lookup = args[..i]
                .iter()
                .any(|w| w.text != "--" && w.text.starts_with('-') && w.text.contains(['v', 'V']));
            (!lookup).then_some(i)
        }
        "taskset" => {
            // `taskset MASK cmd` or `taskset -c LIST cmd`; `-p` acts on a pid.
            let i = skip_options(args, "c", &["--cpu-list"]);
            let list = args[..i]
                .iter()
                .any(|w| w.text.starts_with("-c") || w.text == "--cpu-list");
            Some(if list { i } else { i + 1 })
        }
        "flock" => {
            const FLOCK_VALUES: &str = "wEc";
            let i = skip_options(
                args,
                FLOCK_VALUES,
                &["--timeout", "--conflict-exit-code", "--command"],
            );
            let before = option_values(&args[..i], FLOCK_VALUES, 'c', "--command");
            out.scripts.extend(before.into_iter().map(|word| word.text));
            // `flock FILE [options] cmd …` or `flock FILE -c STRING`.
            let after = args.get(i + 1..).unwrap_or_default();
            let end = skip_options(
                after,
                FLOCK_VALUES,
                &["--timeout", "--conflict-exit-code", "--command"],
            );
            let scripts = option_values(&after[..end], FLOCK_VALUES, 'c', "--command");
            if scripts.is_empty() {
                Some(i + 1 + end)
            } else {
                out.scripts
                    .extend(scripts.into_iter().map(|word| word.text));
                None
            }
        }
        "su" | "runuser" | "script" => {
            let with_value = match name {
                "su" => "cgGsw",
                "runuser" => "cgGsuw",
                _ => "cBEIOoTm",
            };
            let i = skip_options(
                args,
                with_value,
                &[
                    "--command",
                    "--group",
                    "--supp-group",
                    "--shell",
                    "--user",
                    "--log-out",
                    "--whitelist-environment",
                    "--log-in",
                    "--log-io",
                    "--log-timing",
                    "--echo",
                    "--output-limit",
                ],
            );
            let options = &args[..i];
            let commands = option_values(options, with_value, 'c', "--command");
            let given = !commands.is_empty();
            out.scripts
                .extend(commands.into_iter().map(|word| word.text));
            match name {
                // `runuser -u USER [--] COMMAND …` runs the command itself.
                "runuser" if !option_values(options, with_value, 'u', "--user").is_empty() => {
                    Some(i)
                }
                // `su [-] [USER [ARGS…]]`: the arguments after the user go
                // to the user's shell (`su root -c 'cmd'`).
                "su" | "runuser" if !given => {
                    let user = i + usize::from(args.get(i).is_some_and(|w| w.text == "-"));
                    if user + 1 < args.len() {
                        shell_script(&args[user + 1..], out);
                    } else {
                        // The user's shell reads its commands from the input.
                        out.reads_stdin = true;
                    }
                    None
                }
                _ => None,
            }
        }
        "builtin" | "nohup" | "busybox" | "toybox" | "coproc" | "unbuffer" => {
            Some(usize::from(args.first().is_some_and(|w| w.text == "--")))
        }
        "exec" => Some(skip_options(args, "a", &[])),
        "time" => Some(skip_options(args, "fo", &["--format", "--output"])),
        "timeout" => {
            let i = skip_options(args, "sk", &["--signal", "--kill-after"]);
            Some(i + 1)
        }
        "nice" => Some(skip_options(args, "n", &["--adjustment"])),
        "ionice" => Some(skip_options(args, "cnpPu", &["--class", "--classdata"])),
        "stdbuf" => Some(skip_options(
            args,
            "ioe",
            &["--input", "--output", "--error"],
        )),
        "setsid" => Some(skip_options(args, "", &[])),
        "xargs" => {
            let i = skip_options(
                args,
                "adEILnPs",
                &[
                    "--arg-file",
                    "--delimiter",
                    "--eof",
                    "--replace",
                    "--max-lines",
                    "--max-args",
                    "--max-procs",
                    "--max-chars",
                    "--process-slot-var",
                ],
            );
            if i >= args.len() {
                // xargs without a command runs echo.
                None
            } else {
                let replace = xargs_replace(&args[..i]);
                filled_by_input(&args[i..], replace.as_deref(), "xargs", depth, out);
                Some(i)
            }
        }
        "watch" => {
            let i = skip_options(args, "n", &["--interval"]);
            let exec = args[..i].iter().any(|w| {
                w.text == "--exec"
                    || (w.text.starts_with('-')
                        && !w.text.starts_with("--")
                        && w.text.contains('x'))
            });
            if exec {
                Some(i)
            } else {
                if i < args.len() {
                    out.scripts.push(join(&args[i..]));
                }
                None
            }
        }
        "find" => {
            let mut k = 0;
            while k < args.len() {
                if matches!(
                    args[k].text.as_str(),
                    "-exec" | "-execdir" | "-ok" | "-okdir"
                ) {
                    let start = k + 1;
                    let mut end = start;
                    while end < args.len() && !matches!(args[end].text.as_str(), ";" | "+") {
                        end += 1;
                    }
                    analyze_into(&args[start..end], depth + 1, out);
                    filled_by_input(&args[start..end], Some("{}"), "find", depth, out);
                    k = end;
                }
                k += 1;
            }
            None
        }
        "eval" => {
            if args.iter().any(|w| w.dynamic) {
                out.opaque
                    .push("`eval` of text only known when the command runs".to_string());
            }
            if !args.is_empty() {
                out.scripts.push(join(args));
            }
            None
        }
        "trap" => {
            let i = skip_options(args, "", &[]);
            let rest = &args[i.min(args.len())..];
            if rest.len() >= 2 && rest[0].text != "-" {
                if rest[0].dynamic {
                    out.opaque
                        .push("`trap` of text only known when the command runs".to_string());
                }
                out.scripts.push(rest[0].text.clone());
            }
            None
        }
        "source" | "." => {
            match args.first() {
                Some(file) if file.dynamic => out
                    .opaque
                    .push("`source` of a file only known when the command runs".to_string()),
                Some(file) => script_file(file, out),
                None => {}
            }
            None
        }
        "hash" => {
            if args.iter().any(|w| w.text.starts_with("-p")) {
                out.opaque.push(
                    "`hash -p` can make a command name run another program for later lines"
                        .to_string(),
                );
            }
            None
        }
        "enable" => {
            if args.iter().any(|w| w.text.starts_with("-f")) {
                out.opaque
                    .push("`enable -f` loads a builtin from a shared object".to_string());
            }
            None
        }
        "alias" => {
            if !args.is_empty() {
                out.opaque
                    .push("`alias` can rename commands for later lines".to_string());
            }
            None
        }
        shell if OTHER_SHELLS.contains(&shell) => {
            out.opaque.push(format!(
                "a `{shell}` command line, which is not parsed as bash"
            ));
            None
        }
        shell if SHELLS.contains(&shell) => {
            shell_script(args, out);
            None
        }
        _ => None,
    };
    // A wrapper's own arguments end where the command it runs starts (that
    // command's paths are collected when it is analysed); find's paths end
    // at its first `-exec`.
    let own = match (name, inner) {
        (_, Some(i)) => &args[..i.min(args.len())],
        ("find", None) => {
            let end = args
                .iter()
                .position(|w| matches!(w.text.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir"))
                .unwrap_or(args.len());
            &args[..end]
        }
        _ => args,
    };
    collect_paths(name, own, out);
    if let Some(i) = inner
        && i < args.len()
    {
        analyze_into(&args[i..], depth + 1, out);
    }
}

/// The values of the short option `wanted` among `options` (the words
/// before the command): alone (`-c CMD`), last in a cluster (`-qc CMD`) or
/// with its value attached (`-cCMD`); a cluster's value starts at its
/// first letter of `with_value`. Also `LONG VALUE` and `LONG=VALUE`.
fn option_values(options: &[Word], with_value: &str, wanted: char, long: &str) -> Vec<Word> {
    let mut values = Vec::new();
    let mut k = 0;
    while let Some(word) = options.get(k) {
        let text = word.text.as_str();
        k += 1;
        if text == "--" {
            break;
        }
        if let Some(rest) = text.strip_prefix(long) {
            if rest.is_empty() {
                values.extend(options.get(k).cloned());
                k += 1;
            } else if let Some(value) = rest.strip_prefix('=') {
                values.push(Word {
                    text: value.to_string(),
                    ..word.clone()
                });
            }
            continue;
        }
        let Some(cluster) = text.strip_prefix('-').filter(|c| !c.starts_with('-')) else {
            continue;
        };
        for (at, c) in cluster.char_indices() {
            if !with_value.contains(c) {
                continue;
            }
            let rest = &cluster[at + c.len_utf8()..];
            let value = if rest.is_empty() {
                k += 1;
                options.get(k - 1).cloned()
            } else {
                Some(Word {
                    text: rest.to_string(),
                    ..word.clone()
                })
            };
            if c == wanted {
                values.extend(value);
            }
            break;
        }
    }
    values
}

const LONG_SUDO: [&str; 10] = [
    "--user",
    "--group",
    "--close-from",
    "--chdir",
    "--host",
    "--prompt",
    "--role",
    "--type",
    "--command-timeout",
    "--other-user",
];

/// The words joined by spaces.
pub fn join(words: &[Word]) -> String {
    let texts: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
    texts.join(" ")
}

/// The index of the first argument after the options: `--` ends them,
/// `--name=value` and other long options are one word unless listed in
/// `long_with_value`, a short cluster takes the next word as its value when
/// its last letter is in `with_value` (`-u root`), or its rest when an
/// earlier letter is (`-uroot`).
fn skip_options(args: &[Word], with_value: &str, long_with_value: &[&str]) -> usize {
    let mut i = 0;
    while let Some(word) = args.get(i) {
        let text = word.text.as_str();
        if text == "--" {
            return i + 1;
        }
        if let Some(long) = text.strip_prefix("--") {
            let takes = !long.contains('=') && long_with_value.contains(&text);
            i += if takes { 2 } else { 1 };
            continue;
        }
        let Some(cluster) = text.strip_prefix('-') else {
            break;
        };
        if cluster.is_empty() {
            break;
        }
        let mut step = 1;
        for (k, c) in cluster.char_indices() {
            if with_value.contains(c) {
                if k + c.len_utf8() == cluster.len() {
                    step = 2;
                }
                break;
            }
        }
        i += step;
    }
    i.min(args.len())
}

/// The replace string of `xargs` options (`-I STR`, `-iSTR`, `-i`,
/// `--replace[=STR]`; `-i` and `--replace` alone mean `{}`), if any.
fn xargs_replace(options: &[Word]) -> Option<String> {
    let mut replace = None;
    for (k, word) in options.iter().enumerate() {
        let text = word.text.as_str();
        if text == "-I" {
            replace = options.get(k + 1).map(|value| value.text.clone());
        } else if text == "-i" || text == "--replace" {
            replace = Some("{}".to_string());
        } else if let Some(value) = text
            .strip_prefix("--replace=")
            .or_else(|| text.strip_prefix("-I"))
            .or_else(|| text.strip_prefix("-i"))
        {
            replace = Some(value.to_string());
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
    let analyse = |words: &[Word]| {
        let mut analysis = Analysis {
            input_depth: out.input_depth + 1,
            ..Analysis::default()
        };
        analyze_into(words, depth + 1, &mut analysis);
        analysis.opaque
    };
    let written = analyse(words);
    for reason in analyse(&filled) {
        if !written.contains(&reason) {
            out.opaque.push(format!(
                "`{runner}` completes `{}` with its input, and then: {reason}",
                join(words)
            ));
        }
    }
}

/// The index of the first word at or after `i` that is not `NAME=value`.
fn skip_assignments(args: &[Word], mut i: usize) -> usize {
    while let Some(word) = args.get(i) {
        let Some((name, _)) = word.text.split_once('=') else {
            break;
        };
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            break;
        }
        i += 1;
    }
    i
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
            i += if matches!(text, "--rcfile" | "--init-file") {
                2
            } else {
                1
            };
            continue;
        }
        let Some(cluster) = text.strip_prefix('-').or_else(|| text.strip_prefix('+')) else {
            break;
        };
        let mut step = 1;
        for c in cluster.chars() {
            match c {
                'c' if text.starts_with('-') => command_string = true,
                's' => stdin = true,
                'o' | 'O' => step = 2,
                _ => {}
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

fn collect_paths(name: &str, args: &[Word], out: &mut Analysis) {
    let file_command = FILE_COMMANDS.contains(&name);
    if matches!(name, "cd" | "chdir") {
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
        if file_command || path_like(text) {
            out.paths.push(word.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell_word::words_of;

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
    fn option_values_in_clusters_attached_and_long() {
        let words = |line: &str| -> Vec<Word> { line.split(' ').flat_map(words_of).collect() };
        let values = |line: &str, wanted, long| -> Vec<String> {
            option_values(&words(line), "cuS", wanted, long)
                .into_iter()
                .map(|w| w.text)
                .collect()
        };
        assert_eq!(values("-qc ls", 'c', "--command"), ["ls"]);
        assert_eq!(values("-cls", 'c', "--command"), ["ls"]);
        assert_eq!(
            values("--command ls --command=pwd", 'c', "--command"),
            ["ls", "pwd"]
        );
        // `-u`'s value is not a `-c`: `-uc` is user `c`.
        assert_eq!(values("-uc ls", 'c', "--command"), Vec::<String>::new());
        assert_eq!(values("-u root -vS ls", 'S', "--split"), ["ls"]);
        assert_eq!(values("-- -c ls", 'c', "--command"), Vec::<String>::new());
    }
}
