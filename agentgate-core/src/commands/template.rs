//! A command template's expansion, as opencode expands it (its
//! `session/prompt.ts` `command`): arguments first, then the `` !`cmd` ``
//! shell expansions, then the `@file` references. Each step is a plain
//! function over text; running the shell commands and reading the files is
//! the caller's, through the permission gate (see
//! [`Engine::run_tool`](crate::Engine::run_tool)).

use std::ops::Range;

/// Splits a command's argument text the way opencode does: a `"…"` or
/// `'…'` quoted run is one argument (its outer quotes removed), `[Image N]`
/// is one argument, anything else splits at whitespace and quotes. An
/// unmatched quote is dropped.
///
/// ```
/// use agentgate_core::commands::split_arguments;
/// assert_eq!(split_arguments(r#"fix "the bug" now"#), ["fix", "the bug", "now"]);
/// assert_eq!(split_arguments("  a\tb  "), ["a", "b"]);
/// ```
pub fn split_arguments(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if c.is_whitespace() {
            rest = &rest[c.len_utf8()..];
            continue;
        }
        if let Some(len) = image_token(rest) {
            out.push(rest[..len].to_string());
            rest = &rest[len..];
            continue;
        }
        if c == '"' || c == '\'' {
            match rest[1..].find(c) {
                Some(end) => {
                    out.push(rest[1..1 + end].to_string());
                    rest = &rest[end + 2..];
                }
                // No closing quote: this character starts no argument.
                None => rest = &rest[1..],
            }
            continue;
        }
        let len = rest
            .find(|ch: char| ch.is_whitespace() || ch == '"' || ch == '\'')
            .unwrap_or(rest.len());
        out.push(rest[..len].to_string());
        rest = &rest[len..];
    }
    out
}

/// The length of a leading `[Image N]` (case-insensitive, any whitespace
/// run between the word and the number).
fn image_token(text: &str) -> Option<usize> {
    let head = text.get(..6)?;
    if !head.eq_ignore_ascii_case("[image") {
        return None;
    }
    let after = &text[6..];
    let spaces = after.len() - after.trim_start().len();
    if spaces == 0 {
        return None;
    }
    let digits = after[spaces..]
        .bytes()
        .take_while(u8::is_ascii_digit)
        .count();
    if digits == 0 || after.as_bytes().get(spaces + digits) != Some(&b']') {
        return None;
    }
    Some(6 + spaces + digits + 1)
}

/// The `$N` placeholders of a template: each one's byte range and number
/// (`None` when the number does not fit a `usize`).
fn placeholders(template: &str) -> Vec<(Range<usize>, Option<usize>)> {
    let bytes = template.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'$' {
            let digits = bytes[i + 1..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
            if digits > 0 {
                let end = i + 1 + digits;
                out.push((i..end, template[i + 1..end].parse().ok()));
                i = end;
                continue;
            }
        }
        i += 1;
    }
    out
}

/// The placeholders a template uses, as opencode lists them for a
/// command's hints: the distinct `$N` in order, then `$ARGUMENTS`.
pub fn template_hints(template: &str) -> Vec<String> {
    let mut numbers: Vec<&str> = placeholders(template)
        .into_iter()
        .map(|(range, _)| &template[range])
        .collect();
    numbers.sort_unstable();
    numbers.dedup();
    let mut hints: Vec<String> = numbers.into_iter().map(str::to_string).collect();
    if template.contains("$ARGUMENTS") {
        hints.push("$ARGUMENTS".to_string());
    }
    hints
}

/// Puts a command's arguments into its template: `$1`, `$2`, … become the
/// arguments ([`split_arguments`]), the highest-numbered placeholder taking
/// every argument from its position on (joined with spaces), a placeholder
/// past the last argument (and `$0`) becoming empty; then `$ARGUMENTS`
/// becomes the argument text as typed. A template with neither gets the
/// argument text appended after a blank line.
///
/// ```
/// use agentgate_core::commands::expand_arguments;
/// assert_eq!(expand_arguments("Move $1 to $2", "a.rs src/b c"), "Move a.rs to src/b c");
/// assert_eq!(expand_arguments("Review $ARGUMENTS.", "src/auth.ts"), "Review src/auth.ts.");
/// assert_eq!(expand_arguments("Run the tests", "fast"), "Run the tests\n\nfast");
/// ```
pub fn expand_arguments(template: &str, arguments: &str) -> String {
    let args = split_arguments(arguments);
    let found = placeholders(template);
    let last = found
        .iter()
        .map(|(_, n)| n.unwrap_or(usize::MAX))
        .max()
        .unwrap_or(0);
    let mut out = String::with_capacity(template.len() + arguments.len());
    let mut at = 0;
    for (range, number) in &found {
        out.push_str(&template[at..range.start]);
        at = range.end;
        let Some(position) = number.filter(|n| *n > 0) else {
            continue;
        };
        let index = position - 1;
        if index >= args.len() {
            continue;
        }
        if position == last {
            out.push_str(&args[index..].join(" "));
        } else {
            out.push_str(&args[index]);
        }
    }
    out.push_str(&template[at..]);
    let uses_arguments = template.contains("$ARGUMENTS");
    let mut out = out.replace("$ARGUMENTS", arguments);
    if found.is_empty() && !uses_arguments && !arguments.trim().is_empty() {
        out.push_str("\n\n");
        out.push_str(arguments);
    }
    out
}

/// One `` !`command` `` of a template: where it is and the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellExpansion {
    /// The byte range of the whole `` !`…` `` in the template.
    pub range: Range<usize>,
    /// The command line between the backticks.
    pub command: String,
}

/// The `` !`command` `` expansions of a template, in order (a backquoted
/// run must not be empty).
///
/// ```
/// use agentgate_core::commands::shell_expansions;
/// let found = shell_expansions("Status: !`git status` and !`git diff`");
/// assert_eq!(found.len(), 2);
/// assert_eq!(found[0].command, "git status");
/// ```
pub fn shell_expansions(template: &str) -> Vec<ShellExpansion> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(found) = template[from..].find("!`") {
        let start = from + found;
        let body = start + 2;
        match template[body..].find('`') {
            Some(0) => from = body,
            Some(len) => {
                out.push(ShellExpansion {
                    range: start..body + len + 1,
                    command: template[body..body + len].to_string(),
                });
                from = body + len + 1;
            }
            None => break,
        }
    }
    out
}

/// Replaces each expansion of `template` (as [`shell_expansions`] found
/// them, in order) with the matching output.
pub fn replace_expansions(
    template: &str,
    expansions: &[ShellExpansion],
    outputs: &[String],
) -> String {
    let mut out = String::with_capacity(template.len());
    let mut at = 0;
    for (expansion, output) in expansions.iter().zip(outputs) {
        out.push_str(&template[at..expansion.range.start]);
        out.push_str(output);
        at = expansion.range.end;
    }
    out.push_str(&template[at..]);
    out
}

/// The `@file` references of a template, in order and without repeats, as
/// opencode finds them: an `@` not preceded by a word character or a
/// backtick, then an optional `.` and a name that ends at whitespace, a
/// backtick, a comma, or a `.` not followed by more of the name (so
/// `@src/main.rs.` names `src/main.rs`).
///
/// ```
/// use agentgate_core::commands::file_references;
/// assert_eq!(file_references("See @src/main.rs, and @.env. Mail a@b.c"), ["src/main.rs", ".env"]);
/// ```
pub fn file_references(template: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let stops = |c: char| c.is_whitespace() || c == '`' || c == ',' || c == '.';
    for (at, _) in template.match_indices('@') {
        let before = template[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '`') {
            continue;
        }
        let rest = &template[at + 1..];
        let mut len = 0;
        if rest.starts_with('.') {
            len = 1;
        }
        len += rest[len..].find(stops).unwrap_or(rest.len() - len);
        loop {
            let tail = &rest[len..];
            let Some(after_dot) = tail.strip_prefix('.') else {
                break;
            };
            let more = after_dot.find(stops).unwrap_or(after_dot.len());
            if more == 0 {
                break;
            }
            len += 1 + more;
        }
        let name = &rest[..len];
        if !name.is_empty() && !out.iter().any(|n| n == name) {
            out.push(name.to_string());
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn quotes_group_and_unmatched_quotes_drop() {
        assert_eq!(split_arguments(r#"'a b' "c""#), ["a b", "c"]);
        assert_eq!(split_arguments(r#"x"y z"#), ["x", "y", "z"]);
        assert_eq!(split_arguments("[Image 1] next"), ["[Image 1]", "next"]);
        assert_eq!(split_arguments(r#""""#), [""]);
    }

    #[test]
    fn the_last_placeholder_swallows_the_rest() {
        assert_eq!(expand_arguments("$1|$2|$3", "a b c d"), "a|b|c d");
        assert_eq!(expand_arguments("$2 then $1", "a b c"), "b c then a");
        assert_eq!(expand_arguments("[$1][$2]", "only"), "[only][]");
        assert_eq!(expand_arguments("$0 $1", "a b"), " a b");
        assert_eq!(expand_arguments("$1 / $ARGUMENTS", "x  y"), "x y / x  y");
        assert_eq!(expand_arguments("no placeholders", "  "), "no placeholders");
        assert_eq!(expand_arguments("$99999999999999999999999 $1", "a b"), " a");
    }

    #[test]
    fn hints_list_placeholders_once() {
        assert_eq!(
            template_hints("$2 $1 $2 $ARGUMENTS"),
            ["$1", "$2", "$ARGUMENTS"]
        );
    }

    #[test]
    fn shell_expansions_are_found_and_replaced() {
        let t = "a !`one` b !`` c !`two`";
        let found = shell_expansions(t);
        assert_eq!(
            found.iter().map(|f| f.command.as_str()).collect::<Vec<_>>(),
            ["one", "two"]
        );
        let out = replace_expansions(t, &found, &["1".into(), "2".into()]);
        assert_eq!(out, "a 1 b !`` c 2");
        assert!(shell_expansions("unterminated !`x").is_empty());
    }

    #[test]
    fn file_references_follow_opencode() {
        assert_eq!(file_references("`@x` @a,@b"), ["a", "b"]);
        assert_eq!(file_references("@dir/file.test.ts."), ["dir/file.test.ts"]);
        assert_eq!(file_references("@ alone @"), Vec::<String>::new());
        assert_eq!(file_references("@a @a"), ["a"]);
        // As opencode's pattern: a closing parenthesis is part of the name.
        assert_eq!(file_references("(@é.md)"), ["é.md)"]);
    }
}
