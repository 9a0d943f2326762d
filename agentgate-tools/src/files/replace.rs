//! The edit tool's string replacement (§17): a cascade of replacers, from
//! the exact match to increasingly tolerant ones, each proposing candidate
//! substrings of the file that stand for `old`.
//!
//! The first candidate that occurs in the content is used when it is unique
//! (or when replacing all); a candidate spanning far more than `old` is
//! refused instead of risking an unintended large replacement.

/// Why [`replace`] made no replacement. The messages are opencode's, word
/// for word, because models are trained on them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EditError {
    /// `old` and `new` are the same string.
    #[error("No changes to apply: oldString and newString are identical.")]
    Identical,
    /// `old` is empty (only allowed when creating a file).
    #[error(
        "oldString cannot be empty when editing an existing file. Provide the exact text to replace, or use write for an intentional full-file replacement."
    )]
    EmptyOldString,
    /// No replacer found `old` in the content.
    #[error(
        "Could not find oldString in the file. It must match exactly, including whitespace, indentation, and line endings."
    )]
    NotFound,
    /// Every candidate occurs more than once.
    #[error(
        "Found multiple matches for oldString. Provide more surrounding context to make the match unique."
    )]
    MultipleMatches,
    /// A fuzzy replacer matched a span much larger than `old`.
    #[error(
        "Refusing replacement because the matched span is much larger than oldString. Re-read the file and provide the full exact oldString for the intended replacement."
    )]
    DisproportionateSpan,
}

/// Similarity a block-anchor candidate's middle lines need (§17).
const BLOCK_ANCHOR_THRESHOLD: f64 = 0.65;

/// Replaces `old` by `new` in `content` (§17).
///
/// Replacers, in order: simple, line-trimmed, block-anchor, whitespace-
/// normalised, indentation-flexible, escape-normalised, trimmed-boundary,
/// context-aware, multi-occurrence. With `replace_all` every occurrence of
/// the first matching candidate is replaced and `$&`, `$$`, `` $` `` and
/// `$'` in `new` are expanded as JavaScript's `String.replaceAll` does;
/// otherwise the candidate must occur exactly once and `new` is inserted
/// as is.
///
/// ```
/// use agentgate_tools::{replace, EditError};
/// assert_eq!(replace("let a = 1;\n", "let   a = 1;", "let a = 2;", false).unwrap(), "let a = 2;\n");
/// assert_eq!(replace("a a", "a", "b", false), Err(EditError::MultipleMatches));
/// ```
pub fn replace(
    content: &str,
    old: &str,
    new: &str,
    replace_all: bool,
) -> Result<String, EditError> {
    if old == new {
        return Err(EditError::Identical);
    }
    if old.is_empty() {
        return Err(EditError::EmptyOldString);
    }
    let replacers: [fn(&str, &str) -> Vec<String>; 9] = [
        simple,
        line_trimmed,
        block_anchor,
        whitespace_normalized,
        indentation_flexible,
        escape_normalized,
        trimmed_boundary,
        context_aware,
        multi_occurrence,
    ];
    let mut found = false;
    for replacer in replacers {
        for search in replacer(content, old) {
            // An empty candidate would "match" between every character.
            if search.is_empty() {
                continue;
            }
            let Some(index) = content.find(&search) else {
                continue;
            };
            found = true;
            if is_disproportionate(&search, old) {
                return Err(EditError::DisproportionateSpan);
            }
            if replace_all {
                return Ok(js_replace_all(content, &search, new));
            }
            if content.rfind(&search) != Some(index) {
                continue;
            }
            let mut out = String::with_capacity(content.len() + new.len());
            out.push_str(&content[..index]);
            out.push_str(new);
            out.push_str(&content[index + search.len()..]);
            return Ok(out);
        }
    }
    Err(if found {
        EditError::MultipleMatches
    } else {
        EditError::NotFound
    })
}

/// Whether a matched span is much larger than `old` (§17).
fn is_disproportionate(span: &str, old: &str) -> bool {
    let span_lines = span.split('\n').count();
    let old_lines = old.split('\n').count();
    if span_lines >= (old_lines + 3).max(2 * old_lines) {
        return true;
    }
    if old_lines > 1 {
        let span_len = utf16_len(span.trim());
        let old_len = utf16_len(old.trim());
        if span_len > (old_len + 500).max(4 * old_len) {
            return true;
        }
    }
    false
}

/// Length as JavaScript counts it (UTF-16 code units).
fn utf16_len(s: &str) -> usize {
    s.encode_utf16().count()
}

/// JavaScript `content.replaceAll(search, replacement)` with a string
/// pattern: every occurrence, left to right, with `$`-patterns expanded.
fn js_replace_all(content: &str, search: &str, replacement: &str) -> String {
    let mut out = String::with_capacity(content.len());
    let mut last = 0;
    for (at, matched) in content.match_indices(search) {
        out.push_str(&content[last..at]);
        let after = &content[at + matched.len()..];
        expand_replacement(&mut out, replacement, matched, &content[..at], after);
        last = at + matched.len();
    }
    out.push_str(&content[last..]);
    out
}

/// ECMAScript GetSubstitution without captures: `$$`, `$&`, `` $` `` and
/// `$'` are expanded, anything else after `$` is kept literally.
fn expand_replacement(
    out: &mut String,
    replacement: &str,
    matched: &str,
    before: &str,
    after: &str,
) {
    let mut chars = replacement.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '$' {
            out.push(c);
            continue;
        }
        match chars.peek() {
            Some('$') => {
                out.push('$');
                chars.next();
            }
            Some('&') => {
                out.push_str(matched);
                chars.next();
            }
            Some('`') => {
                out.push_str(before);
                chars.next();
            }
            Some('\'') => {
                out.push_str(after);
                chars.next();
            }
            _ => out.push('$'),
        }
    }
}

/// Byte offset of the start of each line, plus the content length as a
/// sentinel, for `content.split('\n')`.
fn line_starts(lines: &[&str]) -> Vec<usize> {
    let mut starts = Vec::with_capacity(lines.len() + 1);
    let mut at = 0;
    for line in lines {
        starts.push(at);
        at += line.len() + 1;
    }
    starts.push(at);
    starts
}

/// The text of lines `first..=last` of `content` (without the final newline).
fn span(content: &str, starts: &[usize], lines: &[&str], first: usize, last: usize) -> String {
    let begin = starts[first];
    let end = starts[last] + lines[last].len();
    content[begin..end].to_string()
}

/// Number of windows of `size` lines in `total` lines (JavaScript's
/// `for (i = 0; i <= total - size; i++)`).
fn windows(total: usize, size: usize) -> std::ops::Range<usize> {
    0..(total + 1).saturating_sub(size)
}

/// For each line index `p` (and `lines.len()`), the first index at `p` or
/// later whose trimmed line is `wanted`: one backward pass instead of a
/// forward scan from every anchor, which was quadratic in the line count.
fn next_matching(lines: &[&str], wanted: &str) -> Vec<Option<usize>> {
    let mut next = vec![None; lines.len() + 1];
    for p in (0..lines.len()).rev() {
        next[p] = if lines[p].trim() == wanted {
            Some(p)
        } else {
            next[p + 1]
        };
    }
    next
}

/// Running totals of the non-whitespace characters of `lines`:
/// `totals[j] - totals[i]` counts those of lines `i..j`. Normalising
/// whitespace, removing indentation and trimming keep that count, so a
/// window whose count differs from the wanted text's cannot match and is
/// skipped without building it.
fn non_whitespace_totals(lines: &[&str]) -> Vec<usize> {
    let mut totals = Vec::with_capacity(lines.len() + 1);
    let mut total = 0;
    totals.push(0);
    for line in lines {
        total += non_whitespace(line);
        totals.push(total);
    }
    totals
}

fn non_whitespace(text: &str) -> usize {
    text.chars().filter(|c| !c.is_whitespace()).count()
}

fn simple(_content: &str, old: &str) -> Vec<String> {
    vec![old.to_string()]
}

fn line_trimmed(content: &str, old: &str) -> Vec<String> {
    let lines: Vec<&str> = content.split('\n').collect();
    let mut search: Vec<&str> = old.split('\n').collect();
    if search.last() == Some(&"") {
        search.pop();
    }
    if search.is_empty() {
        return Vec::new();
    }
    let starts = line_starts(&lines);
    let mut out = Vec::new();
    for i in windows(lines.len(), search.len()) {
        if search
            .iter()
            .enumerate()
            .all(|(j, s)| lines[i + j].trim() == s.trim())
        {
            out.push(span(content, &starts, &lines, i, i + search.len() - 1));
        }
    }
    out
}

/// How many cells of Levenshtein tables one replacement may fill (about
/// a tenth of a second): two 4000-character lines, or many short ones.
/// Beyond it a line pair counts as differing everywhere outside their
/// common ends, so long lines cannot cost minutes.
const LEVENSHTEIN_CELLS: u64 = 1 << 24;

/// What is left of a replacement's Levenshtein allowance.
#[derive(Debug)]
struct Cells(u64);

/// Levenshtein distance over characters.
#[cfg(test)]
fn levenshtein(a: &str, b: &str) -> usize {
    levenshtein_within(a, b, &mut Cells(u64::MAX))
}

/// Levenshtein distance over characters, exact while `cells` lasts.
///
/// The common prefix and suffix are set aside first (they never change
/// the distance), so a long line with a small change costs little. A rest
/// that fits in what is left is compared in full; a larger one within a
/// band of `k` edits (Ukkonen: exact when the distance is at most `k`),
/// `k` doubling while the allowance lasts, so two long lines a few edits
/// apart stay cheap. When even that runs out, the distance given is the
/// longer rest's length: an upper bound, so such a pair only ever looks
/// less alike than it is and a fuzzy match gets no easier.
fn levenshtein_within(a: &str, b: &str, cells: &mut Cells) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let (a, b) = (&a[prefix..], &b[prefix..]);
    let suffix = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (a, b) = (&a[..a.len() - suffix], &b[..b.len() - suffix]);
    if a.is_empty() || b.is_empty() {
        return a.len().max(b.len());
    }
    let full = (a.len() as u64).saturating_mul(b.len() as u64);
    if full <= cells.0 {
        cells.0 -= full;
        return levenshtein_full(a, b);
    }
    // The distance is at least the difference in length.
    let mut k = a.len().abs_diff(b.len()).max(1);
    loop {
        let band = (a.len() as u64).saturating_mul(2 * k as u64 + 1);
        if band > cells.0 || k >= a.len().max(b.len()) {
            cells.0 = 0;
            return a.len().max(b.len());
        }
        cells.0 -= band;
        if let Some(distance) = levenshtein_banded(a, b, k) {
            return distance;
        }
        k *= 2;
    }
}

/// The whole table, two rows at a time.
fn levenshtein_full(a: &[char], b: &[char]) -> usize {
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        current[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            current[j] = (previous[j] + 1)
                .min(current[j - 1] + 1)
                .min(previous[j - 1] + cost);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

/// The distance when it is at most `k`, computing only the cells within
/// `k` of the diagonal (the others cannot lie on such a path); `None` when
/// it is larger.
fn levenshtein_banded(a: &[char], b: &[char], k: usize) -> Option<usize> {
    if a.len().abs_diff(b.len()) > k {
        return None;
    }
    // Larger than any distance, and safe to add one to.
    let far = usize::MAX / 2;
    let mut previous = vec![far; b.len() + 1];
    let mut current = vec![far; b.len() + 1];
    for (j, cell) in previous.iter_mut().enumerate().take(k + 1) {
        *cell = j;
    }
    for i in 1..=a.len() {
        let low = i.saturating_sub(k);
        let high = (i + k).min(b.len());
        // The cell left of the band: the first column, or outside it (this
        // row's buffer still holds a value from two rows up there).
        if low == 0 {
            current[0] = i;
        } else {
            current[low - 1] = far;
        }
        for j in low.max(1)..=high {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            current[j] = (previous[j] + 1)
                .min(current[j - 1] + 1)
                .min(previous[j - 1] + cost);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    let distance = previous[b.len()];
    (distance <= k).then_some(distance)
}

/// The block of `content` whose first and last lines match those of `old`
/// (trimmed) and whose inner lines are alike enough: opencode's block-anchor
/// replacer.
fn block_anchor(content: &str, old: &str) -> Vec<String> {
    let lines: Vec<&str> = content.split('\n').collect();
    let mut search: Vec<&str> = old.split('\n').collect();
    if search.len() < 3 {
        return Vec::new();
    }
    if search.last() == Some(&"") {
        search.pop();
    }
    let first = search[0].trim();
    let last = search[search.len() - 1].trim();
    let size = search.len();
    let max_delta = 1.max(size / 4);
    let mut candidates: Vec<(usize, usize)> = Vec::new();
    let next_last = next_matching(&lines, last);
    for (i, line) in lines.iter().enumerate() {
        if line.trim() != first {
            continue;
        }
        // The first line at i + 2 or later that matches the last line.
        if let Some(&Some(j)) = next_last.get(i + 2) {
            let actual = j - i + 1;
            if actual.abs_diff(size) <= max_delta {
                candidates.push((i, j));
            }
        }
    }
    let starts = line_starts(&lines);
    let mut cells = Cells(LEVENSHTEIN_CELLS);
    let mut similarity_of = |candidate: (usize, usize), early_exit: bool| {
        block_similarity(&lines, &search, candidate, early_exit, &mut cells)
    };
    match candidates.as_slice() {
        [] => Vec::new(),
        [only] => {
            if similarity_of(*only, true) >= BLOCK_ANCHOR_THRESHOLD {
                vec![span(content, &starts, &lines, only.0, only.1)]
            } else {
                Vec::new()
            }
        }
        several => {
            let mut best: Option<(usize, usize)> = None;
            let mut best_similarity = -1.0;
            for candidate in several {
                let similarity = similarity_of(*candidate, false);
                if similarity > best_similarity {
                    best_similarity = similarity;
                    best = Some(*candidate);
                }
            }
            match best {
                Some((start, end)) if best_similarity >= BLOCK_ANCHOR_THRESHOLD => {
                    vec![span(content, &starts, &lines, start, end)]
                }
                _ => Vec::new(),
            }
        }
    }
}

/// How alike the inner lines of the candidate block `start..=end` of
/// `lines` are to those of `search` (1.0 when there are none to compare),
/// by edit distance line by line. With `early_exit`, the sum stops as
/// soon as it reaches the threshold (a single candidate only needs to
/// pass it).
fn block_similarity(
    lines: &[&str],
    search: &[&str],
    (start, end): (usize, usize),
    early_exit: bool,
    cells: &mut Cells,
) -> f64 {
    let size = search.len();
    let actual = end - start + 1;
    let to_check = size.saturating_sub(2).min(actual.saturating_sub(2));
    if to_check == 0 {
        return 1.0;
    }
    let mut similarity = 0.0;
    let mut j = 1;
    while j < size - 1 && j < actual - 1 {
        let original = lines[start + j].trim();
        let wanted = search[j].trim();
        let max_len = original.chars().count().max(wanted.chars().count());
        j += 1;
        if max_len == 0 {
            continue;
        }
        let distance = levenshtein_within(original, wanted, cells) as f64;
        let line_similarity = 1.0 - distance / max_len as f64;
        if early_exit {
            similarity += line_similarity / to_check as f64;
            if similarity >= BLOCK_ANCHOR_THRESHOLD {
                break;
            }
        } else {
            similarity += line_similarity;
        }
    }
    if early_exit {
        similarity
    } else {
        similarity / to_check as f64
    }
}

/// Whitespace runs collapsed to one space, ends trimmed.
fn normalize_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The leftmost match in `line` of `words` separated by whitespace runs
/// (the regex `w1\s+w2\s+...`).
fn find_words(line: &str, words: &[&str]) -> Option<String> {
    let (first, rest) = words.split_first()?;
    for (start, _) in line.match_indices(first) {
        let mut at = start + first.len();
        let mut ok = true;
        for word in rest {
            let tail = &line[at..];
            let skipped = tail.len() - tail.trim_start().len();
            if skipped == 0 || !tail[skipped..].starts_with(word) {
                ok = false;
                break;
            }
            at += skipped + word.len();
        }
        if ok {
            return Some(line[start..at].to_string());
        }
    }
    None
}

fn whitespace_normalized(content: &str, old: &str) -> Vec<String> {
    let wanted = normalize_whitespace(old);
    let lines: Vec<&str> = content.split('\n').collect();
    let mut out = Vec::new();
    for line in &lines {
        let normalized = normalize_whitespace(line);
        if normalized == wanted {
            out.push((*line).to_string());
        } else if normalized.contains(&wanted) {
            let words: Vec<&str> = old.split_whitespace().collect();
            if let Some(found) = find_words(line, &words) {
                out.push(found);
            }
        }
    }
    let old_lines = old.split('\n').count();
    if old_lines > 1 {
        let totals = non_whitespace_totals(&lines);
        let wanted_count = non_whitespace(&wanted);
        for i in windows(lines.len(), old_lines) {
            if totals[i + old_lines] - totals[i] != wanted_count {
                continue;
            }
            let block = lines[i..i + old_lines].join("\n");
            if normalize_whitespace(&block) == wanted {
                out.push(block);
            }
        }
    }
    out
}

/// `text` with the smallest leading indentation of its non-blank lines
/// removed from every non-blank line.
fn remove_indentation(text: &str) -> String {
    let lines: Vec<&str> = text.split('\n').collect();
    let indent = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.chars().take_while(|c| c.is_whitespace()).count())
        .min();
    let Some(indent) = indent else {
        return text.to_string();
    };
    lines
        .iter()
        .map(|l| {
            if l.trim().is_empty() {
                (*l).to_string()
            } else {
                l.chars().skip(indent).collect()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn indentation_flexible(content: &str, old: &str) -> Vec<String> {
    let wanted = remove_indentation(old);
    let lines: Vec<&str> = content.split('\n').collect();
    let size = old.split('\n').count();
    let totals = non_whitespace_totals(&lines);
    let wanted_count = non_whitespace(&wanted);
    windows(lines.len(), size)
        .filter(|&i| totals[i + size] - totals[i] == wanted_count)
        .map(|i| lines[i..i + size].join("\n"))
        .filter(|block| remove_indentation(block) == wanted)
        .collect()
}

/// Unescapes `\n \t \r \' \" \` \\ \$` and backslash-newline.
fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let replacement = match chars.peek() {
            Some('n') => '\n',
            Some('t') => '\t',
            Some('r') => '\r',
            Some(&other @ ('\'' | '"' | '`' | '\\' | '\n' | '$')) => other,
            _ => {
                out.push('\\');
                continue;
            }
        };
        chars.next();
        out.push(replacement);
    }
    out
}

fn escape_normalized(content: &str, old: &str) -> Vec<String> {
    let wanted = unescape(old);
    let mut out = Vec::new();
    if content.contains(&wanted) {
        out.push(wanted.clone());
    }
    let lines: Vec<&str> = content.split('\n').collect();
    let size = wanted.split('\n').count();
    let starts = line_starts(&lines);
    for i in windows(lines.len(), size) {
        // Unescaping turns two bytes into one at most, so only blocks of
        // one to two times the wanted length can match.
        let length = starts[i + size] - starts[i] - 1;
        if length < wanted.len() || length > 2 * wanted.len() {
            continue;
        }
        let block = lines[i..i + size].join("\n");
        if unescape(&block) == wanted {
            out.push(block);
        }
    }
    out
}

fn trimmed_boundary(content: &str, old: &str) -> Vec<String> {
    let trimmed = old.trim();
    if trimmed == old {
        return Vec::new();
    }
    let mut out = Vec::new();
    if content.contains(trimmed) {
        out.push(trimmed.to_string());
    }
    let lines: Vec<&str> = content.split('\n').collect();
    let size = old.split('\n').count();
    let totals = non_whitespace_totals(&lines);
    let wanted_count = non_whitespace(trimmed);
    for i in windows(lines.len(), size) {
        if totals[i + size] - totals[i] != wanted_count {
            continue;
        }
        let block = lines[i..i + size].join("\n");
        if block.trim() == trimmed {
            out.push(block);
        }
    }
    out
}

fn context_aware(content: &str, old: &str) -> Vec<String> {
    let mut search: Vec<&str> = old.split('\n').collect();
    if search.len() < 3 {
        return Vec::new();
    }
    if search.last() == Some(&"") {
        search.pop();
    }
    let lines: Vec<&str> = content.split('\n').collect();
    let first = search[0].trim();
    let last = search[search.len() - 1].trim();
    let next_last = next_matching(&lines, last);
    for (i, line) in lines.iter().enumerate() {
        if line.trim() != first {
            continue;
        }
        // The first line at i + 2 or later that matches the last line.
        if let Some(&Some(j)) = next_last.get(i + 2) {
            let block = &lines[i..=j];
            if block.len() == search.len() {
                let mut matching = 0usize;
                let mut non_empty = 0usize;
                for k in 1..block.len() - 1 {
                    let a = block[k].trim();
                    let b = search[k].trim();
                    if !a.is_empty() || !b.is_empty() {
                        non_empty += 1;
                        if a == b {
                            matching += 1;
                        }
                    }
                }
                if non_empty == 0 || matching as f64 / non_empty as f64 >= 0.5 {
                    return vec![block.join("\n")];
                }
            }
        }
    }
    Vec::new()
}

fn multi_occurrence(content: &str, old: &str) -> Vec<String> {
    content
        .match_indices(old)
        .map(|(_, m)| m.to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levenshtein_basics() {
        assert_eq!(levenshtein("kitten", "sitting"), 3);
        assert_eq!(levenshtein("", "abc"), 3);
        assert_eq!(levenshtein("same", "same"), 0);
    }

    #[test]
    fn levenshtein_sets_common_ends_aside_and_stays_within_its_cells() {
        let long = "x".repeat(100_000);
        let changed = format!("{}y{}", &long[..50_000], &long[50_001..]);
        let mut cells = Cells(100);
        assert_eq!(levenshtein_within(&long, &changed, &mut cells), 1);
        assert_eq!(cells.0, 99, "only the differing middle was compared");

        // Shifted by one character: no common ends, but two edits apart,
        // found within a narrow band.
        let a = "ab".repeat(50_000);
        let b = "ba".repeat(50_000);
        let mut cells = Cells(LEVENSHTEIN_CELLS);
        assert_eq!(levenshtein_within(&a, &b, &mut cells), 2);
        assert!(cells.0 > LEVENSHTEIN_CELLS / 2, "{cells:?}");

        // Different everywhere: past the allowance, the upper bound.
        let c = "cd".repeat(50_000);
        let mut cells = Cells(LEVENSHTEIN_CELLS);
        assert_eq!(levenshtein_within(&a, &c, &mut cells), 100_000);
        assert_eq!(cells.0, 0);
    }

    #[test]
    fn the_band_agrees_with_the_full_table() {
        let words = [
            "",
            "a",
            "ab",
            "ba",
            "kitten",
            "sitting",
            "abcdef",
            "azced",
            "xxxxyyyy",
            "yyyyxxxx",
            "intention",
            "execution",
        ];
        for a in words {
            for b in words {
                let (a_chars, b_chars): (Vec<char>, Vec<char>) =
                    (a.chars().collect(), b.chars().collect());
                let exact = levenshtein(a, b);
                for k in 0..10 {
                    let banded = levenshtein_banded(&a_chars, &b_chars, k);
                    let expected = (exact <= k).then_some(exact);
                    assert_eq!(banded, expected, "{a:?} {b:?} k={k}");
                }
                // A tiny allowance still gives an upper bound.
                let bound = levenshtein_within(a, b, &mut Cells(3));
                assert!(bound >= exact, "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn fuzzy_matching_of_long_lines_is_bounded() {
        // A block whose 100 KB middle line differs from the file's
        // everywhere: the block-anchor replacer compares it within its
        // allowance (opencode fills 10^10 cells), and the other replacers
        // skip windows by their character counts.
        let middle = "ab".repeat(50_000);
        let content = format!("fn start() {{\n{middle}\n}}\n");
        let other = "cd".repeat(50_000);
        let old = format!("fn start() {{\n{other}\n}}");
        assert_eq!(
            replace(&content, &old, "X", false),
            Err(EditError::NotFound)
        );

        // Lines a few edits apart are found, as opencode finds them.
        let shifted = "ba".repeat(50_000);
        let old = format!("fn start() {{\n{shifted}\n}}");
        assert_eq!(replace(&content, &old, "X", false).unwrap(), "X\n");
        let close = format!("{}c{}", &middle[..50_000], &middle[50_001..]);
        let old = format!("fn start() {{\n{close}\n}}");
        assert_eq!(replace(&content, &old, "X", false).unwrap(), "X\n");
    }

    #[test]
    fn many_anchor_lines_without_a_closing_line_are_scanned_once() {
        // Every line matches the first anchor and none the last: the old
        // forward scan from each anchor was quadratic in the lines.
        let content = "{\n".repeat(50_000);
        let old = "{\n  body\n} // end";
        assert_eq!(replace(&content, old, "X", false), Err(EditError::NotFound));
    }

    #[test]
    fn dollar_patterns() {
        assert_eq!(
            js_replace_all("a-b", "-", "[$`|$'|$&|$$|$1]"),
            "a[a|b|-|$|$1]b"
        );
    }

    #[test]
    fn line_trimmed_matches_other_indentation() {
        let content = "fn main() {\n    let x = 1;\n}\n";
        let out = replace(content, "let x = 1;\n}", "let x = 2;\n}", false).unwrap();
        assert_eq!(out, "fn main() {\n    let x = 2;\n}\n");
    }

    #[test]
    fn block_anchor_tolerates_a_changed_middle() {
        let content = "start() {\n  computeTheValue(a, b)\n  other()\nend }\n";
        let old = "start() {\n  computeTheValue(a, c)\n  other()\nend }";
        let out = replace(content, old, "X", false).unwrap();
        assert_eq!(out, "X\n");
    }

    #[test]
    fn shifted_block_is_replaced_without_reindenting() {
        let content = "    if a {\n        b();\n    }\n";
        let old = "if a {\n    b();\n}";
        assert_eq!(replace(content, old, "Z", false).unwrap(), "Z\n");
        assert_eq!(remove_indentation("  a\n    b\n\n  c"), "a\n  b\n\nc");
    }

    #[test]
    fn trimmed_boundary() {
        assert_eq!(
            replace("xx hello yy", "  hello\t", "bye", false).unwrap(),
            "xx bye yy"
        );
    }

    #[test]
    fn words_regex() {
        assert_eq!(find_words("a  b c", &["b", "c"]).as_deref(), Some("b c"));
        assert_eq!(find_words("bc", &["b", "c"]), None);
    }

    #[test]
    fn replace_all_is_literal_without_dollars() {
        assert_eq!(replace("a.a.a", "a", "b", true).unwrap(), "b.b.b");
    }
}
