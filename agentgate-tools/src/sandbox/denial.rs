//! Turning the sandbox's denials into words the model understands. A
//! blocked write surfaces in a command's output only as "Permission
//! denied", "Operation not permitted" or "Read-only file system"; when the
//! path in that line lies outside the writable set (or inside a denied
//! path), the tool adds a note saying the sandbox blocked it. A path the
//! agent itself could not write either (file permissions, not the sandbox)
//! is left alone.

use std::path::{Path, PathBuf};

use serde::Serialize;

/// What the sandbox blocked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum DenialKind {
    /// A write outside the writable set.
    Write,
    /// A read of a denied path.
    Read,
    /// A connection while the network is off.
    Network,
}

/// A denial recognised in a command's output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct SandboxDenial {
    /// What was blocked.
    pub kind: DenialKind,
    /// The path, for file system denials.
    pub path: Option<PathBuf>,
}

impl SandboxDenial {
    /// The sentence the model sees.
    pub fn message(&self) -> String {
        let path = self
            .path
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        match self.kind {
            DenialKind::Write => {
                format!("write outside the workspace was blocked by the sandbox: {path}")
            }
            DenialKind::Read => {
                format!("read of a protected path was blocked by the sandbox: {path}")
            }
            DenialKind::Network => {
                "network access was blocked by the sandbox (the network is off for commands)"
                    .to_string()
            }
        }
    }
}

/// What the scan needs to know about the call's boundary.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Boundary<'a> {
    /// Where relative paths in the output are resolved.
    pub cwd: &'a Path,
    /// Writable roots (canonical); `None` when writes are not restricted.
    pub writable: Option<&'a [PathBuf]>,
    /// Denied read paths (canonical).
    pub denied: &'a [PathBuf],
    /// Whether the network is off.
    pub network_off: bool,
    /// Whether the (unsandboxed) agent could write `path`, or create it:
    /// only then was the sandbox what stopped the command.
    pub could_write: fn(&Path) -> bool,
}

const FS_MARKERS: &[&str] = &[
    "Permission denied",
    "Operation not permitted",
    "Read-only file system",
    "EACCES",
    "EPERM",
    "EROFS",
];

const NETWORK_MARKERS: &[&str] = &[
    "Network is unreachable",
    "ENETUNREACH",
    "Temporary failure in name resolution",
    "Could not resolve host",
    "Name or service not known",
    "No address associated with hostname",
];

/// The sandbox denials `output` shows, in order, without duplicates.
pub(crate) fn find_denials(output: &str, boundary: &Boundary<'_>) -> Vec<SandboxDenial> {
    let mut found: Vec<SandboxDenial> = Vec::new();
    let mut push = |denial: SandboxDenial| {
        if !found.contains(&denial) {
            found.push(denial);
        }
    };
    // No marker holds a line break: one the whole output lacks is in none
    // of its lines (most outputs have none, and are not split at all).
    let network = boundary.network_off && NETWORK_MARKERS.iter().any(|m| output.contains(m));
    if !network && !FS_MARKERS.iter().any(|m| output.contains(m)) {
        return found;
    }
    for line in output.lines() {
        if network && NETWORK_MARKERS.iter().any(|m| line.contains(m)) {
            push(SandboxDenial {
                kind: DenialKind::Network,
                path: None,
            });
        }
        if !FS_MARKERS.iter().any(|m| line.contains(m)) {
            continue;
        }
        let candidates: Vec<&str> = path_candidates(line).collect();
        // `/usr/bin/bash: line 1: /x: Permission denied`: the first path is
        // the program reporting, not what it was refused.
        let program = usize::from(candidates.len() > 1 && reports_as_program(line));
        for candidate in candidates.into_iter().skip(program) {
            let path = resolve(boundary.cwd, candidate);
            if boundary.denied.iter().any(|d| path.starts_with(d)) {
                push(SandboxDenial {
                    kind: DenialKind::Read,
                    path: Some(path),
                });
            } else if let Some(writable) = boundary.writable
                && !writable.iter().any(|w| path.starts_with(w))
                && !is_device(&path)
                && !is_process_file(&path)
                && (boundary.could_write)(&path)
            {
                push(SandboxDenial {
                    kind: DenialKind::Write,
                    path: Some(path),
                });
            }
        }
    }
    found
}

/// Words of `line` that look like paths: absolute, `./`, `../` or `~/`,
/// with the quotes and punctuation tools put around them removed.
fn path_candidates(line: &str) -> impl Iterator<Item = &str> {
    line.split(|c: char| c.is_whitespace() || matches!(c, '\'' | '"' | '`' | ',' | '(' | ')'))
        .map(|word| word.trim_end_matches([':', ';', '.']))
        .map(|word| word.trim_start_matches(['[', '{']))
        .filter(|word| {
            word.len() > 1
                && (word.starts_with('/') || word.starts_with("./") || word.starts_with("../"))
        })
}

/// `candidate` against `cwd`, with `.` and `..` folded lexically, and the
/// existing part canonicalised so it compares with canonical roots.
fn resolve(cwd: &Path, candidate: &str) -> PathBuf {
    let joined = cwd.join(candidate);
    let mut normal = PathBuf::new();
    for part in joined.components() {
        match part {
            std::path::Component::ParentDir => {
                normal.pop();
            }
            std::path::Component::CurDir => {}
            other => normal.push(other),
        }
    }
    // Canonicalise the longest existing prefix (the file itself usually
    // does not exist: its creation was blocked).
    let mut existing = normal.as_path();
    let mut rest = Vec::new();
    while !existing.exists() {
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                existing = parent;
            }
            _ => return normal,
        }
    }
    let mut out = existing
        .canonicalize()
        .unwrap_or_else(|_| existing.to_path_buf());
    out.extend(rest.iter().rev());
    out
}

fn is_device(path: &Path) -> bool {
    path.starts_with("/dev/")
}

/// Files of `/proc`: the command's own namespace's, where a refusal comes
/// from the kernel's rules on processes (another process's `environ`,
/// `mem`, `maps`), not from the sandbox's writable set.
fn is_process_file(path: &Path) -> bool {
    path.starts_with("/proc")
}

/// Whether `line` starts with a path followed by a colon (a program
/// naming itself, as bash does when run by path).
fn reports_as_program(line: &str) -> bool {
    line.split_whitespace()
        .next()
        .is_some_and(|first| first.starts_with('/') && first.ends_with(':'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn boundary<'a>(writable: &'a [PathBuf], denied: &'a [PathBuf]) -> Boundary<'a> {
        Boundary {
            cwd: Path::new("/nonexistent-project"),
            writable: Some(writable),
            denied,
            network_off: true,
            could_write: |path| !path.starts_with("/nonexistent-readonly"),
        }
    }

    #[test]
    fn write_denials_from_common_tools() {
        let writable = [PathBuf::from("/nonexistent-project")];
        let output = "\
touch: cannot touch '/nonexistent-outside/a': Permission denied
PermissionError: [Errno 13] Permission denied: '/nonexistent-outside/b'
bash: ../nonexistent-elsewhere/c: Read-only file system
bash: ./inside: Permission denied
cat: /nonexistent-readonly/shadow: Permission denied
curl: (7) Failed to connect to 127.0.0.1 port 1: Network is unreachable
";
        let denials = find_denials(output, &boundary(&writable, &[]));
        let messages: Vec<String> = denials.iter().map(SandboxDenial::message).collect();
        assert_eq!(
            messages,
            [
                "write outside the workspace was blocked by the sandbox: /nonexistent-outside/a",
                "write outside the workspace was blocked by the sandbox: /nonexistent-outside/b",
                "write outside the workspace was blocked by the sandbox: /nonexistent-elsewhere/c",
                "network access was blocked by the sandbox (the network is off for commands)",
            ]
        );
    }

    #[test]
    fn the_program_naming_itself_and_proc_files_are_not_write_denials() {
        let writable = [PathBuf::from("/nonexistent-project")];
        let output = "\
/usr/bin/bash: line 1: /proc/1/environ: Permission denied
PermissionError: [Errno 13] Permission denied: '/proc/1/mem'
/usr/bin/bash: line 2: /nonexistent-outside/d: Permission denied
/nonexistent-outside/e: Permission denied
";
        let denials = find_denials(output, &boundary(&writable, &[]));
        let paths: Vec<&Path> = denials.iter().filter_map(|d| d.path.as_deref()).collect();
        assert_eq!(
            paths,
            [
                Path::new("/nonexistent-outside/d"),
                Path::new("/nonexistent-outside/e")
            ]
        );
    }

    #[test]
    fn reads_of_denied_paths_and_quiet_output() {
        let writable = [PathBuf::from("/nonexistent-project")];
        let denied = [PathBuf::from("/nonexistent-secrets")];
        let output = "cat: /nonexistent-secrets/key: Permission denied\nall good\n";
        let denials = find_denials(output, &boundary(&writable, &denied));
        assert_eq!(denials.len(), 1);
        assert_eq!(denials[0].kind, DenialKind::Read);
        assert!(find_denials("ok\n/etc/passwd exists\n", &boundary(&writable, &denied)).is_empty());
    }
}
