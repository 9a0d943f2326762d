//! Code blocks of `agent tui` highlighted by syntect (Sublime Text
//! grammars, the bundled set and themes, loaded once on first use). Only
//! foreground colours and bold/italic are taken from the theme, so the
//! terminal's own background shows through on light and dark terminals
//! alike; `agent tui --theme light` (or `AGENT_TUI_THEME=light`) picks a
//! theme drawn for light ones, `auto` reads the background from COLORFGBG.

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

/// Whether the light theme is used, once chosen.
static LIGHT: OnceLock<bool> = OnceLock::new();

/// Whether a terminal whose COLORFGBG is `colorfgbg` (`fg;bg` or
/// `fg;default;bg`, ANSI colour numbers) has a light background: as vim
/// reads it, any background but 0–6 and 8.
fn light_background(colorfgbg: Option<&str>) -> bool {
    let background = colorfgbg.and_then(|v| v.rsplit(';').next());
    match background.map(|b| b.trim().parse::<u8>()) {
        Some(Ok(colour)) => !matches!(colour, 0..=6 | 8),
        _ => false,
    }
}

/// Whether the light theme is wanted: `flag` (`--theme`) first, then
/// `env` (`AGENT_TUI_THEME`), with `auto` deciding by `colorfgbg`; dark
/// otherwise.
fn light_theme(flag: Option<&str>, env: Option<&str>, colorfgbg: Option<&str>) -> bool {
    match flag.or(env) {
        Some("light") => true,
        Some("auto") => light_background(colorfgbg),
        _ => false,
    }
}

/// Chooses the theme (before the first code block is drawn; later calls
/// change nothing): `flag` is `--theme`, the environment decides without
/// it.
pub fn choose_theme(flag: Option<&str>) {
    let env = std::env::var("AGENT_TUI_THEME").ok();
    let colorfgbg = std::env::var("COLORFGBG").ok();
    let _ = LIGHT.set(light_theme(flag, env.as_deref(), colorfgbg.as_deref()));
}

fn assets() -> &'static Assets {
    static ASSETS: OnceLock<Assets> = OnceLock::new();
    ASSETS.get_or_init(|| {
        choose_theme(None);
        let light = LIGHT.get().copied().unwrap_or(false);
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
    use super::{code_lines, light_background, light_theme};

    #[test]
    fn the_flag_wins_over_the_environment_and_auto_reads_colorfgbg() {
        assert!(light_theme(Some("light"), Some("dark"), None));
        assert!(!light_theme(Some("dark"), Some("light"), Some("0;15")));
        assert!(light_theme(None, Some("light"), None));
        assert!(!light_theme(None, None, Some("0;15")));
        assert!(light_theme(Some("auto"), None, Some("0;15")));
        assert!(light_theme(None, Some("auto"), Some("0;default;7")));
        assert!(!light_theme(Some("auto"), None, Some("15;0")));
        assert!(!light_theme(Some("auto"), None, None));
        assert!(!light_background(Some("15;8")));
        assert!(!light_background(Some("garbage")));
    }

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
