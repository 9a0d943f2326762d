//! Words as bash will pass them to a program: quote removal, backslash
//! escapes, `$'…'` strings, brace expansion of literal words, and which
//! parts bash expands at run time (variables, command substitutions), so
//! the bash scanner matches rules against what is executed rather than
//! against how it was spelled.
//!
//! Also the two text passes bash and tree-sitter need to agree: removing
//! `\`-newline continuations, and hiding characters tree-sitter treats as
//! blanks but bash does not (`\r`, `\v`, `\f`, Unicode spaces).

/// At most this many words come out of brace-expanding one word; a word
/// that would expand to more is treated as dynamic.
pub const MAX_BRACE_WORDS: usize = 256;

/// One word after bash's expansions that can be done without running
/// anything.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Word {
    /// The text after quote removal; run-time expansions (`$x`, `${x}`,
    /// `$(…)`, backticks) are kept as written.
    pub text: String,
    /// Whether part of the word is only known at run time (an expansion,
    /// `~user`, or a brace expansion too large to follow).
    pub dynamic: bool,
    /// Byte offset in `text` of the first unquoted glob character
    /// (`*`, `?`, `[`), if any.
    pub glob: Option<usize>,
}

/// A piece of a word while it is expanded.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    /// A character; `quoted` ones are never special.
    Char { c: char, quoted: bool },
    /// A run-time expansion, as written.
    Expansion(String),
    /// An unquoted `$IFS` / `${IFS}`: with the default IFS, a word break.
    Split,
    /// Where a quoted string started: `""` is still a (empty) word.
    Quote,
}

/// The words bash makes of one shell word (`raw` as written): usually one,
/// several after brace expansion (`{rm,-f,x}`) or `$IFS`, none when an
/// unquoted word expands to nothing.
///
/// ```
/// use agentgate_tools::bash_scan::words_of;
/// let texts = |raw| words_of(raw).into_iter().map(|w| w.text).collect::<Vec<_>>();
/// assert_eq!(texts("'r'\"m\""), ["rm"]);
/// assert_eq!(texts("\\rm"), ["rm"]);
/// assert_eq!(texts("{rm,-f,x}"), ["rm", "-f", "x"]);
/// assert_eq!(texts("$'\\x72m'"), ["rm"]);
/// assert_eq!(texts("{/out/s,}"), ["/out/s"]);
/// assert!(words_of("$HOME/x")[0].dynamic);
/// ```
pub fn words_of(raw: &str) -> Vec<Word> {
    let pieces = lex(raw);
    let (expanded, overflow) = expand_braces(pieces);
    let mut words = Vec::new();
    for pieces in expanded {
        let mut current: Vec<Piece> = Vec::new();
        let mut split_any = false;
        for piece in pieces {
            if piece == Piece::Split {
                split_any = true;
                if !current.is_empty() {
                    words.push(to_word(&current, true));
                }
                current.clear();
            } else {
                current.push(piece);
            }
        }
        // An unquoted word that expands to nothing disappears; `""` stays.
        if !current.is_empty() {
            words.push(to_word(&current, split_any));
        }
    }
    if overflow {
        for word in &mut words {
            word.dynamic = true;
        }
    }
    words
}

fn to_word(pieces: &[Piece], dynamic: bool) -> Word {
    let mut word = Word {
        dynamic,
        ..Word::default()
    };
    for (i, piece) in pieces.iter().enumerate() {
        match piece {
            Piece::Char { c, quoted } => {
                if !quoted && word.glob.is_none() && matches!(c, '*' | '?' | '[') {
                    word.glob = Some(word.text.len());
                }
                // `~user`, `~+`, `~-` at the start: a directory only known
                // at run time.
                if i == 0
                    && *c == '~'
                    && !quoted
                    && matches!(
                        pieces.get(1),
                        Some(Piece::Char { c, quoted: false }) if *c != '/'
                    )
                {
                    word.dynamic = true;
                }
                word.text.push(*c);
            }
            Piece::Expansion(text) => {
                word.dynamic = true;
                word.text.push_str(text);
            }
            Piece::Split => word.text.push(' '),
            Piece::Quote => {}
        }
    }
    word
}

/// Splits `raw` into pieces: quotes removed, escapes applied, expansions
/// kept whole.
fn lex(raw: &str) -> Vec<Piece> {
    let chars: Vec<char> = raw.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let lit = |c: char, quoted: bool| Piece::Char { c, quoted };
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' => {
                match chars.get(i + 1) {
                    Some('\n') => {}
                    Some(&next) => out.push(lit(next, true)),
                    None => out.push(lit('\\', true)),
                }
                i += 2;
            }
            '\'' => {
                out.push(Piece::Quote);
                i += 1;
                while i < chars.len() && chars[i] != '\'' {
                    out.push(lit(chars[i], true));
                    i += 1;
                }
                i += 1;
            }
            '"' => {
                out.push(Piece::Quote);
                i = lex_double(&chars, i + 1, &mut out);
            }
            '$' if chars.get(i + 1) == Some(&'\'') => {
                out.push(Piece::Quote);
                i = lex_ansi_c(&chars, i + 2, &mut out);
            }
            '$' if chars.get(i + 1) == Some(&'"') => {
                out.push(Piece::Quote);
                i = lex_double(&chars, i + 2, &mut out);
            }
            '<' | '>' if chars.get(i + 1) == Some(&'(') => {
                // A process substitution: a file name only known at run time.
                let end = matching(&chars, i + 1, '(', ')');
                out.push(Piece::Expansion(chars[i..end].iter().collect()));
                i = end;
            }
            '$' | '`' => match expansion_end(&chars, i) {
                Some(end) => {
                    let text: String = chars[i..end].iter().collect();
                    if text == "$IFS" || text == "${IFS}" {
                        out.push(Piece::Split);
                    } else {
                        out.push(Piece::Expansion(text));
                    }
                    i = end;
                }
                None => {
                    out.push(lit(c, false));
                    i += 1;
                }
            },
            _ => {
                out.push(lit(c, false));
                i += 1;
            }
        }
    }
    out
}

/// Lexes a double-quoted string starting after its `"`; returns the index
/// after the closing quote.
fn lex_double(chars: &[char], mut i: usize, out: &mut Vec<Piece>) -> usize {
    while i < chars.len() {
        match chars[i] {
            '"' => return i + 1,
            '\\' => match chars.get(i + 1) {
                Some('\n') => i += 2,
                Some(&next) if matches!(next, '$' | '`' | '"' | '\\') => {
                    out.push(Piece::Char {
                        c: next,
                        quoted: true,
                    });
                    i += 2;
                }
                _ => {
                    out.push(Piece::Char {
                        c: '\\',
                        quoted: true,
                    });
                    i += 1;
                }
            },
            '$' | '`' => match expansion_end(chars, i) {
                Some(end) => {
                    out.push(Piece::Expansion(chars[i..end].iter().collect()));
                    i = end;
                }
                None => {
                    out.push(Piece::Char {
                        c: chars[i],
                        quoted: true,
                    });
                    i += 1;
                }
            },
            c => {
                out.push(Piece::Char { c, quoted: true });
                i += 1;
            }
        }
    }
    i
}

/// Lexes `$'…'` starting after its `'`: C escapes decoded.
fn lex_ansi_c(chars: &[char], mut i: usize, out: &mut Vec<Piece>) -> usize {
    let mut push = |c: char| out.push(Piece::Char { c, quoted: true });
    while i < chars.len() {
        let c = chars[i];
        if c == '\'' {
            return i + 1;
        }
        if c != '\\' {
            push(c);
            i += 1;
            continue;
        }
        let Some(&e) = chars.get(i + 1) else {
            push('\\');
            return i + 1;
        };
        i += 2;
        let simple = match e {
            'a' => Some('\u{7}'),
            'b' => Some('\u{8}'),
            'e' | 'E' => Some('\u{1b}'),
            'f' => Some('\u{c}'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\u{b}'),
            '\\' | '\'' | '"' | '?' => Some(e),
            _ => None,
        };
        if let Some(c) = simple {
            push(c);
            continue;
        }
        let (radix, max) = match e {
            'x' => (16, 2),
            'u' => (16, 4),
            'U' => (16, 8),
            '0'..='7' => {
                i -= 1;
                (8, 3)
            }
            'c' => {
                if let Some(&ctl) = chars.get(i) {
                    push(char::from((ctl as u8) & 0x1f));
                    i += 1;
                }
                continue;
            }
            other => {
                push('\\');
                push(other);
                continue;
            }
        };
        let start = i;
        while i < chars.len() && i - start < max && chars[i].is_digit(radix) {
            i += 1;
        }
        let digits: String = chars[start..i].iter().collect();
        match u32::from_str_radix(&digits, radix)
            .ok()
            .and_then(char::from_u32)
        {
            Some(c) => push(c),
            None => {
                push('\\');
                push(e);
            }
        }
    }
    i
}

/// The end (exclusive) of the expansion starting at `chars[i]` (`$` or a
/// backtick), or `None` when it is a literal `$`.
fn expansion_end(chars: &[char], i: usize) -> Option<usize> {
    if chars[i] == '`' {
        let mut j = i + 1;
        while j < chars.len() {
            match chars[j] {
                '\\' => j += 2,
                '`' => return Some(j + 1),
                _ => j += 1,
            }
        }
        return Some(chars.len());
    }
    match chars.get(i + 1)? {
        '{' => Some(matching(chars, i + 1, '{', '}')),
        '(' => Some(matching(chars, i + 1, '(', ')')),
        '[' => Some(matching(chars, i + 1, '[', ']')),
        c if c.is_ascii_alphabetic() || *c == '_' => {
            let mut j = i + 1;
            while j < chars.len() && (chars[j].is_ascii_alphanumeric() || chars[j] == '_') {
                j += 1;
            }
            Some(j)
        }
        c if c.is_ascii_digit() || "@*#?$!-".contains(*c) => Some(i + 2),
        _ => None,
    }
}

/// The index after the bracket matching `chars[open]`, skipping quoted
/// text; the end of input when unbalanced.
fn matching(chars: &[char], open: usize, left: char, right: char) -> usize {
    let mut depth = 0usize;
    let mut j = open;
    while j < chars.len() {
        let c = chars[j];
        match c {
            '\\' => {
                j += 2;
                continue;
            }
            '\'' => {
                j += 1;
                while j < chars.len() && chars[j] != '\'' {
                    j += 1;
                }
            }
            '"' => {
                j += 1;
                while j < chars.len() && chars[j] != '"' {
                    if chars[j] == '\\' {
                        j += 1;
                    }
                    j += 1;
                }
            }
            _ if c == left => depth += 1,
            _ if c == right => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return j + 1;
                }
            }
            _ => {}
        }
        j += 1;
    }
    chars.len()
}

fn is_char(piece: &Piece, want: char) -> bool {
    matches!(piece, Piece::Char { c, quoted: false } if *c == want)
}

/// Brace-expands `pieces` (bash order: left to right, alternatives
/// recursively), at most [`MAX_BRACE_WORDS`] results; the flag says the
/// cap was hit (the unexpanded word is returned then).
fn expand_braces(pieces: Vec<Piece>) -> (Vec<Vec<Piece>>, bool) {
    let mut done = Vec::new();
    let mut todo = vec![pieces.clone()];
    while let Some(word) = todo.pop() {
        match expand_first(&word) {
            Some(alternatives) => {
                // Reverse so the first alternative is expanded first.
                todo.extend(alternatives.into_iter().rev());
                if todo.len() + done.len() > MAX_BRACE_WORDS {
                    return (vec![pieces], true);
                }
            }
            None => done.push(word),
        }
    }
    (done, false)
}

/// The words of the first expandable brace group of `word`, or `None`.
fn expand_first(word: &[Piece]) -> Option<Vec<Vec<Piece>>> {
    let mut start = 0;
    while start < word.len() {
        if !is_char(&word[start], '{') {
            start += 1;
            continue;
        }
        let mut depth = 0usize;
        let mut commas = Vec::new();
        let mut close = None;
        for (j, piece) in word.iter().enumerate().skip(start) {
            if is_char(piece, '{') {
                depth += 1;
            } else if is_char(piece, '}') {
                depth -= 1;
                if depth == 0 {
                    close = Some(j);
                    break;
                }
            } else if depth == 1 && is_char(piece, ',') {
                commas.push(j);
            }
        }
        let Some(close) = close else {
            start += 1;
            continue;
        };
        let prefix = &word[..start];
        let suffix = &word[close + 1..];
        let join = |middle: &[Piece]| {
            let mut out = prefix.to_vec();
            out.extend_from_slice(middle);
            out.extend_from_slice(suffix);
            out
        };
        if !commas.is_empty() {
            let mut bounds = vec![start];
            bounds.extend(&commas);
            bounds.push(close);
            return Some(
                bounds
                    .windows(2)
                    .map(|pair| join(&word[pair[0] + 1..pair[1]]))
                    .collect(),
            );
        }
        if let Some(items) = sequence(&word[start + 1..close]) {
            return Some(
                items
                    .into_iter()
                    .map(|item| {
                        let middle: Vec<Piece> = item
                            .chars()
                            .map(|c| Piece::Char { c, quoted: true })
                            .collect();
                        join(&middle)
                    })
                    .collect(),
            );
        }
        start += 1;
    }
    None
}

/// The items of a sequence expression `a..e` / `1..10..2`, if `inner` is
/// one (at most [`MAX_BRACE_WORDS`] + 1 items, so the caller sees the cap).
fn sequence(inner: &[Piece]) -> Option<Vec<String>> {
    let mut text = String::new();
    for piece in inner {
        match piece {
            Piece::Char { c, quoted: false } => text.push(*c),
            _ => return None,
        }
    }
    let parts: Vec<&str> = text.split("..").collect();
    if !(2..=3).contains(&parts.len()) {
        return None;
    }
    let step: i64 = match parts.get(2) {
        Some(step) => step.parse::<i64>().ok()?.checked_abs()?.max(1),
        None => 1,
    };
    let cap = MAX_BRACE_WORDS + 1;
    if let (Ok(a), Ok(b)) = (parts[0].parse::<i64>(), parts[1].parse::<i64>()) {
        let mut out = Vec::new();
        let mut n = a;
        while out.len() < cap && ((a <= b && n <= b) || (a > b && n >= b)) {
            out.push(n.to_string());
            let next = if a <= b {
                n.checked_add(step)
            } else {
                n.checked_sub(step)
            };
            let Some(next) = next else { break };
            n = next;
        }
        return Some(out);
    }
    let (mut a, mut b) = (parts[0].chars(), parts[1].chars());
    let (Some(a), None, Some(b), None) = (a.next(), a.next(), b.next(), b.next()) else {
        return None;
    };
    if !(a.is_ascii_alphabetic() && b.is_ascii_alphabetic()) {
        return None;
    }
    let (a, b) = (a as i64, b as i64);
    let mut out = Vec::new();
    let mut n = a;
    while out.len() < cap && ((a <= b && n <= b) || (a > b && n >= b)) {
        out.push(char::from(u8::try_from(n).ok()?).to_string());
        n = if a <= b { n + step } else { n - step };
    }
    Some(out)
}

/// Whether bash treats `c` as part of a word while tree-sitter's grammar
/// skips it as a blank.
fn blank_only_for_tree_sitter(c: char) -> bool {
    c.is_whitespace() && !matches!(c, ' ' | '\t' | '\n')
}

/// `command` as tree-sitter should parse it, with the same byte offsets so
/// they still index `command`:
///
/// - every character tree-sitter would skip as a blank but bash keeps in a
///   word (`\r`, `\v`, `\f`, Unicode spaces) becomes as many `.` bytes, so
///   the parse has bash's word boundaries;
/// - every other non-ASCII character becomes as many `x` bytes (a word
///   character to both). tree-sitter-bash's scanner passes the lookahead
///   code point to C's `isdigit`, whose table covers only -128..=255: a
///   higher code point after `{` read far past it and crashed the process.
///   The words themselves are always read from `command`, so patterns keep
///   the text as written. Two different characters masking alike can only
///   end a heredoc *earlier* than bash does (its delimiter still matches
///   itself), which shows more commands, never fewer.
pub fn for_tree_sitter(command: &str) -> String {
    if command.is_ascii() && !command.chars().any(blank_only_for_tree_sitter) {
        return command.to_string();
    }
    let mut out = String::with_capacity(command.len());
    for c in command.chars() {
        let mask = if blank_only_for_tree_sitter(c) {
            Some('.')
        } else if !c.is_ascii() {
            Some('x')
        } else {
            None
        };
        match mask {
            Some(m) => (0..c.len_utf8()).for_each(|_| out.push(m)),
            None => out.push(c),
        }
    }
    out
}

/// A token of [`split_simple_commands`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Token {
    /// A shell word as written.
    Word(String),
    /// A redirection operator (`>`, `>>`, `<`, `2>`, `&>` …).
    Redirect(String),
}

/// A lexical split of `command` into simple commands (on unquoted `;`,
/// `&`, `|`, newlines, parentheses, braces and backticks), each a list of
/// tokens. Used when tree-sitter reports a syntax error, so every command
/// bash may still run is seen.
pub fn split_simple_commands(command: &str) -> Vec<Vec<Token>> {
    let chars: Vec<char> = command.chars().collect();
    let mut commands = Vec::new();
    let mut current: Vec<Token> = Vec::new();
    let mut word = String::new();
    let mut i = 0;
    let flush_word = |word: &mut String, current: &mut Vec<Token>| {
        if !word.is_empty() {
            current.push(Token::Word(std::mem::take(word)));
        }
    };
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' => {
                word.push(c);
                if let Some(&next) = chars.get(i + 1) {
                    word.push(next);
                }
                i += 2;
            }
            '\'' | '"' => {
                let end = quoted_end(&chars, i);
                word.extend(&chars[i..end]);
                i = end;
            }
            '$' if chars.get(i + 1) == Some(&'{') => {
                let end = matching(&chars, i + 1, '{', '}');
                word.extend(&chars[i..end]);
                i = end;
            }
            ' ' | '\t' => {
                flush_word(&mut word, &mut current);
                i += 1;
            }
            '#' if word.is_empty() => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '{' | '}'
                if !(word.is_empty()
                    && chars
                        .get(i + 1)
                        .is_none_or(|n| n.is_whitespace() || (c == '}' && *n == ';'))) =>
            {
                word.push(c);
                i += 1;
            }
            ';' | '&' | '|' | '\n' | '(' | ')' | '`' | '{' | '}' => {
                if c == '&' && chars.get(i + 1) == Some(&'>') {
                    flush_word(&mut word, &mut current);
                    let op = if chars.get(i + 2) == Some(&'>') {
                        "&>>"
                    } else {
                        "&>"
                    };
                    current.push(Token::Redirect(op.to_string()));
                    i += op.len();
                    continue;
                }
                // `$(` ends the word before it; the substitution's
                // commands become commands of their own.
                if c == '(' && word.ends_with('$') {
                    word.pop();
                }
                flush_word(&mut word, &mut current);
                if !current.is_empty() {
                    commands.push(std::mem::take(&mut current));
                }
                i += 1;
            }
            '<' | '>' => {
                let fd = word.chars().all(|c| c.is_ascii_digit());
                if !fd {
                    flush_word(&mut word, &mut current);
                }
                let mut op = std::mem::take(&mut word);
                while i < chars.len() && matches!(chars[i], '<' | '>' | '&' | '|') {
                    op.push(chars[i]);
                    i += 1;
                }
                current.push(Token::Redirect(op));
            }
            _ => {
                word.push(c);
                i += 1;
            }
        }
    }
    flush_word(&mut word, &mut current);
    if !current.is_empty() {
        commands.push(current);
    }
    commands
}

/// The index after the quoted string starting at `chars[i]` (`'` or `"`).
fn quoted_end(chars: &[char], i: usize) -> usize {
    let quote = chars[i];
    let mut j = i + 1;
    while j < chars.len() {
        if quote == '"' && chars[j] == '\\' {
            j += 2;
            continue;
        }
        if chars[j] == quote {
            return j + 1;
        }
        j += 1;
    }
    chars.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(raw: &str) -> Vec<String> {
        words_of(raw).into_iter().map(|w| w.text).collect()
    }

    #[test]
    fn quote_removal_and_escapes() {
        assert_eq!(texts("'rm'"), ["rm"]);
        assert_eq!(texts("r\"m\""), ["rm"]);
        assert_eq!(texts("\\rm"), ["rm"]);
        assert_eq!(texts("\"a \\\"b\\\" \\x\""), ["a \"b\" \\x"]);
        assert_eq!(texts("$'r\\155'"), ["rm"]);
        assert_eq!(texts("$'\\u0072m'"), ["rm"]);
        assert_eq!(texts("\"\""), [""]);
        assert_eq!(texts("\\/out/s"), ["/out/s"]);
    }

    #[test]
    fn braces() {
        assert_eq!(texts("{rm,-f,x}"), ["rm", "-f", "x"]);
        assert_eq!(texts("a{b,c{d,e}}f"), ["abf", "acdf", "acef"]);
        assert_eq!(texts("{}"), ["{}"]);
        assert_eq!(texts("'{a,b}'"), ["{a,b}"]);
        assert_eq!(texts("{r..r}m"), ["rm"]);
        assert_eq!(texts("x{1..3}"), ["x1", "x2", "x3"]);
        assert_eq!(texts("{a,}"), ["a"]);
        assert_eq!(texts("{1..2..9223372036854775807}"), ["1"]);
        assert_eq!(
            texts("{9223372036854775806..9223372036854775807}"),
            ["9223372036854775806", "9223372036854775807"]
        );
        let many = words_of("{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}");
        assert_eq!(many.len(), 1);
        assert!(many[0].dynamic);
    }

    #[test]
    fn expansions() {
        let words = words_of("rm${IFS}-f${IFS}x");
        let texts: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
        assert_eq!(texts, ["rm", "-f", "x"]);
        assert!(words.iter().all(|w| w.dynamic));
        assert!(words_of("\"$(echo rm)\"")[0].dynamic);
        assert!(words_of("~bob/x")[0].dynamic);
        assert!(!words_of("~/x")[0].dynamic);
        assert_eq!(words_of("/out/*.txt")[0].glob, Some(5));
        assert_eq!(words_of("'*'")[0].glob, None);
    }

    #[test]
    fn text_passes() {
        assert_eq!(for_tree_sitter("true\r# ;"), "true.# ;");
        assert_eq!(for_tree_sitter("a\u{a0}b").len(), "a\u{a0}b".len());
    }

    #[test]
    fn lexical_split() {
        let commands =
            split_simple_commands("cat <<E''OF\nhi\nEOF\nrm -f x; a | b $(c d) 2>/out/f");
        let first_words: Vec<String> = commands
            .iter()
            .filter_map(|c| match c.first() {
                Some(Token::Word(w)) => Some(w.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(first_words, ["cat", "hi", "EOF", "rm", "a", "b", "c"]);
        assert!(
            commands
                .iter()
                .any(|c| c.contains(&Token::Redirect("2>".into())))
        );
    }
}
