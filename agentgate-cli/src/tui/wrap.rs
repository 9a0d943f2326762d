//! Cutting styled lines into rows of a width, at a space where the row
//! has one (the transcript's and the ask modal's text).

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

/// `line` cut into rows of at most `width` columns, at a space when the
/// row has one.
pub fn wrap(line: Line<'static>, width: usize) -> Vec<Line<'static>> {
    if line.width() <= width || width == 0 {
        return vec![line];
    }
    let cells: Vec<(char, Style)> = line
        .spans
        .iter()
        .flat_map(|s| {
            let style = line.style.patch(s.style);
            s.content.chars().map(move |c| (c, style))
        })
        .collect();
    let mut rows = Vec::new();
    let mut start = 0;
    while start < cells.len() {
        let (mut end, mut used, mut space) = (start, 0, None);
        while end < cells.len() {
            let w = cells[end].0.width().unwrap_or(0);
            if used + w > width {
                break;
            }
            if cells[end].0 == ' ' {
                space = Some(end);
            }
            used += w;
            end += 1;
        }
        if end < cells.len() {
            end = match space {
                Some(at) if at > start => at + 1,
                _ => end.max(start + 1),
            };
        }
        rows.push(regroup(&cells[start..end]));
        start = end;
    }
    rows
}

/// Cells back into spans of one style each.
fn regroup(cells: &[(char, Style)]) -> Line<'static> {
    let mut spans: Vec<Span<'static>> = Vec::new();
    for (c, style) in cells {
        match spans.last_mut() {
            Some(span) if span.style == *style => span.content.to_mut().push(*c),
            _ => spans.push(Span::styled(c.to_string(), *style)),
        }
    }
    Line::from(spans)
}

#[cfg(test)]
mod tests {
    use ratatui::text::Line;

    use super::wrap;

    #[test]
    fn long_lines_wrap_at_spaces_and_long_words_are_cut() {
        let rows = wrap(Line::from("the quick brown fox"), 10);
        let text: Vec<String> = rows.iter().map(|r| r.to_string()).collect();
        assert_eq!(text, ["the quick ", "brown fox"]);
        let rows = wrap(Line::from("abcdefghijkl"), 5);
        let text: Vec<String> = rows.iter().map(|r| r.to_string()).collect();
        assert_eq!(text, ["abcde", "fghij", "kl"]);
    }
}
