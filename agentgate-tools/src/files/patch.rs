//! The patch envelope of `apply_patch` (the format GPT and codex-family
//! models are trained on): [`parse_patch`] turns the text into file
//! operations without touching the disk, [`apply_chunks`] applies an
//! update's hunks to a file's text in memory.
//!
//! ```text
//! *** Begin Patch
//! *** Add File: path        (every line `+`)
//! *** Delete File: path
//! *** Update File: path
//! *** Move to: new/path     (optional)
//! @@ optional line to find first
//!  context
//! -removed
//! +added
//! *** End of File           (optional: the hunk ends the file)
//! *** End Patch
//! ```

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File: ";
const DELETE: &str = "*** Delete File: ";
const UPDATE: &str = "*** Update File: ";
const MOVE: &str = "*** Move to: ";
const END_OF_FILE: &str = "*** End of File";

/// One file operation of a patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PatchOp {
    /// Create (or replace) `path` with `contents`.
    Add {
        /// The path as written in the patch.
        path: String,
        /// The new file's text (each `+` line, newline-terminated).
        contents: String,
    },
    /// Remove `path`.
    Delete {
        /// The path as written in the patch.
        path: String,
    },
    /// Change `path` by `chunks`, then rename it to `move_to` if given.
    Update {
        /// The path as written in the patch.
        path: String,
        /// Where the file is renamed to.
        move_to: Option<String>,
        /// The hunks, in file order.
        chunks: Vec<Chunk>,
    },
}

impl PatchOp {
    /// The path the operation reads or changes.
    pub fn path(&self) -> &str {
        match self {
            PatchOp::Add { path, .. } | PatchOp::Delete { path } | PatchOp::Update { path, .. } => {
                path
            }
        }
    }
}

/// One hunk of an update: `old` lines (context and removed) replaced by
/// `new` lines (context and added).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Chunk {
    /// The text after `@@`: a line to find before matching `old`.
    pub context: Option<String>,
    /// The lines the file must contain (` ` and `-` lines).
    pub old: Vec<String>,
    /// The lines that replace them (` ` and `+` lines).
    pub new: Vec<String>,
    /// `*** End of File` closed the hunk: `old` ends the file.
    pub end_of_file: bool,
}

/// Why a patch text could not be parsed; the message tells the model the
/// line and what was expected there.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Invalid patch at line {line}: {message}")]
pub struct PatchError {
    /// The 1-based line of the patch text.
    pub line: usize,
    /// What is wrong and what was expected.
    pub message: String,
}

fn error(line: usize, message: impl Into<String>) -> PatchError {
    PatchError {
        line,
        message: message.into(),
    }
}

/// Parses a patch envelope into its file operations (a pure function: no
/// file is read). The text must start with `*** Begin Patch` and end with
/// `*** End Patch` (surrounding blank lines are ignored) and hold at least
/// one operation.
pub fn parse_patch(text: &str) -> Result<Vec<PatchOp>, PatchError> {
    let all: Vec<&str> = text.lines().collect();
    let first = all.iter().position(|l| !l.trim().is_empty());
    let last = all.iter().rposition(|l| !l.trim().is_empty());
    let (Some(first), Some(last)) = (first, last) else {
        return Err(error(1, "the patch is empty; expected `*** Begin Patch`"));
    };
    if all[first].trim() != BEGIN {
        return Err(error(
            first + 1,
            format!(
                "expected `{BEGIN}` as the first line, found {:?}",
                all[first]
            ),
        ));
    }
    if last == first || all[last].trim() != END {
        return Err(error(
            last + 1,
            format!("expected `{END}` as the last line, found {:?}", all[last]),
        ));
    }
    let mut ops = Vec::new();
    let mut i = first + 1;
    while i < last {
        let line = all[i];
        let number = i + 1;
        if let Some(path) = header_path(line, ADD, number)? {
            let (contents, next) = added_contents(&all, i + 1, last, &path)?;
            i = next;
            ops.push(PatchOp::Add { path, contents });
        } else if let Some(path) = header_path(line, DELETE, number)? {
            i += 1;
            ops.push(PatchOp::Delete { path });
        } else if let Some(path) = header_path(line, UPDATE, number)? {
            i += 1;
            let mut move_to = None;
            if i < last
                && let Some(target) = header_path(all[i], MOVE, i + 1)?
            {
                move_to = Some(target);
                i += 1;
            }
            let (chunks, next) = parse_chunks(&all, i, last, &path)?;
            if chunks.is_empty() && move_to.is_none() {
                return Err(error(
                    number,
                    format!(
                        "`*** Update File: {path}` has no hunks; expected `@@` followed by ` `, `-` and `+` lines"
                    ),
                ));
            }
            i = next;
            ops.push(PatchOp::Update {
                path,
                move_to,
                chunks,
            });
        } else if line.trim().is_empty() {
            i += 1;
        } else {
            return Err(error(
                number,
                format!(
                    "expected `{ADD}<path>`, `{DELETE}<path>`, `{UPDATE}<path>` or `{END}`, found {line:?}"
                ),
            ));
        }
    }
    if ops.is_empty() {
        return Err(error(
            last + 1,
            "the patch holds no file operation; expected `*** Add File:`, `*** Delete File:` or `*** Update File:`",
        ));
    }
    Ok(ops)
}

/// The contents of `*** Add File: path`, from its `+` lines starting at
/// `all[i]` up to the next `***` line (or `last`), and the index after them.
fn added_contents(
    all: &[&str],
    mut i: usize,
    last: usize,
    path: &str,
) -> Result<(String, usize), PatchError> {
    let mut contents = String::new();
    while i < last && !all[i].starts_with("***") {
        let Some(text) = all[i].strip_prefix('+') else {
            return Err(error(
                i + 1,
                format!(
                    "every line of `*** Add File: {path}` must start with `+`, found {:?}",
                    all[i]
                ),
            ));
        };
        contents.push_str(text);
        contents.push('\n');
        i += 1;
    }
    Ok((contents, i))
}

/// The path after `prefix` when `line` is that header; an error when the
/// path is empty.
fn header_path(line: &str, prefix: &str, number: usize) -> Result<Option<String>, PatchError> {
    let Some(rest) = line.trim_end().strip_prefix(prefix.trim_end()) else {
        return Ok(None);
    };
    let path = rest.trim();
    if path.is_empty() {
        return Err(error(
            number,
            format!("`{}` needs a path", prefix.trim_end()),
        ));
    }
    Ok(Some(path.to_string()))
}

/// The hunks of an update from line index `i` up to the next file header
/// (or `last`, the end line), and the index after them.
fn parse_chunks(
    all: &[&str],
    mut i: usize,
    last: usize,
    path: &str,
) -> Result<(Vec<Chunk>, usize), PatchError> {
    let mut chunks: Vec<Chunk> = Vec::new();
    let mut current: Option<Chunk> = None;
    while i < last {
        let line = all[i];
        if line.trim_end() == END_OF_FILE {
            let Some(mut chunk) = current.take() else {
                return Err(error(
                    i + 1,
                    format!("`{END_OF_FILE}` must close a hunk of `{path}`"),
                ));
            };
            chunk.end_of_file = true;
            chunks.push(chunk);
            i += 1;
            continue;
        }
        if line.starts_with("*** ") {
            break;
        }
        if let Some(rest) = line.strip_prefix("@@") {
            if let Some(chunk) = current.take() {
                chunks.push(non_empty(chunk, i, path)?);
            }
            let context = rest.trim();
            current = Some(Chunk {
                context: (!context.is_empty()).then(|| context.to_string()),
                ..Chunk::default()
            });
            i += 1;
            continue;
        }
        // The first hunk may leave out its `@@` line.
        let chunk = match current.as_mut() {
            Some(chunk) => chunk,
            None if chunks.is_empty() => current.insert(Chunk::default()),
            None => {
                return Err(error(
                    i + 1,
                    format!("expected `@@` to start the next hunk of `{path}`, found {line:?}"),
                ));
            }
        };
        match line.chars().next() {
            Some(' ') => {
                chunk.old.push(line[1..].to_string());
                chunk.new.push(line[1..].to_string());
            }
            // An empty line inside a hunk is an empty context line.
            None => {
                chunk.old.push(String::new());
                chunk.new.push(String::new());
            }
            Some('-') => chunk.old.push(line[1..].to_string()),
            Some('+') => chunk.new.push(line[1..].to_string()),
            Some(_) => {
                return Err(error(
                    i + 1,
                    format!(
                        "a hunk line of `{path}` must start with ` ` (context), `-` (remove) or `+` (add), found {line:?}"
                    ),
                ));
            }
        }
        i += 1;
    }
    if let Some(chunk) = current.take() {
        chunks.push(non_empty(chunk, i, path)?);
    }
    Ok((chunks, i))
}

fn non_empty(chunk: Chunk, next: usize, path: &str) -> Result<Chunk, PatchError> {
    if chunk.old.is_empty() && chunk.new.is_empty() {
        return Err(error(
            next,
            format!("a hunk of `{path}` has no lines; expected ` `, `-` or `+` lines after `@@`"),
        ));
    }
    Ok(chunk)
}

/// Why an update's hunks do not apply to the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ApplyError {
    /// The `@@` line was not found.
    #[error(
        "Failed to find the line {context:?} (after `@@`) in {path}. Read the file and give a line it contains."
    )]
    ContextNotFound {
        /// The file.
        path: String,
        /// The `@@` text.
        context: String,
    },
    /// The hunk's ` ` and `-` lines were not found.
    #[error(
        "Failed to find the expected lines in {path}:\n{lines}\nRead the file again; the context and `-` lines must match it."
    )]
    LinesNotFound {
        /// The file.
        path: String,
        /// The lines looked for.
        lines: String,
    },
    /// The hunk's ` ` and `-` lines occur more than once.
    #[error(
        "The expected lines occur {count} times in {path}:\n{lines}\nAdd context lines or an `@@` line so the hunk matches one place."
    )]
    Ambiguous {
        /// The file.
        path: String,
        /// The lines looked for.
        lines: String,
        /// How often they occur.
        count: usize,
    },
}

/// How strictly lines are compared: exactly, ignoring trailing
/// whitespace, ignoring surrounding whitespace. Each is tried in turn and
/// the first that matches anywhere decides.
const LEVELS: [fn(&str) -> &str; 3] = [exact, str::trim_end, str::trim];

fn exact(line: &str) -> &str {
    line
}

/// Where `wanted` occurs in `lines` at or after `from`, at the first level
/// that finds it: every match at that level.
fn seek(lines: &[String], wanted: &[String], from: usize) -> Vec<usize> {
    if wanted.len() > lines.len() {
        return Vec::new();
    }
    for level in LEVELS {
        let found: Vec<usize> = (from..=lines.len() - wanted.len())
            .filter(|&start| {
                wanted
                    .iter()
                    .zip(&lines[start..])
                    .all(|(w, l)| level(w) == level(l))
            })
            .collect();
        if !found.is_empty() {
            return found;
        }
    }
    Vec::new()
}

/// Applies `chunks` (in file order) to `original`, the text of `path`,
/// and returns the new text, newline-terminated. Each hunk's old lines
/// must occur exactly once after the previous hunk (and after its `@@`
/// line, the first occurrence of which is used); a hunk closed by
/// `*** End of File` must end the file. Line endings follow the file
/// (CRLF when it has any).
pub fn apply_chunks(original: &str, chunks: &[Chunk], path: &str) -> Result<String, ApplyError> {
    let crlf = original.contains("\r\n");
    let mut lines: Vec<String> = original
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l).to_string())
        .collect();
    if lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    let mut replacements: Vec<(usize, usize, &[String])> = Vec::new();
    let mut cursor = 0;
    for chunk in chunks {
        if let Some(context) = &chunk.context {
            let wanted = [context.clone()];
            match seek(&lines, &wanted, cursor).first() {
                Some(&at) => cursor = at + 1,
                None => {
                    return Err(ApplyError::ContextNotFound {
                        path: path.to_string(),
                        context: context.clone(),
                    });
                }
            }
        }
        if chunk.old.is_empty() {
            // Pure additions go after the `@@` line, else at the end.
            let at = if chunk.context.is_some() && !chunk.end_of_file {
                cursor
            } else {
                lines.len()
            };
            replacements.push((at, 0, &chunk.new[..]));
            cursor = at;
            continue;
        }
        let (mut old, mut new) = (&chunk.old[..], &chunk.new[..]);
        let mut found = locate(&lines, old, cursor, chunk.end_of_file);
        // Models often end a hunk with a blank line the file does not have.
        if found.is_empty() && old.last().is_some_and(String::is_empty) {
            old = &old[..old.len() - 1];
            if new.last().is_some_and(String::is_empty) {
                new = &new[..new.len() - 1];
            }
            if !old.is_empty() {
                found = locate(&lines, old, cursor, chunk.end_of_file);
            }
        }
        match found.as_slice() {
            &[at] => {
                replacements.push((at, old.len(), new));
                cursor = at + old.len();
            }
            [] => {
                return Err(ApplyError::LinesNotFound {
                    path: path.to_string(),
                    lines: chunk.old.join("\n"),
                });
            }
            _ => {
                return Err(ApplyError::Ambiguous {
                    path: path.to_string(),
                    lines: chunk.old.join("\n"),
                    count: found.len(),
                });
            }
        }
    }
    for (at, len, new) in replacements.into_iter().rev() {
        lines.splice(at..at + len, new.iter().cloned());
    }
    let eol = if crlf { "\r\n" } else { "\n" };
    let mut text = lines.join(eol);
    if !lines.is_empty() {
        text.push_str(eol);
    }
    Ok(text)
}

/// The matches of `old` from `cursor`; with `end_of_file`, only a match
/// that ends the file.
fn locate(lines: &[String], old: &[String], cursor: usize, end_of_file: bool) -> Vec<usize> {
    let found = seek(lines, old, cursor);
    if end_of_file {
        found
            .into_iter()
            .filter(|&at| at + old.len() == lines.len())
            .collect()
    } else {
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_hunk_may_omit_its_at_line() {
        let ops =
            parse_patch("*** Begin Patch\n*** Update File: a\n-x\n+y\n*** End Patch").unwrap();
        let PatchOp::Update { chunks, .. } = &ops[0] else {
            panic!("{ops:?}")
        };
        assert_eq!(chunks[0].old, ["x"]);
        assert_eq!(chunks[0].new, ["y"]);
    }

    #[test]
    fn crlf_is_kept() {
        let chunk = Chunk {
            old: vec!["b".into()],
            new: vec!["B".into()],
            ..Chunk::default()
        };
        assert_eq!(
            apply_chunks("a\r\nb\r\n", &[chunk], "f").unwrap(),
            "a\r\nB\r\n"
        );
    }
}
