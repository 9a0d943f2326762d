//! Where bash evaluates text it only gets at run time as code.
//!
//! Arithmetic evaluation expands array subscripts again, and it takes the
//! value of a variable as an expression of its own. So a variable holding
//! `a[$(rm -rf ~)]` runs `rm -rf ~` wherever bash evaluates that variable
//! as a number:
//!
//! ```sh
//! X='a[$(rm -rf ~)]'; (( X ))
//! ```
//!
//! The command line shows no command substitution (the text is in single
//! quotes), and `(( X ))` is not a command, so without this module the
//! line asked for nothing. The same happens in every place bash evaluates
//! a value as arithmetic or as a variable name:
//!
//! - arithmetic: `(( … ))`, `$(( … ))`, `$[ … ]` (also in an unquoted
//!   heredoc), `for (( … ))`, `let`, the integer tests (`-eq`, `-ne`,
//!   `-lt`, `-le`, `-gt`, `-ge`) of `[[` (those of `[` and `test` take
//!   numbers only, and `printf %d` too: checked with bash 5.2), array
//!   subscripts, `${s:offset:length}`, and assignments to `declare -i`
//!   variables and to `RANDOM`/`OPTIND`;
//! - names given as text: `read`, `mapfile`/`readarray`, `printf -v`,
//!   `getopts`, `unset`, `[[ -v … ]]`/`test -v`, `declare "…"`, namerefs
//!   (`declare -n`), indirect expansion `${!name}` and prompt expansion
//!   `${name@P}`;
//! - variables bash runs as code when set: `BASH_ENV`, `ENV`, the prompts
//!   and `PROMPT_COMMAND`, `MAILPATH`'s messages, exported functions
//!   (`BASH_FUNC_name%%`), however they are set (`=`, a builtin that
//!   assigns a name, a nameref pointing at one).
//!
//! Which words a builtin takes as names is the "names" column of the
//! program table (`programs.rs`): `read NAME… -a ARRAY`, `printf -v NAME`,
//! `mapfile ARRAY`, `getopts OPTSTRING NAME`, `wait -p NAME`, `let`'s
//! arithmetic, `unset`, `test -v` and the declarations, with the builtin's
//! options parsed as the table lists them.
//!
//! [`EvalFacts`] collects those contexts while the scanner walks the line,
//! and the names the line assigns text to; [`EvalFacts::reasons`] then says
//! which contexts can run code the scan cannot see: a context holding a
//! command substitution, escapes or `$'…'`, or referring to a variable the
//! line assigns anything but an integer (by `=`, `read`, a `for` list …), a
//! positional parameter, or one of bash's variables holding run-time text
//! (`$_`, `REPLY`, `BASH_REMATCH` …). Variables the line never assigns come
//! from the host's environment and are trusted, unless the line `source`s a
//! file (which may assign anything).

use std::collections::HashSet;

use tree_sitter::Node;

use crate::shell::programs::{self, Names, Runs, Shape, s};
use crate::shell::shell_command::{base_name, parse_options};
use crate::shell::shell_settings::{self, Meaning, trusted_path_value};
use crate::shell::shell_word::{Word, words_of};

/// The integer comparison operators of `[[` (bash evaluates their
/// operands; `test` and `[` take numbers only).
const INTEGER_TESTS: &[&str] = &["-eq", "-ne", "-lt", "-le", "-gt", "-ge"];

/// bash's own variables whose value is text from the run (a command's last
/// argument, input read, a regex match, a directory name …).
const RUNTIME_VARIABLES: &[&str] = &[
    "_",
    "REPLY",
    "MAPFILE",
    "BASH_REMATCH",
    "OPTARG",
    "PWD",
    "OLDPWD",
    "DIRSTACK",
    "BASH_ARGV",
    "BASH_ARGV0",
    "BASH_COMMAND",
    "BASH_EXECUTION_STRING",
    "BASH_SOURCE",
    "FUNCNAME",
    "COPROC",
    "READLINE_LINE",
    "COMP_LINE",
    "COMP_WORDS",
    "COMPREPLY",
];

/// Variables whose value bash runs as code: startup files of a shell
/// started with them in its environment (`BASH_ENV`, `ENV`), prompts
/// (expanded with command substitution; `PS4` by `set -x`) and
/// `PROMPT_COMMAND`. (`BASH_FUNC_name%%` words define functions for a
/// child bash.)
const SHELL_CODE_VARIABLES: &[&str] = &[
    "BASH_ENV",
    "ENV",
    "PS0",
    "PS1",
    "PS2",
    "PS3",
    "PS4",
    "PROMPT_COMMAND",
    // The mail message of an interactive shell is expanded, command
    // substitution included (`MAILPATH='f?$(cmd)'`).
    "MAILPATH",
];

/// Whether bash runs the value of the variable `name` as code.
fn is_shell_code_variable(name: &str) -> bool {
    SHELL_CODE_VARIABLES.contains(&name) || name.starts_with("BASH_FUNC_")
}

/// bash's variables whose assignments are evaluated as arithmetic.
const INTEGER_VARIABLES: &[&str] = &[
    "RANDOM", "SRANDOM", "OPTIND", "SECONDS", "LINENO", "HISTCMD",
];

/// Text that makes a context opaque on its own: a command or process
/// substitution, a backslash escape (`\$\(` becomes `$(` once the
/// context's text is expanded), or a `$'…'` / `$"…"` string.
const CODE_MARKERS: &[&str] = &["$(", "`", "\\", "$'", "$\"", "<(", ">("];

/// Longest excerpt of a context quoted in a reason.
const EXCERPT_CHARS: usize = 60;

/// A place where bash evaluates text as arithmetic or as a variable name.
#[derive(Debug)]
struct Context {
    /// The start of the context's text, for the reason.
    excerpt: String,
    /// Whether the text holds one of [`CODE_MARKERS`].
    code: bool,
    /// The variables it refers to.
    references: Vec<Reference>,
}

/// A variable an evaluation context refers to.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Reference {
    /// A named variable (`X`, `$X`, `${X}`).
    Name(String),
    /// A positional parameter (`$1`, `$@`, `$0` …): the arguments of a
    /// function or script, text from the command line.
    Positional(String),
}

/// What the scanner learns about run-time evaluation while it walks a
/// command line (and the scripts inside it).
#[derive(Debug, Default)]
pub(crate) struct EvalFacts {
    contexts: Vec<Context>,
    /// Names assigned text by `NAME=value` (a value that is not an
    /// integer or an arithmetic expansion).
    assigned_text: HashSet<String>,
    /// Names assigned run-time text otherwise (`read`, `for`, `${x:=…}`,
    /// `env X=…`, namerefs …).
    tainted: HashSet<String>,
    /// Names declared with the integer attribute: bash evaluates their
    /// assignments, so they hold integers.
    integers: HashSet<String>,
    /// Namerefs declared without a target: their first assignment names
    /// the variable they refer to.
    namerefs: HashSet<String>,
    /// Every assignment seen: name and value text.
    assignments: Vec<(String, String)>,
    /// Whether the line sources a file, which may assign any variable.
    sources: bool,
    /// Variables of [`SHELL_CODE_VARIABLES`] (or `BASH_FUNC_…`) the line
    /// sets to something.
    shell_code: Vec<String>,
    /// Namerefs declared to refer to a name only known at run time.
    dynamic_namerefs: Vec<String>,
    /// Why an assignment to one of bash's own variables is opaque (see
    /// `shell_settings`), one reason each.
    variables: Vec<(String, String)>,
    /// How the line changes `PATH` to a value that is not only trusted
    /// directories (`PATH=tools:$PATH`, `unset PATH`, `read PATH`).
    path_changed: Option<String>,
    /// The first command name the line looks up through `PATH`.
    looks_up: Option<String>,
}

/// Per-script walk state: the end of the last context recorded, so the
/// contexts nested in it (already covered by its text: a command
/// substitution inside shows as `$(`) are not recorded again.
#[derive(Debug, Default)]
pub(crate) struct EvalWalk {
    covered_until: usize,
    /// The end of the last `[[ … ]]` entered (test expressions before it
    /// are inside it: the walk is in document order).
    double_brackets_until: usize,
}

impl EvalFacts {
    /// Looks at one node of a parsed script (`source` is the text it was
    /// parsed from); the scanner calls it for every node, in document
    /// order.
    pub(crate) fn visit(&mut self, node: Node<'_>, source: &str, walk: &mut EvalWalk) {
        let text = node_text(node, source);
        match node.kind() {
            "test_command" if text.starts_with("[[") => {
                walk.double_brackets_until = node.end_byte();
            }
            "arithmetic_expansion" => self.context_node(node, text, walk),
            "c_style_for_statement" => {
                // The `(( … ))` header, not the body.
                let end = node
                    .child_by_field_name("body")
                    .map_or(node.end_byte(), |body| body.start_byte());
                let header = source.get(node.start_byte()..end).unwrap_or_default();
                self.context_range(node.start_byte(), end, header, walk);
            }
            "compound_statement" if first_child_kind(node) == Some("((") => {
                self.context_node(node, text, walk);
            }
            "subscript" => {
                if let Some(index) = node.child_by_field_name("index") {
                    self.context_node(index, node_text(index, source), walk);
                }
            }
            "expansion" => self.expansion(node, text, walk),
            "variable_assignment" => self.assignment(node, source, walk),
            "for_statement" => self.for_statement(node, source, text),
            "declaration_command" => self.declaration(&node_words(node, source)),
            "unset_command" => {
                let words = node_words(node, source);
                self.unset(words.get(1..).unwrap_or_default());
            }
            "heredoc_redirect" => {
                self.descriptor_variable(node, source);
                self.heredoc(node, source);
            }
            "file_redirect" | "herestring_redirect" => self.descriptor_variable(node, source),
            "binary_expression"
                if test_operator(node, source).is_some_and(|op| INTEGER_TESTS.contains(&op))
                    && node.start_byte() < walk.double_brackets_until =>
            {
                for field in ["left", "right"] {
                    if let Some(operand) = node.child_by_field_name(field) {
                        self.context_node(operand, node_text(operand, source), walk);
                    }
                }
            }
            "unary_expression" if test_operator(node, source) == Some("-v") => {
                let mut cursor = node.walk();
                let operands: Vec<Node<'_>> = node
                    .named_children(&mut cursor)
                    .filter(|child| child.kind() != "test_operator")
                    .collect();
                for operand in operands {
                    for word in words_of(node_text(operand, source)) {
                        self.name_argument(&word);
                    }
                }
            }
            _ => {}
        }
    }

    /// Looks at one simple command as bash runs it (wrappers already
    /// removed): the builtins that evaluate their arguments or take
    /// variable names, and `NAME=value` arguments (`env X=… bash -c …`).
    pub(crate) fn command(&mut self, words: &[Word]) {
        let Some(first) = words.first() else {
            return;
        };
        let args = &words[1..];
        let program = programs::find(base_name(&first.text));
        self.note_lookup(first, args, program);
        // `env NAME=v cmd` and `sudo NAME=v cmd` put the assignments in the
        // environment of the command they run.
        let environment =
            program.is_some_and(|p| matches!(p.runs, Runs::Shape(Shape::Env | Shape::Sudo)));
        // `let i=1+2` assigns an integer: its words are arithmetic.
        let arithmetic = program.is_some_and(|p| p.names_set == Names::Arithmetic);
        for word in args.iter().filter(|_| !arithmetic) {
            if let Some((name, value)) = assignment_parts(&word.text) {
                if environment {
                    let value = (!word.dynamic).then_some(value);
                    self.bash_variable(name, value, &format!("`{}` sets it", first.text));
                }
                self.shell_code_assignment(name, value);
                if !is_integer(value) {
                    self.tainted.insert(name.to_string());
                }
            } else if let Some((name, value)) = word.text.split_once('=')
                && name.starts_with("BASH_FUNC_")
            {
                self.shell_code_assignment(name, value);
            }
        }
        // What the program table says the builtin does with names.
        let Some(program) = program else {
            return;
        };
        if program.runs == Runs::Shape(Shape::Source) {
            self.sources = true;
        }
        if program.names_set == Names::Declarations {
            self.declaration(words);
            return;
        }
        // An option the table does not list makes the command opaque in
        // `shell_command`; nothing more to learn here.
        let Ok(parsed) = parse_options(args, program.options) else {
            return;
        };
        let operands = &args[parsed.end..];
        match program.names_set {
            Names::None | Names::Declarations => {}
            Names::Arithmetic => {
                for word in operands {
                    self.context_text(&word.text);
                }
            }
            Names::TestOperand => self.test_words(args),
            Names::Unset => self.unset(args),
            Names::OptionValue(letter) => {
                for name in parsed.values(s(letter)) {
                    self.name_argument(name);
                }
            }
            Names::Operands(array) => {
                if let Some(letter) = array {
                    for name in parsed.values(s(letter)) {
                        self.name_argument(name);
                    }
                }
                for name in operands {
                    self.name_argument(name);
                }
            }
            Names::FirstOperand => {
                if let Some(name) = operands.first() {
                    self.name_argument(name);
                }
            }
            Names::SecondOperand => {
                if let Some(name) = operands.get(1) {
                    self.name_argument(name);
                }
            }
        }
    }

    /// Notes the first command name the line looks up through `PATH`: a
    /// name without `/` that is no builtin, or any after `enable -n`.
    fn note_lookup(&mut self, first: &Word, args: &[Word], program: Option<&programs::Program>) {
        if !first.dynamic
            && !first.text.contains('/')
            && program.is_none_or(|p| !p.builtin)
            && self.looks_up.is_none()
        {
            self.looks_up = Some(first.text.clone());
        }
        // `enable -n NAME` turns a builtin off: its name is then looked up
        // through `PATH` too.
        if first.text == "enable"
            && args
                .iter()
                .any(|w| w.dynamic || (w.text.starts_with('-') && w.text.contains('n')))
            && self.looks_up.is_none()
        {
            self.looks_up = Some("a builtin `enable -n` turns off".to_string());
        }
    }

    /// An assignment word tree-sitter did not parse as one (`_+=v a`).
    pub(crate) fn assignment_word(&mut self, name: &str, value: &str) {
        let known = !value.contains(['$', '`', '\\', '<', '>']);
        self.bash_variable(name, known.then_some(value), "by an assignment");
        self.shell_code_assignment(name, value);
        if !is_integer(value) {
            self.assigned_text.insert(name.to_string());
        }
        self.assignments.push((name.to_string(), value.to_string()));
    }

    /// Why the line can run code through run-time evaluation, one reason
    /// per context (empty when it cannot).
    pub(crate) fn reasons(&self) -> Vec<String> {
        let evaluated_assignments: Vec<Context> = self
            .assignments
            .iter()
            .filter(|(name, _)| self.evaluates_assignments(name))
            .map(|(_, value)| context_of(value))
            .collect();
        let mut reasons: Vec<String> = self
            .shell_code
            .iter()
            .map(|name| {
                format!(
                    "the line sets `{name}`, whose value bash runs as code (a startup file, a prompt or a function)"
                )
            })
            .collect();
        // A variable bash runs as code has its reason above.
        reasons.extend(
            self.variables
                .iter()
                .filter(|(name, _)| !self.shell_code.contains(name))
                .map(|(_, reason)| reason.clone()),
        );
        if let (Some(change), Some(program)) = (&self.path_changed, &self.looks_up) {
            reasons.push(format!(
                "the line changes `PATH` ({change}) and looks up `{program}` through it: which file runs is only known at run time"
            ));
        }
        for name in &self.dynamic_namerefs {
            reasons.push(format!(
                "`{name}` is a nameref to a variable whose name is only known at run time"
            ));
        }
        // The first assignment to a nameref declared without a target
        // names its target: one bash runs as code is set through it.
        for (name, value) in &self.assignments {
            let target = value.trim_matches(['\'', '"']);
            if self.namerefs.contains(name)
                && matches!(
                    shell_settings::meaning(target),
                    Some(Meaning::Opaque(_) | Meaning::CommandSearch)
                )
            {
                reasons.push(format!(
                    "the line points the nameref `{name}` at `{value}`, a variable bash gives a meaning to"
                ));
            }
        }
        for context in self.contexts.iter().chain(&evaluated_assignments) {
            if context.code {
                reasons.push(format!(
                    "bash evaluates `{}` as arithmetic or as a variable name, and it holds a substitution or escape",
                    context.excerpt
                ));
                continue;
            }
            let unsafe_reference =
                context
                    .references
                    .iter()
                    .find_map(|reference| match reference {
                        Reference::Positional(name) => Some(name.clone()),
                        Reference::Name(name) if self.is_tainted(name) => Some(name.clone()),
                        Reference::Name(_) => None,
                    });
            if let Some(name) = unsafe_reference {
                reasons.push(format!(
                    "bash evaluates `{}` as arithmetic or as a variable name, and `{name}` holds text only known at run time",
                    context.excerpt
                ));
            }
        }
        let mut assigned_at_run_time: Vec<&String> = self
            .tainted
            .iter()
            .filter(|name| self.evaluates_assignments(name))
            .collect();
        assigned_at_run_time.sort();
        for name in assigned_at_run_time {
            reasons.push(format!(
                "bash evaluates what is assigned to `{name}` (an integer variable or a nameref), and the line assigns it text only known at run time"
            ));
        }
        reasons
    }

    /// Notes an assignment to a variable bash runs as code (an empty value
    /// runs nothing).
    fn shell_code_assignment(&mut self, name: &str, value: &str) {
        let value = value.trim_matches(['\'', '"']);
        if is_shell_code_variable(name)
            && !value.is_empty()
            && !self.shell_code.iter().any(|known| known == name)
        {
            self.shell_code.push(name.to_string());
        }
    }

    /// Notes a builtin assigning to `name` (`read`, `printf -v`,
    /// `mapfile`, `getopts`, `wait -p`, a nameref's target): a variable bash
    /// runs as code is a reason whatever the value.
    fn shell_code_name(&mut self, name: &str) {
        if is_shell_code_variable(name) && !self.shell_code.iter().any(|known| known == name) {
            self.shell_code.push(name.to_string());
        }
    }

    /// Notes an assignment to `name` (`value`: its text, `None` when only
    /// known at run time or unset; `how`: how the line assigns it): one of
    /// bash's own variables not on the inert list is a reason, `PATH` one
    /// when it is given more than trusted directories.
    fn bash_variable(&mut self, name: &str, value: Option<&str>, how: &str) {
        match shell_settings::meaning(name) {
            None | Some(Meaning::Inert(_)) => {}
            Some(Meaning::Opaque(why)) => {
                if !self.variables.iter().any(|(known, _)| known == name) {
                    let reason = format!("the line assigns `{name}` ({how}), which {why}");
                    self.variables.push((name.to_string(), reason));
                }
            }
            Some(Meaning::CommandSearch) => {
                if !value.is_some_and(trusted_path_value) && self.path_changed.is_none() {
                    self.path_changed = Some(match value {
                        Some(value) => format!("`{name}={value}`, {how}"),
                        None => how.to_string(),
                    });
                }
            }
        }
    }

    /// Whether bash evaluates what is assigned to `name`: an integer
    /// variable, or a nameref whose first assignment names its target.
    fn evaluates_assignments(&self, name: &str) -> bool {
        self.is_integer_variable(name) || self.namerefs.contains(name)
    }

    fn is_integer_variable(&self, name: &str) -> bool {
        self.integers.contains(name) || INTEGER_VARIABLES.contains(&name)
    }

    fn is_tainted(&self, name: &str) -> bool {
        self.sources
            || self.tainted.contains(name)
            || RUNTIME_VARIABLES.contains(&name)
            // An integer variable's assignments are checked as contexts.
            || (self.assigned_text.contains(name) && !self.is_integer_variable(name))
    }

    /// Records a context from a node, unless an earlier context of the
    /// same script already covers it.
    fn context_node(&mut self, node: Node<'_>, text: &str, walk: &mut EvalWalk) {
        self.context_range(node.start_byte(), node.end_byte(), text, walk);
    }

    fn context_range(&mut self, start: usize, end: usize, text: &str, walk: &mut EvalWalk) {
        if start < walk.covered_until {
            return;
        }
        walk.covered_until = end;
        self.context_text(text);
    }

    fn context_text(&mut self, text: &str) {
        let context = context_of(text);
        // Arithmetic can assign any variable it names (`(( BASH_CMDS[ls]=1 ))`).
        for reference in &context.references {
            if let Reference::Name(name) = reference {
                self.bash_variable(name, None, "in arithmetic");
            }
        }
        self.contexts.push(context);
    }

    /// `${…}`: indirect (`${!name}`), prompt (`${name@P}`), offset and
    /// length (`${s:1:n}`) and default assignment (`${x:=text}`).
    fn expansion(&mut self, node: Node<'_>, text: &str, walk: &mut EvalWalk) {
        let Some(body) = text.strip_prefix("${") else {
            return;
        };
        let body = body.strip_suffix('}').unwrap_or(body);
        let (indirect, rest) = match body.strip_prefix('!') {
            Some(rest) => (true, rest),
            None => (false, body.strip_prefix('#').unwrap_or(body)),
        };
        let name_len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let (name, mut after) = rest.split_at(name_len);
        if name.is_empty() {
            return;
        }
        let mut listing = false;
        if after.starts_with('[') {
            let close = after.find(']').map_or(after.len(), |at| at + 1);
            listing = matches!(&after[..close], "[@]" | "[*]");
            after = &after[close..];
        }
        // `${!prefix*}`, `${!prefix@}` and `${!array[@]}` list names or
        // keys; every other `${!name…}` reads the variable `name` names.
        let names_listing = indirect && (listing || after == "*" || after == "@");
        if (indirect && !names_listing) || after == "@P" {
            self.context_node(node, &format!("${name}"), walk);
        } else if let Some(offset) = after.strip_prefix(':')
            && !offset.starts_with(['-', '=', '?', '+'])
        {
            self.context_node(node, offset, walk);
        }
        for operator in [":=", "="] {
            if let Some(value) = after.strip_prefix(operator) {
                if !is_integer(value) {
                    self.tainted.insert(name.to_string());
                }
                self.bash_variable(name, Some(value), "by `${…=…}`");
                break;
            }
        }
    }

    fn assignment(&mut self, node: Node<'_>, source: &str, walk: &mut EvalWalk) {
        let Some(name_node) = node.child_by_field_name("name") else {
            return;
        };
        let name_node = match name_node.kind() {
            "subscript" => name_node.child_by_field_name("name").unwrap_or(name_node),
            _ => name_node,
        };
        let name = node_text(name_node, source).to_string();
        let value = node.child_by_field_name("value");
        let value_text = value.map_or("", |value| node_text(value, source));
        // `PATH+=…` appends to the current value.
        let appends = value.is_some_and(|value| {
            source
                .get(node.start_byte()..value.start_byte())
                .is_some_and(|left| left.ends_with("+="))
        });
        let assigned = if appends {
            format!("$PATH{value_text}")
        } else {
            value_text.to_string()
        };
        self.bash_variable(&name, Some(&assigned), "by an assignment");
        let integer = match value {
            None => true,
            Some(value) => value.kind() == "arithmetic_expansion" || is_integer(value_text),
        };
        if let Some(value) = value
            && value.kind() == "array"
        {
            let mut cursor = value.walk();
            let keyed: Vec<Node<'_>> = value
                .named_children(&mut cursor)
                .filter(|element| node_text(*element, source).starts_with('['))
                .collect();
            for element in keyed {
                self.context_node(element, node_text(element, source), walk);
            }
        }
        if !integer {
            self.assigned_text.insert(name.clone());
        }
        self.shell_code_assignment(&name, value_text);
        self.assignments.push((name, value_text.to_string()));
    }

    /// `for x in …` / `select x in …`: the variable holds the list's
    /// words, which are only known when they hold an expansion or a glob
    /// (file names are text too); `for x; do` walks the positional
    /// parameters, `select` reads input.
    fn for_statement(&mut self, node: Node<'_>, source: &str, text: &str) {
        let Some(variable) = node.child_by_field_name("variable") else {
            return;
        };
        let mut cursor = node.walk();
        let values: Vec<&str> = node
            .children_by_field_name("value", &mut cursor)
            .map(|value| node_text(value, source))
            .collect();
        let runtime = text.trim_start().starts_with("select")
            || values.is_empty()
            || values
                .iter()
                .any(|value| value.contains(['$', '`', '*', '?', '[', '\\', '~']));
        if runtime {
            self.tainted.insert(node_text(variable, source).to_string());
        }
        self.bash_variable(node_text(variable, source), None, "as a loop variable");
    }

    /// `declare`, `typeset`, `local`, `export`, `readonly` (the keyword
    /// first): `-i` makes later assignments arithmetic, `-n` makes a
    /// nameref (its uses read the variable its value names), and any
    /// argument that is not a plain `NAME` or `NAME=value` is a name only
    /// known at run time.
    fn declaration(&mut self, words: &[Word]) {
        let Some(keyword) = words.first() else {
            return;
        };
        let namerefs_possible = matches!(keyword.text.as_str(), "declare" | "typeset" | "local");
        let mut integer = false;
        let mut nameref = false;
        for word in &words[1..] {
            if !word.dynamic
                && let Some(flags) = word.text.strip_prefix('-')
                && !flags.contains('=')
            {
                integer |= flags.contains('i');
                nameref |= namerefs_possible && flags.contains('n');
                continue;
            }
            // A literal name (with or without `=value`), else a name only
            // known at run time or with a subscript: evaluated.
            let (target, value) = match assignment_parts(&word.text) {
                Some((name, value)) => (name, Some(value)),
                None => (word.text.as_str(), None),
            };
            let subscript = word
                .text
                .split('=')
                .next()
                .is_some_and(|left| left.contains('['));
            if !word.dynamic {
                match value {
                    Some(value) => {
                        self.bash_variable(target, Some(value), &format!("by `{}`", keyword.text))
                    }
                    // `local PATH` makes it unset in the function.
                    None if keyword.text != "export"
                        && keyword.text != "readonly"
                        && shell_settings::meaning(target) == Some(Meaning::CommandSearch) =>
                    {
                        self.bash_variable(target, None, &format!("unset by `{}`", keyword.text));
                    }
                    None => {}
                }
            }
            if !is_name(target) || subscript || (value.is_none() && word.dynamic) {
                self.name_argument(word);
                continue;
            }
            if let Some(value) = value {
                self.shell_code_assignment(target, value);
                self.assignments
                    .push((target.to_string(), value.to_string()));
            }
            if integer {
                self.integers.insert(target.to_string());
            }
            if nameref {
                // Every use of a nameref reads the variable it names.
                self.tainted.insert(target.to_string());
                match value {
                    // A nameref to a variable bash runs as code sets it.
                    Some(value) if is_name(value) => {
                        self.shell_code_name(value);
                        self.bash_variable(value, None, &format!("through the nameref `{target}`"));
                    }
                    Some(value) if word.dynamic || value.contains(['$', '`']) => {
                        self.dynamic_namerefs.push(target.to_string());
                    }
                    Some(value) => self.context_text(value),
                    None => {
                        self.namerefs.insert(target.to_string());
                    }
                }
            }
        }
    }

    /// `unset NAME…`: a name with a subscript, or only known at run time,
    /// is evaluated.
    fn unset(&mut self, args: &[Word]) {
        for word in args {
            if !word.dynamic && shell_settings::meaning(&word.text) == Some(Meaning::CommandSearch)
            {
                self.bash_variable(&word.text, None, "unset");
            }
            if !word.text.starts_with('-') && (word.dynamic || !is_name(&word.text)) {
                self.context_text(&word.text);
            }
        }
    }

    /// A heredoc with an unquoted delimiter expands its body: each
    /// `$(( … ))` and `$[ … ]` in it is arithmetic. (tree-sitter parses
    /// its `${…}` and `$(…)` but not always its arithmetic.)
    fn heredoc(&mut self, node: Node<'_>, source: &str) {
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
        let quoted = children
            .iter()
            .filter(|child| child.kind() == "heredoc_start")
            .any(|start| node_text(*start, source).contains(['\'', '"', '\\']));
        if quoted {
            return;
        }
        for body in children
            .iter()
            .filter(|child| child.kind() == "heredoc_body")
        {
            for segment in arithmetic_segments(node_text(*body, source)) {
                self.context_text(segment);
            }
        }
    }

    /// `{NAME}>file`: bash opens a descriptor and assigns its number to
    /// `NAME` (tree-sitter may keep `{NAME}` in the redirect or leave it
    /// as the word before it).
    fn descriptor_variable(&mut self, node: Node<'_>, source: &str) {
        let before = source.get(..node.start_byte()).unwrap_or_default();
        let text = node_text(node, source);
        let braced = |text: &str| -> Option<String> {
            let inner = text.strip_prefix('{')?;
            let (name, _) = inner.split_once('}')?;
            is_name(name).then(|| name.to_string())
        };
        let name = braced(text).or_else(|| {
            let start = before.rfind('{')?;
            before
                .ends_with('}')
                .then(|| braced(&before[start..]))
                .flatten()
        });
        if let Some(name) = name {
            self.bash_variable(&name, None, "as a redirection's descriptor");
        }
    }

    /// `test` / `[` as words: the operand of `-v` is a variable name.
    /// (Their integer comparisons take numbers only; `[[`'s evaluate.)
    fn test_words(&mut self, args: &[Word]) {
        for pair in args.windows(2) {
            if pair[0].text == "-v" {
                self.name_argument(&pair[1]);
            }
        }
    }

    /// A word a builtin takes as a variable name and assigns: a plain name
    /// is tainted; a subscript (`a[$i]`) or a name only known at run time
    /// (`"$n"`) is evaluated.
    fn name_argument(&mut self, word: &Word) {
        if !word.dynamic && is_name(&word.text) {
            self.shell_code_name(&word.text);
            self.bash_variable(&word.text, None, "by a builtin that assigns it");
            self.tainted.insert(word.text.clone());
            return;
        }
        if !word.dynamic
            && let Some((name, _)) = word.text.split_once('[')
        {
            self.tainted.insert(name.to_string());
            self.bash_variable(name, None, "by a builtin that assigns it");
        }
        self.context_text(&word.text);
    }
}

fn node_text<'a>(node: Node<'_>, source: &'a str) -> &'a str {
    source.get(node.byte_range()).unwrap_or_default()
}

fn first_child_kind(node: Node<'_>) -> Option<&'static str> {
    node.child(0).map(|child| child.kind())
}

/// The `test_operator` of a test expression, if it has one.
fn test_operator<'a>(node: Node<'_>, source: &'a str) -> Option<&'a str> {
    let mut cursor = node.walk();
    let operator = node
        .children(&mut cursor)
        .find(|child| child.kind() == "test_operator")?;
    Some(node_text(operator, source))
}

fn context_of(text: &str) -> Context {
    let inner = arithmetic_body(text.trim());
    Context {
        excerpt: excerpt(text),
        code: CODE_MARKERS.iter().any(|marker| inner.contains(marker)),
        references: references(inner),
    }
}

/// The expression of `$(( … ))`, `$[ … ]` or `(( … ))`; other text as it
/// is. (Its own `$((` is not a command substitution; one nested inside
/// still counts as one, since bash may read `$((…) )` as a command.)
fn arithmetic_body(text: &str) -> &str {
    text.strip_prefix("$((")
        .or_else(|| text.strip_prefix("(("))
        .and_then(|body| body.strip_suffix("))"))
        .or_else(|| {
            text.strip_prefix("$[")
                .and_then(|body| body.strip_suffix(']'))
        })
        .unwrap_or(text)
}

fn excerpt(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(EXCERPT_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// The variables `text` refers to as an arithmetic expression or a name:
/// bare names, `$name`, `${name…}` and positional parameters.
fn references(text: &str) -> Vec<Reference> {
    let bytes = text.as_bytes();
    let mut found: Vec<Reference> = Vec::new();
    let mut push = |reference: Reference| {
        if !found.contains(&reference) {
            found.push(reference);
        }
    };
    let mut at = 0;
    while at < bytes.len() {
        let byte = bytes[at];
        if byte == b'$' {
            // Positional parameters (`$1`, `${1}`, `$@`, `${*}`). A name
            // after `$`, `${` or `${!` is read by the bare-name rule below
            // (`$`, `{` and `!` are not word characters), and the name of a
            // length `${#x}` is not (it does not evaluate `x`'s value).
            let brace = bytes.get(at + 1) == Some(&b'{');
            let start = at + 1 + usize::from(brace);
            if let Some(b'0'..=b'9' | b'@' | b'*') = bytes.get(start) {
                push(Reference::Positional(text[at..=start].to_string()));
            }
            at += 1;
            continue;
        }
        let follows_word = at > 0
            && (bytes[at - 1].is_ascii_alphanumeric() || matches!(bytes[at - 1], b'_' | b'#'));
        if is_name_start(byte) && !follows_word {
            let end = name_end(bytes, at);
            push(Reference::Name(text[at..end].to_string()));
            at = end;
            continue;
        }
        at += 1;
    }
    found
}

fn is_name_start(byte: u8) -> bool {
    byte.is_ascii_alphabetic() || byte == b'_'
}

fn name_end(bytes: &[u8], start: usize) -> usize {
    let mut end = start;
    while end < bytes.len() && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'_') {
        end += 1;
    }
    end
}

/// Whether `text` is a variable name.
fn is_name(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.first().is_some_and(|first| is_name_start(*first)) && name_end(bytes, 0) == bytes.len()
}

/// Whether `text` is a decimal integer (a value arithmetic evaluates to
/// itself).
fn is_integer(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// `NAME=value`, `NAME+=value` or `NAME[index]=value`, as bash reads an
/// assignment word: the name and the value (`a[b=c` is not one).
pub(crate) fn assignment_parts(text: &str) -> Option<(&str, &str)> {
    let (left, value) = text.split_once('=')?;
    let left = left.strip_suffix('+').unwrap_or(left);
    let name = match left.split_once('[') {
        Some((name, index)) if index.ends_with(']') => name,
        Some(_) => return None,
        None => left,
    };
    is_name(name).then_some((name, value))
}

/// The words of a node's children (a declaration or `unset`).
fn node_words(node: Node<'_>, source: &str) -> Vec<Word> {
    let mut cursor = node.walk();
    node.children(&mut cursor)
        .filter(|child| child.kind() != "comment")
        .flat_map(|child| words_of(node_text(child, source)))
        .collect()
}

/// The `$(( … ))` and `$[ … ]` expansions in `text`, outermost only,
/// found by counting brackets (an unclosed one runs to the end).
fn arithmetic_segments(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut segments = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let rest = &bytes[at..];
        let (open, close) = if rest.starts_with(b"$((") {
            (b'(', b')')
        } else if rest.starts_with(b"$[") {
            (b'[', b']')
        } else {
            at += 1;
            continue;
        };
        let mut depth = 0usize;
        let mut end = bytes.len();
        for (offset, byte) in rest.iter().enumerate().skip(1) {
            if *byte == open {
                depth += 1;
            } else if *byte == close {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    end = at + offset + 1;
                    break;
                }
            }
        }
        segments.push(&text[at..end]);
        at = end;
    }
    segments
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_are_names_expansions_and_positionals() {
        let names = |text| references(text);
        assert_eq!(
            names("i < n + ${m} + $k + 0x1F + 16#ff + $1 + ${@}"),
            [
                Reference::Name("i".into()),
                Reference::Name("n".into()),
                Reference::Name("m".into()),
                Reference::Name("k".into()),
                Reference::Positional("$1".into()),
                Reference::Positional("${@".into()),
            ]
        );
        assert_eq!(names("$? + $# + $$ + ${#} + ${#s} + ${#@}"), []);
        assert_eq!(names("${#a[i]}"), [Reference::Name("i".into())]);
    }

    #[test]
    fn arithmetic_segments_of_a_heredoc() {
        assert_eq!(
            arithmetic_segments("a $(( x + (y) )) b $[z] $((unclosed"),
            ["$(( x + (y) ))", "$[z]", "$((unclosed"]
        );
        assert!(arithmetic_segments("$(echo) ${x} $ (( 1 ))").is_empty());
    }

    #[test]
    fn assignment_words() {
        assert_eq!(assignment_parts("X=1"), Some(("X", "1")));
        assert_eq!(assignment_parts("X+=a"), Some(("X", "a")));
        assert_eq!(assignment_parts("a[i]=b=c"), Some(("a", "b=c")));
        assert_eq!(assignment_parts("1X=1"), None);
        assert_eq!(assignment_parts("a[b=c"), None);
        assert_eq!(assignment_parts("--opt=1"), None);
        assert!(is_integer("-12") && !is_integer("-") && !is_integer("1e3"));
    }
}
