//! The `grep` tool (§7.2): lines matching a regular expression, grouped by
//! file, files newest first.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{Read, Seek};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use agentgate_core::{ToolContext, ToolError, ToolOutput, TypedTool};
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::sinks::UTF8;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder};
use nix::fcntl::{AtFlags, OFlag, openat};
use nix::sys::stat::{FileStat, Mode, fstat, fstatat};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::files::asked_path::{AskedPath, OpenedRoot};
use crate::files::error::FileError;
use crate::files::paths;
use crate::files::request::ToolRequest;
use crate::files::requests::{ask_in_order, external_requests};
use crate::limits::SearchLimits;
use crate::search::file_filters::{FileFilters, FileVersion, Verdict, is_local_path};
use crate::search::open_folder::OpenFolder;
use crate::search::read_rules::{ReadRules, WalkedFolders};
use crate::search::trigrams::Required;
use crate::search::walk::{PathGlob, Walked, walk_parallel};

/// Arguments of [`GrepTool`].
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct GrepArgs {
    /// The regular expression to search for (Rust `regex` syntax, as ripgrep).
    pub pattern: String,
    /// The folder or file to search (default: the working directory).
    #[serde(default)]
    pub path: Option<String>,
    /// Only search files matching this glob (`*.rs`, `*.{ts,tsx}`).
    #[serde(default)]
    pub include: Option<String>,
}

/// Searches file contents with ripgrep's engine (§7.2).
///
/// Asks `grep` with the pattern first, then `external_directory` for a
/// search path outside the project (as a folder or a file, as it exists).
/// Files ignored by `.gitignore` and binary files are skipped. Matches are
/// grouped by file, files newest first (then by path), lines in file order;
/// at most 100 (and about 50 KB) are shown, with a notice of how many were
/// hidden.
#[derive(Debug, Clone, Copy, Default)]
pub struct GrepTool {
    limits: SearchLimits,
}

impl GrepTool {
    /// The same tool with other limits.
    pub fn with_limits(mut self, limits: SearchLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The limits calls run with.
    pub fn limits(&self) -> &SearchLimits {
        &self.limits
    }

    /// The permission requests a call makes, in order. Only looks at the
    /// file system (whether the path is a folder); changes nothing.
    pub fn requests(&self, args: &GrepArgs, directory: &Path, worktree: &Path) -> Vec<ToolRequest> {
        let search = paths::resolve(directory, Path::new(args.path.as_deref().unwrap_or(".")));
        let is_dir = std::fs::metadata(&search).is_ok_and(|m| m.is_dir());
        let mut requests = vec![
            ToolRequest::new("grep", args.pattern.clone(), "*").with_metadata(
                json!({"pattern": args.pattern, "path": args.path, "include": args.include}),
            ),
        ];
        requests.extend(external_requests(&search, is_dir, directory, worktree));
        requests
    }

    /// The listing of `found` within the limits: the matches grouped under
    /// their file, long lines cut; and how many matches it shows.
    fn listing(&self, found: &[FileMatches]) -> (Vec<String>, usize) {
        let mut body: Vec<String> = Vec::new();
        let mut bytes = 0;
        let mut shown = 0;
        let mut current: Option<&Path> = None;
        let matches = found.iter().flat_map(|file| {
            file.lines
                .iter()
                .map(move |(line, text)| (file.path.as_path(), *line, text))
        });
        for (path, line, text) in matches.take(self.limits.max_results) {
            let mut entry = Vec::new();
            if current != Some(path) {
                if current.is_some() {
                    entry.push(String::new());
                }
                entry.push(format!("{}:", path.display()));
            }
            let text = if text.chars().count() > self.limits.max_line_chars {
                let cut: String = text.chars().take(self.limits.max_line_chars).collect();
                format!("{cut}...")
            } else {
                text.clone()
            };
            entry.push(format!("  Line {line}: {text}"));
            let size: usize = entry.iter().map(|l| l.len() + 1).sum();
            // Stay under the loop's output cap, which does not apply to
            // outputs that say whether they were truncated.
            if shown > 0 && bytes + size > self.limits.max_output_bytes {
                break;
            }
            bytes += size;
            shown += 1;
            current = Some(path);
            body.extend(entry);
        }
        (body, shown)
    }

    /// The tool's answer for what a search of `title` (the pattern) found.
    fn report(&self, title: String, searched: Searched) -> ToolOutput {
        let Searched {
            found,
            errors,
            hidden,
            unread: _,
        } = searched;
        let total: usize = found.iter().map(|file| file.lines.len()).sum();
        if total == 0 {
            let text = if hidden > 0 {
                format!(
                    "No files found ({hidden} files in the search path were not searched: the read rules do not allow reading them)"
                )
            } else {
                "No files found".to_string()
            };
            return ToolOutput::text(text)
                .with_title(title)
                .with_metadata(json!({"matches": 0, "truncated": false}));
        }
        let (body, shown) = self.listing(&found);
        let truncated = shown < total;
        let mut lines = vec![if truncated {
            format!("Found {total} matches (showing first {shown})")
        } else {
            format!("Found {total} matches")
        }];
        lines.extend(body);
        if truncated {
            lines.push(String::new());
            lines.push(format!(
                "(Results truncated: showing {shown} of {total} matches ({} hidden). Consider using a more specific path or pattern.)",
                total - shown
            ));
        }
        if hidden > 0 {
            lines.push(String::new());
            lines.push(format!(
                "({hidden} files in the search path were not searched: the read rules do not allow reading them)"
            ));
        }
        if errors {
            lines.push(String::new());
            lines.push("(Some paths were inaccessible and skipped)".to_string());
        }
        ToolOutput::text(lines.join("\n"))
            .with_title(title)
            .with_metadata(json!({"matches": total, "truncated": truncated}))
    }
}

/// The matcher for `pattern`, built as ripgrep builds it for a line-wise
/// search: `^` and `$` match at line boundaries and no match spans a `\n`,
/// so the searcher can look for the pattern in a whole buffer at once
/// instead of trying it on every line. The lines found are the ones a
/// line-by-line search finds (it never shows the matcher a line's `\n`).
/// A pattern that names a `\n` literally (which no line can match) cannot
/// be built that way and gets the plain matcher, which searches line by
/// line and finds nothing, as before.
pub(crate) fn line_matcher(pattern: &str) -> Result<RegexMatcher, grep_regex::Error> {
    RegexMatcherBuilder::new()
        .multi_line(true)
        .line_terminator(Some(b'\n'))
        .build(pattern)
        .or_else(|_| RegexMatcher::new(pattern))
}

/// The largest file read whole into a walker thread's buffer and searched
/// as one slice (the searcher's own read buffer is this size).
const SLICE_LIMIT: usize = 64 * 1024;

/// Reads `file` from its start into `buffer` (at least `SLICE_LIMIT + 1`
/// bytes): how many bytes it holds, or `None` when it does not fit.
fn read_small(file: &mut File, buffer: &mut [u8]) -> std::io::Result<Option<usize>> {
    let mut filled = 0;
    while filled < buffer.len() {
        match file.read(&mut buffer[filled..]) {
            Ok(0) => return Ok(Some(filled)),
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(None)
}

/// What a search may keep for the next ones: the file filters, when the
/// search began, and their memory budget.
#[derive(Clone, Copy)]
struct Learning<'a> {
    filters: &'a FileFilters,
    start: SystemTime,
    budget: usize,
}

/// Where a walked file is reached: by name in its open folder (one path
/// component for the kernel to look up, and never through a link), or
/// the walk's root, a file the call named, opened and checked before the
/// walk (tests also reach a file by its path).
#[derive(Clone, Copy)]
enum Location<'a> {
    At(&'a OwnedFd, &'a OsStr),
    /// The one file a search of a file searches, opened for the call.
    Opened(&'a File),
    #[cfg(test)]
    Path(&'a Path),
}

impl Location<'_> {
    /// Opens the file for reading; by name, a link or a FIFO swapped in
    /// since the walk fails instead of being followed or waited on.
    fn open(self) -> std::io::Result<File> {
        match self {
            Location::At(folder, name) => {
                let flags =
                    OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC;
                let fd = openat(folder, name, flags, Mode::empty())?;
                Ok(File::from(fd))
            }
            Location::Opened(file) => {
                let mut file = file.try_clone()?;
                file.rewind()?;
                Ok(file)
            }
            #[cfg(test)]
            Location::Path(path) => File::open(path),
        }
    }

    /// The file's `lstat`.
    fn lstat(self) -> nix::Result<FileStat> {
        match self {
            Location::At(folder, name) => fstatat(folder, name, AtFlags::AT_SYMLINK_NOFOLLOW),
            Location::Opened(file) => fstat(file),
            #[cfg(test)]
            Location::Path(path) => nix::sys::stat::lstat(path),
        }
    }
}

/// The lines of the file at `location` that `matcher` matches (line
/// numbers and lines without their line ending, in file order), and
/// whether the search failed (the lines found before the failure are
/// kept).
///
/// A file of at most `SLICE_LIMIT` bytes without a NUL byte is read in one
/// go into `buffer` and searched there: no read buffer or BOM sniffing
/// reader per file; with `learning`, that content's trigram filter is kept
/// under `path` for the file's version as `fstat` gave it before the read.
/// Any other file (a larger one, or one with a NUL byte: binary, or
/// UTF-16) is searched from its start by the searcher's reader, as
/// `search_path` would, so binary detection and transcoding decide exactly
/// as before.
fn search_file(
    searcher: &mut Searcher,
    matcher: &RegexMatcher,
    buffer: &mut [u8],
    location: Location<'_>,
    path: &Path,
    learning: Option<Learning<'_>>,
) -> (Vec<(u64, String)>, bool) {
    let mut lines = Vec::new();
    let sink = UTF8(|line, text: &str| {
        lines.push((line, text.trim_end_matches(['\n', '\r']).to_string()));
        Ok(true)
    });
    let result = location.open().and_then(|mut file| {
        let version = learning.and_then(|_| fstat(&file).ok().map(|stat| FileVersion::of(&stat)));
        match read_small(&mut file, buffer) {
            Ok(Some(len)) if !buffer[..len].contains(&0) => {
                if let (Some(learning), Some(version)) = (learning, version) {
                    learning.filters.learn(
                        path,
                        &file,
                        version,
                        &buffer[..len],
                        learning.start,
                        learning.budget,
                    );
                }
                searcher.search_slice(matcher, &buffer[..len], sink)
            }
            _ => file
                .rewind()
                .and_then(|()| searcher.search_file(matcher, &file, sink)),
        }
    });
    (lines, result.is_err())
}

/// The matching lines of one file.
struct FileMatches {
    path: PathBuf,
    modified: SystemTime,
    /// Line numbers and lines (without their line ending), in file order.
    lines: Vec<(u64, String)>,
}

/// One walker thread's searcher and findings.
struct Searching<'r> {
    searcher: Searcher,
    matcher: RegexMatcher,
    /// Where files of at most `SLICE_LIMIT` bytes are read, reused.
    buffer: Vec<u8>,
    /// The folder of the files being met.
    folder: OpenFolder<'r>,
    folders: WalkedFolders,
    found: Vec<FileMatches>,
    hidden: usize,
    /// Files the filters showed hold no match, not read.
    unread: usize,
    errors: bool,
}

/// What [`search_tree`] found.
struct Searched {
    /// The files with matches, newest first (then by path).
    found: Vec<FileMatches>,
    /// Whether some paths could not be read.
    errors: bool,
    /// Files the read rules kept from being searched.
    hidden: usize,
    /// Files not read because their filter rules the pattern out.
    unread: usize,
}

/// How a search uses the file filters: what the pattern requires, when
/// the search began, and the budget (`SearchLimits::grep_index_bytes`).
struct IndexUse {
    required: Required,
    start: SystemTime,
    budget: usize,
}

impl IndexUse {
    /// What a file read in this search may keep in `filters`.
    fn learning<'a>(&self, filters: &'a FileFilters) -> Learning<'a> {
        Learning {
            filters,
            start: self.start,
            budget: self.budget,
        }
    }
}

/// The files under `root` (or `root` itself) with lines matching
/// `matcher`, files newest first (then by path); whether some paths could
/// not be read; and how many files the read rules kept from being
/// searched. Files are walked and searched on the walker's threads; a file
/// the read rules do not allow is never opened, decided before searching
/// so the answer never depends on its content. Only files with matches
/// are stat'ed for their modification time, and, with `index`, the files
/// the filters know (a file whose filter rules the pattern out is not
/// read: it holds no match).
fn search_tree(
    root: &Path,
    opened: &OpenedRoot,
    matcher: &RegexMatcher,
    include: Option<&PathGlob>,
    read_rules: &ReadRules,
    index: Option<&IndexUse>,
    cancelled: &(dyn Fn() -> bool + Sync),
) -> Searched {
    let filters = FileFilters::global();
    let start = || Searching {
        searcher: SearcherBuilder::new()
            .binary_detection(BinaryDetection::quit(0))
            .line_number(true)
            .build(),
        matcher: matcher.clone(),
        buffer: vec![0; SLICE_LIMIT + 1],
        folder: OpenFolder::new(root, opened.folder()),
        folders: WalkedFolders::default(),
        found: Vec::new(),
        hidden: 0,
        unread: 0,
        errors: false,
    };
    let visit = |thread: &mut Searching, file: &Walked<'_>| {
        if include.is_some_and(|include| !include.is_match(file.relative())) {
            return;
        }
        if !read_rules.allows_walked(file.path, file.may_be_link(), &mut thread.folders) {
            thread.hidden += 1;
            return;
        }
        // The root (which may be a link, and lead elsewhere at the next
        // call) is never filtered; it is read through the file opened for
        // this call.
        let index = index.filter(|_| !file.may_be_link());
        let Some(location) = locate(&mut thread.folder, opened.file(), file) else {
            // Its folder is no longer where the walk found it (swapped
            // for a link, removed): not read.
            thread.errors = true;
            return;
        };
        let learning = match index.map(|index| consult(index, filters, file.path, location)) {
            Some(Consulted::NoMatch) => {
                thread.unread += 1;
                return;
            }
            Some(Consulted::Read(learning)) => learning,
            None => None,
        };
        let (lines, failed) = search_file(
            &mut thread.searcher,
            &thread.matcher,
            &mut thread.buffer,
            location,
            file.path,
            learning,
        );
        thread.errors |= failed;
        if !lines.is_empty() {
            thread.found.push(FileMatches {
                path: file.path.to_path_buf(),
                // The file was read through its folder; its time too.
                modified: file
                    .modified_in(&mut thread.folder)
                    .unwrap_or(SystemTime::UNIX_EPOCH),
                lines,
            });
        }
    };
    let (threads, errors) = walk_parallel(root, cancelled, start, visit);
    gather(threads, errors)
}

/// Where the walked `file` is reached: by name in its folder, reached
/// from the search root without following a link; when it is the root (a
/// file the call named), the file opened for the call (`root_file`).
/// `None` when it cannot be reached so.
fn locate<'a>(
    folder: &'a mut OpenFolder<'_>,
    root_file: Option<&'a File>,
    file: &'a Walked<'_>,
) -> Option<Location<'a>> {
    if file.is_root() {
        return root_file.map(Location::Opened);
    }
    let (parent, name) = (file.path.parent()?, file.path.file_name()?);
    Some(Location::At(folder.at(parent)?, name))
}

/// What the filters say of a walked file.
enum Consulted<'a> {
    /// It holds no match: not to be read.
    NoMatch,
    /// Read it, keeping its filter when there is something to learn.
    Read(Option<Learning<'a>>),
}

/// What the filters say of the file at `path`.
fn consult<'a>(
    index: &IndexUse,
    filters: &'a FileFilters,
    path: &Path,
    location: Location<'_>,
) -> Consulted<'a> {
    let Some(entry) = filters.get(path) else {
        return Consulted::Read(Some(index.learning(filters)));
    };
    // A pattern that requires nothing cannot rule the file out: no
    // `lstat`, and the filter is checked by the next search that can use
    // it.
    if !index.required.is_useful() {
        return Consulted::Read(None);
    }
    let Ok(stat) = location.lstat() else {
        return Consulted::Read(None);
    };
    match entry.verdict(&FileVersion::of(&stat), &index.required) {
        Verdict::NoMatch => Consulted::NoMatch,
        Verdict::Known => Consulted::Read(None),
        Verdict::Learn => {
            filters.forget(path, &entry);
            Consulted::Read(Some(index.learning(filters)))
        }
    }
}

/// The walker threads' findings together, files newest first (then by
/// path).
fn gather(threads: Vec<Searching<'_>>, errors: bool) -> Searched {
    let mut searched = Searched {
        found: Vec::new(),
        errors,
        hidden: 0,
        unread: 0,
    };
    for thread in threads {
        searched.found.extend(thread.found);
        searched.hidden += thread.hidden;
        searched.unread += thread.unread;
        searched.errors |= thread.errors;
    }
    searched.found.sort_by(|a, b| {
        b.modified
            .cmp(&a.modified)
            .then_with(|| a.path.cmp(&b.path))
    });
    searched
}

#[async_trait::async_trait]
impl TypedTool for GrepTool {
    type Args = GrepArgs;

    fn effects(&self) -> agentgate_core::ToolEffects {
        // Reads only, or reports its writes to the checkpoints itself.
        agentgate_core::ToolEffects::Declared
    }

    fn id(&self) -> &str {
        "grep"
    }

    fn description(&self) -> &str {
        "Searches file contents with a regular expression (ripgrep syntax), skipping files ignored by .gitignore and binary files. Use include to filter files by glob (`*.rs`). Returns matching lines with their line numbers, grouped by file, most recently modified files first, at most 100."
    }

    async fn run(&self, args: GrepArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        if args.pattern.is_empty() {
            return Err(ToolError::failed("pattern is required"));
        }
        let search = paths::resolve(
            &ctx.directory,
            Path::new(args.path.as_deref().unwrap_or(".")),
        );
        // Where the path leads as the requests see it: what is searched.
        let asked = AskedPath::of(&search);
        let requests = asked.pinned(|| self.requests(&args, &ctx.directory, &ctx.worktree));
        ask_in_order(&requests, ctx).await?;
        if tokio::fs::metadata(&search).await.is_err() {
            return Err(FileError::NotFound {
                path: search,
                suggestions: Vec::new(),
            }
            .into());
        }
        let root = asked.open_root()?;
        let matcher = line_matcher(&args.pattern).map_err(|e| FileError::Pattern {
            pattern: args.pattern.clone(),
            reason: e.to_string(),
        })?;
        let include = args.include.as_deref().map(PathGlob::new).transpose()?;
        let cancel = ctx.cancel.clone();
        let read_rules = ReadRules::of(ctx);
        let index =
            (self.limits.grep_index_bytes > 0 && is_local_path(&search)).then(|| IndexUse {
                required: Required::of(&args.pattern),
                start: SystemTime::now(),
                budget: self.limits.grep_index_bytes,
            });
        let searched = tokio::task::spawn_blocking(move || {
            search_tree(
                &search,
                &root,
                &matcher,
                include.as_ref(),
                &read_rules,
                index.as_ref(),
                &|| cancel.is_cancelled(),
            )
        })
        .await
        .map_err(|e| ToolError::failed(format!("The search stopped unexpectedly: {e}")))?;
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::Cancelled);
        }
        Ok(self.report(args.pattern, searched))
    }
}

#[cfg(test)]
mod tests {
    use grep_matcher::Matcher;

    use super::*;
    use crate::search::open_folder::open_root;

    /// A fresh folder under the system's temporary folder.
    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("agentgate-grep-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// `dir`, opened as a tool opens its search root.
    fn opened(dir: &Path) -> OpenedRoot {
        AskedPath::of(dir).open_root().unwrap()
    }

    fn searcher() -> Searcher {
        SearcherBuilder::new()
            .binary_detection(BinaryDetection::quit(0))
            .line_number(true)
            .build()
    }

    /// What the tool found before: the plain matcher, `search_path`.
    fn old_search(pattern: &str, path: &Path) -> (Vec<(u64, String)>, bool) {
        let matcher = RegexMatcher::new(pattern).unwrap();
        let mut lines = Vec::new();
        let result = searcher().search_path(
            &matcher,
            path,
            UTF8(|line, text| {
                lines.push((line, text.trim_end_matches(['\n', '\r']).to_string()));
                Ok(true)
            }),
        );
        (lines, result.is_err())
    }

    fn new_search(pattern: &str, path: &Path) -> (Vec<(u64, String)>, bool) {
        let matcher = line_matcher(pattern).unwrap();
        let mut buffer = vec![0; SLICE_LIMIT + 1];
        // As the walk reaches it: by name in its open folder.
        let (parent, name) = (path.parent().unwrap(), path.file_name().unwrap());
        let root = open_root(parent);
        let mut folder = OpenFolder::new(parent, root.as_ref());
        let location = Location::At(folder.at(parent).unwrap(), name);
        let by_name = search_file(&mut searcher(), &matcher, &mut buffer, location, path, None);
        let by_path = Location::Path(path);
        let found = search_file(&mut searcher(), &matcher, &mut buffer, by_path, path, None);
        assert_eq!(by_name, found, "{}", path.display());
        found
    }

    #[test]
    fn the_line_matcher_searches_whole_buffers() {
        assert!(
            line_matcher("fn [a-z]+")
                .unwrap()
                .line_terminator()
                .is_some()
        );
        // A literal `\n` cannot be in a line: the plain matcher, which finds
        // nothing, as before.
        let literal = line_matcher(r"a\nb").unwrap();
        assert!(literal.line_terminator().is_none());
        assert!(line_matcher("(").is_err());
    }

    #[test]
    fn finds_the_lines_it_found_before() {
        let dir = scratch("same");
        let text = "fn main() {\r\n    let x = 1;  \n}\n\nfoo bar\nbar foo\nlast line without end";
        std::fs::write(dir.join("a.rs"), text).unwrap();
        // Long enough to be searched by the reader, with matches past the
        // first 64 KB.
        let long: String = (0..5000)
            .map(|i| format!("line {i} fn item_{i}() {{}}\n"))
            .collect();
        assert!(long.len() > SLICE_LIMIT);
        std::fs::write(dir.join("long.rs"), &long).unwrap();
        // Binary: the searcher stops at the NUL, before or after a match.
        std::fs::write(dir.join("bin"), "foo\n\0foo\n").unwrap();
        std::fs::write(
            dir.join("bin-late"),
            format!("foo\n{}\0", "x\n".repeat(40_000)),
        )
        .unwrap();
        // UTF-16 with a BOM is transcoded.
        let utf16: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain("foo bar\nbaz\n".encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        std::fs::write(dir.join("utf16.txt"), utf16).unwrap();
        // Invalid UTF-8 in a matched line fails the search after the
        // lines before it.
        std::fs::write(dir.join("latin1.txt"), b"foo 1\nfoo \xe9\nfoo 3\n").unwrap();
        std::fs::write(dir.join("empty"), "").unwrap();
        let patterns = [
            "foo",
            "^foo",
            "foo$",
            r"\s$",
            r"^\s*$",
            "^",
            "x*",
            r"fn [a-z_0-9]+\(",
            r"line 4999",
            r"a\nb",
            r"(?s)foo.bar",
            r"[^a-z]foo",
            r"\{$",
        ];
        for name in [
            "a.rs",
            "long.rs",
            "bin",
            "bin-late",
            "utf16.txt",
            "latin1.txt",
            "empty",
        ] {
            let path = dir.join(name);
            for pattern in patterns {
                assert_eq!(
                    new_search(pattern, &path),
                    old_search(pattern, &path),
                    "{name}: {pattern}"
                );
            }
        }
        assert_eq!(new_search("foo", &dir.join("bin")), (Vec::new(), false));
        assert_eq!(
            new_search("bar", &dir.join("utf16.txt")).0,
            vec![(1, "foo bar".to_string())]
        );
        assert_eq!(
            new_search("foo", &dir.join("latin1.txt")),
            (vec![(1, "foo 1".to_string())], true)
        );
        assert_eq!(new_search("foo", &dir.join("missing")), (Vec::new(), true));
        assert_eq!(new_search("item_4999", &dir.join("long.rs")).0.len(), 1);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The matches of a search, as `path:line:text`.
    fn hits(searched: &Searched) -> Vec<String> {
        let mut hits: Vec<String> = searched
            .found
            .iter()
            .flat_map(|file| {
                file.lines
                    .iter()
                    .map(move |(line, text)| format!("{}:{line}:{text}", file.path.display()))
            })
            .collect();
        hits.sort();
        hits
    }

    #[test]
    fn the_filters_leave_unread_only_files_without_a_match() {
        use agentgate_permission::{Action, Rule, Ruleset};
        let dir = scratch("filters");
        for i in 0..60 {
            let needle = if i % 20 == 7 { "NEEDLE_7\n" } else { "" };
            std::fs::write(
                dir.join(format!("f{i:02}.rs")),
                format!("let value_{i} = {i};\n{needle}fn item_{i}() {{}}\n"),
            )
            .unwrap();
        }
        std::fs::write(dir.join("big.rs"), "NEEDLE_7\n".repeat(8000)).unwrap();
        let allow = Ruleset(vec![Rule::new("read", "*", Action::Allow)]);
        let rules = ReadRules::new(&allow, &Ruleset::new(), &dir, &dir);
        // As if the files had been written a while before the search.
        let later = SystemTime::now() + std::time::Duration::from_secs(10);
        let search = |pattern: &str, indexed: bool| {
            let index = IndexUse {
                required: Required::of(pattern),
                start: later,
                budget: usize::MAX,
            };
            let matcher = line_matcher(pattern).unwrap();
            let index = indexed.then_some(&index);
            let root = opened(&dir);
            search_tree(&dir, &root, &matcher, None, &rules, index, &|| false)
        };
        let patterns = [
            "NEEDL[E]_7",
            "value_1[0-9]",
            r"\w+ = 4",
            "(?i)needle_7",
            "item_(3|4)5",
            "nowhere",
        ];
        // The first search learns every small file.
        assert_eq!(search(r"\w+", true).unread, 0);
        for pattern in patterns {
            let plain = search(pattern, false);
            let indexed = search(pattern, true);
            assert_eq!(hits(&indexed), hits(&plain), "{pattern}");
            assert_eq!(plain.unread, 0);
            if pattern != r"\w+ = 4" {
                // 50 hold no match; the filters may let a few through.
                assert!(indexed.unread >= 45, "{pattern}: {}", indexed.unread);
            }
        }
        // A file written since (same size, the modification time put back)
        // is read again.
        let path = dir.join("f03.rs");
        let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
        std::fs::write(&path, "let value_3 = 3;\nNEEDLE_7\nfn i\n").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(modified)
            .unwrap();
        let found = hits(&search("NEEDL[E]_7", true));
        assert!(
            found.iter().any(|hit| hit.contains("f03.rs:2:NEEDLE_7")),
            "{found:?}"
        );
        assert_eq!(found, hits(&search("NEEDL[E]_7", false)));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_folder_swapped_for_a_link_during_searches_is_never_read_through() {
        use crate::search::open_folder::racing;
        use agentgate_permission::{Action, Rule, Ruleset};
        let base = scratch("swap");
        let (dir, outside) = (base.join("project"), base.join("outside"));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        for i in 0..40 {
            std::fs::write(dir.join("sub").join(format!("f{i}")), "public\n").unwrap();
            std::fs::write(outside.join(format!("f{i}")), "SECRET\n").unwrap();
        }
        std::os::unix::fs::symlink(&outside, dir.join("swap")).unwrap();
        let allow = Ruleset(vec![Rule::new("read", "*", Action::Allow)]);
        let rules = ReadRules::new(&allow, &Ruleset::new(), &dir, &dir);
        let matcher = line_matcher("SECRET|public").unwrap();
        // A process racing the searches: `sub` and the link to the outside
        // folder exchanged again and again.
        let (read_public, swaps) = racing(&dir.join("sub"), &dir.join("swap"), || {
            let mut read_public = 0;
            for _ in 0..300 {
                let root = opened(&dir);
                let searched = search_tree(&dir, &root, &matcher, None, &rules, None, &|| false);
                let found = hits(&searched);
                assert!(!found.iter().any(|hit| hit.contains("SECRET")), "{found:?}");
                read_public += found.len();
            }
            read_public
        });
        // The race ran, and the searches still found the project's files.
        assert!(swaps > 100, "{swaps}");
        assert!(read_public > 0);
        let _ = std::fs::remove_dir_all(&base);
    }
}
