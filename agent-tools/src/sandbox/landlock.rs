//! The Landlock ruleset of a call, built in the parent with the `landlock`
//! crate and enforced in the child (see `child`).
//!
//! Landlock only grants: a rule on a directory covers everything beneath
//! it, and nothing can be taken away below a granted directory. So "read
//! everywhere except these paths" becomes: a read rule on `/`, or, when
//! paths are denied, read rules on every sibling along the way from `/` to
//! each denied path (the ancestors themselves get no rule: listing them
//! fails, reading and running everything else in them works). Symbolic
//! links among those siblings get no rule of their own; their targets are
//! covered where they live.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use landlock::{
    ABI, Access, AccessFs, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreated, RulesetCreatedAttr, RulesetError,
};

/// The Landlock ABI whose file system rights this module was written and
/// tested against; newer kernels get exactly these, older ones what they
/// support (best effort, reported by [`abi`]).
const ABI_USED: ABI = ABI::V5;

/// Device files every mode may read and write.
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
];

/// The Landlock ABI this kernel supports, up to the one used here (5), or
/// `None` without Landlock. Probed once per process.
pub(super) fn abi() -> Option<u8> {
    static ABI_FOUND: OnceLock<Option<u8>> = OnceLock::new();
    *ABI_FOUND.get_or_init(|| {
        [(5, ABI::V5), (3, ABI::V3), (2, ABI::V2), (1, ABI::V1)]
            .into_iter()
            .find(|(_, abi)| {
                Ruleset::default()
                    .set_compatibility(CompatLevel::HardRequirement)
                    .handle_access(AccessFs::from_all(*abi))
                    .and_then(|ruleset| ruleset.create())
                    .is_ok()
            })
            .map(|(n, _)| n)
    })
}

/// The ruleset for a call: read (and execute) everywhere except under
/// `denied`, full access under `writable` and to the null-like devices.
/// All paths absolute and canonical; missing ones are skipped. `None` when
/// the kernel has no Landlock.
pub(super) fn ruleset(
    denied: &[PathBuf],
    writable: &[PathBuf],
) -> Result<Option<OwnedFd>, RulesetError> {
    let read = AccessFs::from_read(ABI_USED);
    let all = AccessFs::from_all(ABI_USED);
    let mut ruleset = Ruleset::default().handle_access(all)?.create()?;
    ruleset = add_readable(ruleset, Path::new("/"), denied, read)?;
    for dir in writable {
        ruleset = add(ruleset, dir, all)?;
    }
    for device in DEVICES {
        ruleset = add(ruleset, Path::new(device), all)?;
    }
    Ok(ruleset.into())
}

/// Read rules for `dir`, leaving out `denied` paths beneath it.
fn add_readable(
    mut ruleset: RulesetCreated,
    dir: &Path,
    denied: &[PathBuf],
    read: BitFlags<AccessFs>,
) -> Result<RulesetCreated, RulesetError> {
    if !denied.iter().any(|d| d.starts_with(dir)) {
        return add(ruleset, dir, read);
    }
    if denied.iter().any(|d| d == dir) {
        return Ok(ruleset);
    }
    // An ancestor of a denied path: rules on its entries, not on itself.
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(ruleset);
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let is_symlink = entry.file_type().is_ok_and(|t| t.is_symlink());
        if is_symlink || denied.iter().any(|d| d == &path) {
            continue;
        }
        ruleset = add_readable(ruleset, &path, denied, read)?;
    }
    Ok(ruleset)
}

/// One rule for `path` (a file gets only the file rights of `access`);
/// a path that cannot be opened is skipped.
fn add(
    ruleset: RulesetCreated,
    path: &Path,
    access: BitFlags<AccessFs>,
) -> Result<RulesetCreated, RulesetError> {
    let Ok(fd) = PathFd::new(path) else {
        tracing::debug!(path = %path.display(), "sandbox: no rule for a path that cannot be opened");
        return Ok(ruleset);
    };
    let access = if path.is_dir() {
        access
    } else {
        access & AccessFs::from_file(ABI_USED)
    };
    ruleset.add_rule(PathBeneath::new(fd, access))
}
