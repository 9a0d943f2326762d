//! Code blocks of `agent tui` highlighted by syntect (Sublime Text
//! grammars, the bundled set and themes, loaded once on first use). Only
//! foreground colours and bold/italic are taken from the theme, so the
//! terminal's own background shows through on light and dark terminals
//! alike; `AGENT_TUI_THEME=light` picks a theme drawn for light ones.

use std::sync::OnceLock;

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use syntect::easy::HighlightLines;
use syntect::highlighting::{FontStyle, Theme, ThemeSet};
use syntect::parsing::SyntaxSet;
use syntect::util::LinesWithEndings;

/// The grammars and the theme.
struct Assets {
    syntaxes: SyntaxSet,
    theme: Option<Theme>,
}

fn assets() -> &'static Assets {
    static ASSETS: OnceLock<Assets> = OnceLock::new();
    ASSETS.get_or_init(|| {
        let light = std::env::var("AGENT_TUI_THEME").is_ok_and(|v| v == "light");
        let name = if light {
            "InspiredGitHub"
        } else {
            "base16-ocean.dark"
        };
        Assets {
            syntaxes: SyntaxSet::load_defaults_newlines(),
            theme: ThemeSet::load_defaults().themes.remove(name),
        }
    })
}

/// The style a theme's style maps to: its foreground and font style.
fn style_of(style: syntect::highlighting::Style) -> Style {
    let fg = style.foreground;
    let mut out = Style::default().fg(Color::Rgb(fg.r, fg.g, fg.b));
    if style.font_style.contains(FontStyle::BOLD) {
        out = out.add_modifier(Modifier::BOLD);
    }
    if style.font_style.contains(FontStyle::ITALIC) {
        out = out.add_modifier(Modifier::ITALIC);
    }
    out
}

/// `code` (already terminal-safe) as lines highlighted for language
/// `lang` (a fence's info string: `rust`, `py`, `sh`...); plain when the
/// language is unknown or highlighting fails.
pub fn code_lines(code: &str, lang: &str) -> Vec<Line<'static>> {
    let plain = || {
        code.lines()
            .map(|l| Line::from(Span::styled(l.replace('\t', "    "), Style::default())))
            .collect()
    };
    let assets = assets();
    let token = lang.split([',', ' ']).next().unwrap_or("");
    let (Some(syntax), Some(theme)) = (
        assets.syntaxes.find_syntax_by_token(token),
        assets.theme.as_ref(),
    ) else {
        return plain();
    };
    let mut highlighter = HighlightLines::new(syntax, theme);
    let mut lines = Vec::new();
    for line in LinesWithEndings::from(code) {
        let Ok(ranges) = highlighter.highlight_line(line, &assets.syntaxes) else {
            return plain();
        };
        let spans: Vec<Span<'static>> = ranges
            .into_iter()
            .map(|(style, text)| {
                let text = text.trim_end_matches(['\n', '\r']).replace('\t', "    ");
                Span::styled(text, style_of(style))
            })
            .filter(|span| !span.content.is_empty())
            .collect();
        lines.push(Line::from(spans));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::code_lines;

    #[test]
    fn known_languages_are_coloured_and_unknown_ones_kept_plain() {
        let rust = code_lines("fn main() {\n    let x = 1;\n}\n", "rust");
        assert_eq!(rust.len(), 3);
        let colours: std::collections::HashSet<_> =
            rust[0].spans.iter().map(|s| s.style.fg).collect();
        assert!(colours.len() > 1, "{rust:?}");
        let text: String = rust[1].spans.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(text, "    let x = 1;");
        let plain = code_lines("a\tb", "no-such-language");
        assert_eq!(plain[0].spans[0].content, "a    b");
    }
}
