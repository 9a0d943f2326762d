//! How an ask is drawn on a terminal, so that nothing printed before it
//! can pass for one.
//!
//! A model can print any text, a fake "permission requested" card
//! included, but since everything it writes goes through the renderer of
//! [`terminal_text`](crate::terminal_text) it can never send an escape
//! sequence. An ask is therefore marked by what only an escape can draw:
//! its first line in inverse video, and an inverse-video bar in the first
//! column of every other line. A card without that bar is the model's
//! text. The frame begins with SGR 0 (reset every attribute) on a line of
//! its own, so that even bytes that reached the terminal some other way
//! (a child process writing to it directly) cannot leave it concealed or
//! black on black; the command and patterns inside it are in the
//! terminal's default colours. Off a terminal the ask is plain text.

use crate::terminal_text::ask_safe;

/// Resets every attribute (colours, inverse, concealed, ...).
const RESET: &str = "\x1b[0m";
/// Inverse video on.
const INVERSE: &str = "\x1b[7m";

/// `ask` (the lines of [`describe_ask`](crate::chat_cli::describe_ask))
/// as printed: framed when `styled` (stderr is a terminal), else as it
/// is. Each line is made terminal-safe again, with the characters drawn
/// as nothing written out too ([`ask_safe`]): the frame's escapes are the
/// only ones in the result, and what is shown is every character of what
/// is approved.
pub fn framed(ask: &str, styled: bool) -> String {
    let ask = ask_safe(ask);
    if !styled {
        return ask;
    }
    let mut out = String::with_capacity(ask.len() + 64);
    for (n, line) in ask.lines().enumerate() {
        if n == 0 {
            out.push_str(&format!("{RESET}{INVERSE} {line} {RESET}\n"));
        } else {
            out.push_str(&format!("{INVERSE} {RESET} {line}\n"));
        }
    }
    out.pop();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_terminal_gets_the_frame_and_a_pipe_plain_text() {
        let ask = "permission requested: bash\n  patterns: rm -rf src\n  [o] once";
        assert_eq!(framed(ask, false), ask);
        assert_eq!(
            framed(ask, true),
            "\x1b[0m\x1b[7m permission requested: bash \x1b[0m\n\
             \x1b[7m \x1b[0m   patterns: rm -rf src\n\
             \x1b[7m \x1b[0m   [o] once"
        );
        // An escape inside the ask's text is written out, not drawn.
        assert_eq!(
            framed("permission requested: \x1b[8mx", true),
            "\x1b[0m\x1b[7m permission requested: \\u{1b}[8mx \x1b[0m"
        );
        // So is a character drawn as nothing: the command shown is the
        // command approved, character for character.
        assert_eq!(
            framed("  command: rm -rf s\u{200b}rc\u{e0041}", false),
            "  command: rm -rf s\\u{200b}rc\\u{e0041}"
        );
        // Prose keeps its joiners; asks do not.
        assert_eq!(
            crate::terminal_text::terminal_safe("👩\u{200d}💻"),
            "👩\u{200d}💻"
        );
    }
}
