//! Moving paths to one side of their changes (revert and unrevert): a
//! check phase that changes nothing, then removals deepest first,
//! creations shallowest first (a folder before its files), folder modes
//! last.
//!
//! The changes are input (read back from a session's store, which a
//! hostile repository or a prompt-injected model may have shaped), so no
//! path is trusted: one with `..`, an absolute one, one with NUL or inside
//! `.git` is refused before anything moves, and every write and removal
//! goes through the descriptor of its parent folder, reached from the root
//! without following a link ([`dir_fd`]). A parent that is a link is never
//! written through: when the changes restore that parent as a folder the
//! link is replaced first; otherwise the path is named in an error.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use agentgate_core::{CheckpointError, Direction, FileChange, FileState};
use nix::errno::Errno;
use nix::fcntl::{OFlag, openat, renameat};
use nix::sys::stat::{Mode, fchmod, mkdirat};
use nix::unistd::{UnlinkatFlags, symlinkat, unlinkat};

use crate::checkpoint::dir_fd::{self, Kind, Reach};
use crate::checkpoint::objects::{self, ObjectStore};
use crate::checkpoint::rel_path;

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// One path to move: from the state it should be in to the other.
#[derive(Debug)]
struct Move<'a> {
    rel: &'a str,
    from: &'a Option<FileState>,
    to: &'a Option<FileState>,
}

/// An I/O failure on `rel`.
fn failed(rel: &str, error: impl std::fmt::Display) -> CheckpointError {
    CheckpointError::Io {
        path: PathBuf::from(rel),
        message: error.to_string(),
    }
}

/// Permission bits as nix's `Mode`.
#[allow(clippy::unnecessary_cast)]
fn mode_bits(bits: u32) -> Mode {
    Mode::from_bits_truncate((bits & 0o7777) as nix::libc::mode_t)
}

/// Moves every path of `changes` in `direction` (see the module docs):
/// the paths moved.
pub(crate) fn apply(
    root: &Path,
    objects: &ObjectStore,
    changes: &[FileChange],
    direction: Direction,
    force: bool,
) -> Result<Vec<String>, CheckpointError> {
    let moves = moves(changes, direction)?;
    for step in &moves {
        if let Some(FileState::File { blob, .. }) = step.to
            && !objects.contains(blob)
        {
            let (path, blob) = (step.rel.to_string(), blob.clone());
            return Err(CheckpointError::Missing { path, blob });
        }
    }
    let root_fd = dir_fd::open_root(root).map_err(|error| failed("", error))?;
    if !force {
        let conflicts = conflicts(&root_fd, root, &moves).map_err(|e| failed("", e))?;
        if !conflicts.is_empty() {
            return Err(CheckpointError::Conflict { paths: conflicts });
        }
    }
    let mut errors = Vec::new();
    remove_phase(&root_fd, root, &moves, &mut errors);
    create_phase(&root_fd, objects, &moves, &mut errors);
    mode_phase(&root_fd, &moves, &mut errors);
    match errors.into_iter().next() {
        Some(error) => Err(error),
        None => Ok(moves.iter().map(|step| step.rel.to_string()).collect()),
    }
}

/// The moves of `changes`, each path checked.
fn moves(changes: &[FileChange], direction: Direction) -> Result<Vec<Move<'_>>, CheckpointError> {
    let mut moves = Vec::with_capacity(changes.len());
    for change in changes {
        if let Some(why) = rel_path::invalid(&change.path) {
            let message =
                format!("refused: {why}; the checkpoint record is damaged or was tampered with");
            return Err(failed(&change.path, message));
        }
        let (from, to) = match direction {
            Direction::Back => (&change.after, &change.before),
            _ => (&change.before, &change.after),
        };
        moves.push(Move {
            rel: &change.path,
            from,
            to,
        });
    }
    Ok(moves)
}

/// What `rel` is now, a file by the hash of its content (nothing
/// stored); `None` when absent or behind a link.
fn current(root_fd: &OwnedFd, rel: &str) -> io::Result<Option<FileState>> {
    let components = rel_path::components(rel);
    let Reach::Parent(parent) = dir_fd::reach_parent(root_fd, &components)? else {
        return Ok(None);
    };
    let name = components.last().copied().unwrap_or_default();
    let Some(stat) = dir_fd::lstat_at(&parent, name)? else {
        return Ok(None);
    };
    let mode = dir_fd::permission_bits(&stat);
    Ok(match dir_fd::kind_of_mode(dir_fd::mode_of(&stat)) {
        Kind::Dir => Some(FileState::Dir { mode }),
        Kind::Symlink => Some(FileState::Symlink {
            target: dir_fd::read_link_at(&parent, name)?,
        }),
        Kind::File => {
            let file = dir_fd::open_file_at(&parent, name)?;
            let (blob, size) = objects::copy_hashed(file, io::sink())?;
            Some(FileState::File { blob, mode, size })
        }
        // Something the checkpoints never record: it differs from any
        // recorded state.
        Kind::Other => Some(FileState::Symlink {
            target: PathBuf::from("\0special"),
        }),
    })
}

/// Whether `now` is the recorded state `expected` (a file by content and
/// mode, a link by target, a folder by mode).
fn same(now: &Option<FileState>, expected: &Option<FileState>) -> bool {
    match (now, expected) {
        (None, None) => true,
        (
            Some(FileState::File { blob, mode, .. }),
            Some(FileState::File {
                blob: want,
                mode: want_mode,
                ..
            }),
        ) => blob == want && mode == want_mode,
        (Some(FileState::Symlink { target }), Some(FileState::Symlink { target: want })) => {
            target == want
        }
        (Some(FileState::Dir { mode }), Some(FileState::Dir { mode: want })) => mode == want,
        _ => false,
    }
}

/// The paths not in the state they move from, and the entries of a folder
/// to be removed that the changes do not remove.
fn conflicts(root_fd: &OwnedFd, root: &Path, moves: &[Move<'_>]) -> io::Result<Vec<String>> {
    let removed: std::collections::HashSet<&str> = (moves.iter())
        .filter(|step| step.to.is_none())
        .map(|step| step.rel)
        .collect();
    let mut conflicts = Vec::new();
    for step in moves {
        let now = current(root_fd, step.rel)?;
        if !same(&now, step.from) {
            conflicts.push(step.rel.to_string());
        } else if step.to.is_none() && matches!(now, Some(FileState::Dir { .. })) {
            let Ok(entries) = std::fs::read_dir(root.join(step.rel)) else {
                continue;
            };
            for entry in entries.flatten() {
                let child = format!("{}/{}", step.rel, entry.file_name().to_string_lossy());
                if !removed.contains(child.as_str()) {
                    conflicts.push(child);
                }
            }
        }
    }
    conflicts.sort();
    conflicts.dedup();
    Ok(conflicts)
}

/// Whether an entry of `kind` must go before `to` can be put in its place.
fn must_remove(kind: Kind, to: &Option<FileState>) -> bool {
    !matches!(
        (kind, to),
        (Kind::Dir, Some(FileState::Dir { .. }))
            | (Kind::File, Some(FileState::File { .. }))
            | (Kind::Symlink, Some(FileState::Symlink { .. }))
    )
}

/// Removes what is in the way, deepest first. A path behind a link or
/// under a missing folder is not touched (there is nothing of the
/// project's there).
fn remove_phase(
    root_fd: &OwnedFd,
    root: &Path,
    moves: &[Move<'_>],
    errors: &mut Vec<CheckpointError>,
) {
    let mut order: Vec<&Move<'_>> = moves.iter().collect();
    order.sort_by_key(|step| std::cmp::Reverse(rel_path::depth(step.rel)));
    for step in order {
        let components = rel_path::components(step.rel);
        let name = components.last().copied().unwrap_or_default();
        let parent = match dir_fd::reach_parent(root_fd, &components) {
            Ok(Reach::Parent(parent)) => parent,
            Ok(_) => continue,
            Err(error) => {
                errors.push(failed(step.rel, error));
                continue;
            }
        };
        let kind = match dir_fd::lstat_at(&parent, name) {
            Ok(Some(stat)) => dir_fd::kind_of_mode(dir_fd::mode_of(&stat)),
            Ok(None) => continue,
            Err(error) => {
                errors.push(failed(step.rel, error));
                continue;
            }
        };
        if must_remove(kind, step.to)
            && let Err(error) = remove(&parent, name, kind, &root.join(step.rel))
        {
            errors.push(failed(step.rel, error));
        }
    }
}

/// Removes `name` of kind `kind` from `parent`; a folder that is not
/// empty (only when forced: the check phase refuses it otherwise) with
/// its contents, links inside it removed, not followed.
fn remove(parent: &OwnedFd, name: &str, kind: Kind, full: &Path) -> io::Result<()> {
    if kind != Kind::Dir {
        return unlinkat(parent, name, UnlinkatFlags::NoRemoveDir).map_err(io::Error::from);
    }
    match unlinkat(parent, name, UnlinkatFlags::RemoveDir) {
        Err(Errno::ENOTEMPTY | Errno::EEXIST) => std::fs::remove_dir_all(full),
        other => other.map_err(io::Error::from),
    }
}

/// Creates and writes, shallowest first.
fn create_phase(
    root_fd: &OwnedFd,
    objects: &ObjectStore,
    moves: &[Move<'_>],
    errors: &mut Vec<CheckpointError>,
) {
    let mut order: Vec<&Move<'_>> = moves.iter().filter(|step| step.to.is_some()).collect();
    order.sort_by_key(|step| rel_path::depth(step.rel));
    for step in order {
        if let Err(error) = create(root_fd, objects, step) {
            errors.push(error);
        }
    }
}

/// Puts `step.rel` in its `to` state.
fn create(
    root_fd: &OwnedFd,
    objects: &ObjectStore,
    step: &Move<'_>,
) -> Result<(), CheckpointError> {
    let components = rel_path::components(step.rel);
    let name = components.last().copied().unwrap_or_default();
    let parent = parent_folder(root_fd, &components).map_err(|e| failed(step.rel, e))?;
    let result = match step.to {
        Some(FileState::Dir { .. }) => match dir_fd::lstat_at(&parent, name) {
            Ok(Some(_)) => Ok(()),
            Ok(None) => mkdirat(&parent, name, mode_bits(0o700)).map_err(io::Error::from),
            Err(error) => Err(error),
        },
        Some(FileState::File { blob, mode, .. }) => {
            return write_file(&parent, name, objects, blob, *mode, step.rel);
        }
        Some(FileState::Symlink { target }) => {
            let temp = temp_name();
            symlinkat(target.as_path(), &parent, temp.as_str())
                .and_then(|()| renameat(&parent, temp.as_str(), &parent, name))
                .map_err(io::Error::from)
        }
        // A kind this version does not know, or nothing: left as it is.
        _ => Ok(()),
    };
    result.map_err(|error| failed(step.rel, error))
}

/// A fresh temporary name in a folder of the project.
fn temp_name() -> String {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!(".agentgate-checkpoint.{}.{n}.tmp", std::process::id())
}

/// The parent folder of `components`, creating missing folders (mode
/// 0o755) without following a link; a link or file in the way is an
/// error.
fn parent_folder(root_fd: &OwnedFd, components: &[&str]) -> io::Result<OwnedFd> {
    let mut current = root_fd.try_clone()?;
    let parents = components
        .split_last()
        .map(|(_, parents)| parents)
        .unwrap_or_default();
    for name in parents {
        current = match dir_fd::open_dir_at(&current, name) {
            Ok(fd) => fd,
            Err(Errno::ENOENT) => {
                mkdirat(&current, *name, mode_bits(0o755))?;
                dir_fd::open_dir_at(&current, name)?
            }
            Err(Errno::ELOOP | Errno::ENOTDIR) => {
                return Err(io::Error::other(format!(
                    "its parent `{name}` is a symbolic link or a file, not a folder; nothing is written through it (move it away, or revert the change that made it, then revert again)"
                )));
            }
            Err(errno) => return Err(errno.into()),
        };
    }
    Ok(current)
}

/// Writes object `blob` as `name` in `parent` with `mode`: a temporary
/// file renamed into place, its content checked against its id.
fn write_file(
    parent: &OwnedFd,
    name: &str,
    objects: &ObjectStore,
    blob: &str,
    mode: u32,
    rel: &str,
) -> Result<(), CheckpointError> {
    let missing = || CheckpointError::Missing {
        path: rel.to_string(),
        blob: blob.to_string(),
    };
    let source = objects
        .open(blob)
        .map_err(|e| failed(rel, e))?
        .ok_or_else(missing)?;
    let temp = temp_name();
    let flags =
        OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let fd = openat(parent, temp.as_str(), flags, mode_bits(0o600)).map_err(|e| failed(rel, e))?;
    let file = std::fs::File::from(fd);
    let written = objects::copy_hashed(source, io::BufWriter::new(&file))
        .map_err(|e| failed(rel, e))
        .and_then(|(hash, _)| if hash == blob { Ok(()) } else { Err(missing()) })
        .and_then(|()| fchmod(file.as_fd(), mode_bits(mode)).map_err(|e| failed(rel, e)))
        .and_then(|()| renameat(parent, temp.as_str(), parent, name).map_err(|e| failed(rel, e)));
    if written.is_err() {
        let _ = unlinkat(parent, temp.as_str(), UnlinkatFlags::NoRemoveDir);
    }
    written
}

/// Sets the mode of each folder moved to a folder, deepest first (after
/// its contents are written, so a read-only folder can be restored).
fn mode_phase(root_fd: &OwnedFd, moves: &[Move<'_>], errors: &mut Vec<CheckpointError>) {
    let mut order: Vec<(&str, u32)> = (moves.iter())
        .filter_map(|step| match step.to {
            Some(FileState::Dir { mode }) => Some((step.rel, *mode)),
            _ => None,
        })
        .collect();
    order.sort_by_key(|(rel, _)| std::cmp::Reverse(rel_path::depth(rel)));
    for (rel, mode) in order {
        let components = rel_path::components(rel);
        let name = components.last().copied().unwrap_or_default();
        let result = match dir_fd::reach_parent(root_fd, &components) {
            Ok(Reach::Parent(parent)) => dir_fd::open_dir_at(&parent, name)
                .and_then(|folder| fchmod(folder.as_fd(), mode_bits(mode)))
                .map_err(io::Error::from),
            Ok(_) => Err(io::Error::other("its parent is not a folder")),
            Err(error) => Err(error),
        };
        if let Err(error) = result {
            errors.push(failed(rel, error));
        }
    }
}
