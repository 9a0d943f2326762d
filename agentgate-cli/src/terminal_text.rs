//! The one renderer for text that did not come from the program itself:
//! what a model writes (its answer and reasoning, streamed in pieces), what
//! a tool printed, session titles, a server's text in `agent attach`, MCP
//! content, and error messages that carry any of these.
//!
//! A terminal acts on a character only when it is a control: its parser
//! leaves plain text for an escape sequence (CSI, OSC including OSC 52's
//! clipboard writes, DCS, APC, PM, SOS) only at a C0 control, DEL or a C1
//! control (U+0080–U+009F, which a terminal may take in either its 8-bit
//! or its UTF-8 form). So every such character (general category Cc) is
//! written out as a visible `\u{…}` escape, and with it the whole sequence
//! it would have started is shown as text; newline and tab are kept, and
//! so is a carriage return directly before a newline (a Windows line
//! end). A lone carriage return, backspace and DEL are written out too:
//! they draw over text already shown. The Unicode bidirectional controls
//! (which reorder what is shown, as in "Trojan Source") and the line and
//! paragraph separators are written out as well. Everything else, Unicode
//! included, is shown as it is.
//!
//! The rule is per character, so a sequence split across two pieces of a
//! stream cannot slip through: its escape character is written out in
//! whichever piece holds it. The one state carried between pieces is a
//! carriage return at a piece's end, held until the next piece says
//! whether a newline follows ([`StreamText`]).
//!
//! [`Untrusted`] wraps such text so that it can only be printed through
//! this renderer; the program's own escapes (the ask's frame, the
//! progress line) come only from its own code.

use std::fmt;

/// Whether `c` is shown escaped: a control character (C0, DEL, C1) other
/// than newline and tab, a bidirectional formatting character, or a line
/// or paragraph separator.
fn hidden_effect(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(
            c,
            '\u{202A}'..='\u{202E}'
                | '\u{2066}'..='\u{2069}'
                | '\u{200E}'
                | '\u{200F}'
                | '\u{061C}'
                | '\u{2028}'
                | '\u{2029}'
        )
}

fn escape(c: char, out: &mut String) {
    out.push_str(&format!("\\u{{{:x}}}", c as u32));
}

/// `text` with every character that could change how the terminal shows
/// the rest written as a visible `\u{…}` escape (a `\r\n` line end is
/// shown as a newline).
pub fn terminal_safe(text: &str) -> String {
    let mut stream = StreamText::default();
    let mut out = stream.push(text);
    out.push_str(stream.finish());
    out
}

/// The renderer for text that arrives in pieces (a model's streamed
/// deltas): [`push`](Self::push) each piece, [`finish`](Self::finish) when
/// the text ends or other output follows. The pieces' output joined is
/// [`terminal_safe`] of the pieces joined, however the text was split.
#[derive(Debug, Default, Clone)]
pub struct StreamText {
    /// A carriage return ended the last piece: shown once the next piece
    /// says whether a newline follows it.
    pending_cr: bool,
}

impl StreamText {
    /// The terminal-safe form of the next piece.
    pub fn push(&mut self, piece: &str) -> String {
        let mut out = String::with_capacity(piece.len());
        for c in piece.chars() {
            if std::mem::take(&mut self.pending_cr) && c != '\n' {
                escape('\r', &mut out);
            }
            match c {
                '\r' => self.pending_cr = true,
                c if hidden_effect(c) => escape(c, &mut out),
                c => out.push(c),
            }
        }
        out
    }

    /// What is still held back (a final carriage return, written out).
    pub fn finish(&mut self) -> &'static str {
        if std::mem::take(&mut self.pending_cr) {
            "\\u{d}"
        } else {
            ""
        }
    }
}

/// The characters a terminal draws as nothing (Unicode's default-ignorable
/// code points: format characters such as zero-width spaces and joiners,
/// soft hyphens, variation selectors, tag characters, invisible fillers).
/// Harmless in prose, but in an ask they would make the command shown
/// differ from the command approved, so there they are written out.
const INVISIBLE: [(char, char); 24] = [
    ('\u{00AD}', '\u{00AD}'),
    ('\u{034F}', '\u{034F}'),
    ('\u{0600}', '\u{0605}'),
    ('\u{061C}', '\u{061C}'),
    ('\u{06DD}', '\u{06DD}'),
    ('\u{070F}', '\u{070F}'),
    ('\u{115F}', '\u{1160}'),
    ('\u{17B4}', '\u{17B5}'),
    ('\u{180B}', '\u{180F}'),
    ('\u{200B}', '\u{200F}'),
    ('\u{202A}', '\u{202E}'),
    ('\u{2060}', '\u{206F}'),
    ('\u{3164}', '\u{3164}'),
    ('\u{FE00}', '\u{FE0F}'),
    ('\u{FEFF}', '\u{FEFF}'),
    ('\u{FFA0}', '\u{FFA0}'),
    ('\u{FFF0}', '\u{FFFB}'),
    ('\u{110BD}', '\u{110BD}'),
    ('\u{110CD}', '\u{110CD}'),
    ('\u{13430}', '\u{1343F}'),
    ('\u{1BCA0}', '\u{1BCA3}'),
    ('\u{1D173}', '\u{1D17A}'),
    ('\u{E0000}', '\u{E0FFF}'),
    ('\u{0890}', '\u{0891}'),
];

/// Whether `c` is drawn as nothing ([`INVISIBLE`]).
fn invisible(c: char) -> bool {
    INVISIBLE
        .iter()
        .any(|(from, to)| (*from..=*to).contains(&c))
}

/// [`terminal_safe`], and every character drawn as nothing written out
/// too: for an ask, whose every character is approved.
pub fn ask_safe(text: &str) -> String {
    let safe = terminal_safe(text);
    if !safe.chars().any(invisible) {
        return safe;
    }
    let mut out = String::with_capacity(safe.len() + 16);
    for c in safe.chars() {
        if invisible(c) {
            escape(c, &mut out);
        } else {
            out.push(c);
        }
    }
    out
}

/// A value whose text did not come from the program (a model's, a
/// project's, a server's): its only `Display` is [`terminal_safe`], so
/// formatting it into a line cannot carry a control to the terminal.
pub struct Untrusted<T: fmt::Display>(T);

impl<T: fmt::Display> Untrusted<T> {
    /// Wraps `value` (a string, an error holding foreign text).
    pub fn new(value: T) -> Self {
        Untrusted(value)
    }
}

impl<T: fmt::Display> fmt::Display for Untrusted<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&terminal_safe(&self.0.to_string()))
    }
}

impl<T: fmt::Display> fmt::Debug for Untrusted<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Untrusted({self})")
    }
}

/// `line` of JSON (`serde_json`'s text, which escapes C0 controls in
/// strings but not DEL, C1 or the bidirectional controls) with those
/// written as `\uXXXX` escapes too: the same JSON value, safe on a
/// terminal. They can only stand inside strings, so the result parses to
/// the same value. On any other text it is a renderer too (controls
/// written out, in JSON's notation): `agent`'s table outputs use it.
pub fn json_safe(line: &str) -> String {
    if !line.chars().any(hidden_effect) {
        return line.to_string();
    }
    let mut out = String::with_capacity(line.len() + 16);
    for c in line.chars() {
        if hidden_effect(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests;
