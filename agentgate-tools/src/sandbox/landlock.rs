//! The Landlock ruleset of a call, built in the parent with the `landlock`
//! crate from the session's held descriptors (see `roots`) and enforced in
//! the child (see `child`).
//!
//! Landlock only grants: a rule on a directory covers everything beneath
//! it, and nothing can be taken away below a granted directory. So "read
//! everywhere except these paths" becomes: a read rule on `/`, or, when
//! paths are denied, read rules on every sibling along the way from `/` to
//! each denied path (the ancestors themselves get no rule: listing them
//! fails, reading and running everything else in them works); `roots`
//! computes those once per session.

use std::os::fd::{AsFd, OwnedFd};
use std::sync::OnceLock;

use landlock::{
    ABI, Access, AccessFs, BitFlags, CompatLevel, Compatible, PathBeneath, Ruleset, RulesetAttr,
    RulesetCreated, RulesetCreatedAttr, RulesetError,
};

use super::roots::{Held, devices};

/// The Landlock ABI whose file system rights this module was written and
/// tested against; newer kernels get exactly these, older ones what they
/// support (best effort, reported by [`abi`]).
const ABI_USED: ABI = ABI::V5;

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

/// The ruleset for a call: read (and execute) through `readable`, listing
/// of `listable` (the denied paths' ancestors), full access under
/// `writable` and to the null-like devices. `None` when the
/// kernel has no Landlock.
pub(super) fn ruleset<'a>(
    readable: &[Held],
    listable: &[Held],
    writable: impl IntoIterator<Item = &'a Held>,
) -> Result<Option<OwnedFd>, RulesetError> {
    let read = AccessFs::from_read(ABI_USED);
    let all = AccessFs::from_all(ABI_USED);
    let writable: Vec<&Held> = writable.into_iter().collect();
    // A rule beneath a writable root adds nothing (that root grants every
    // access beneath it), and the read rules around a denied path inside
    // one can be many: every entry of `/tmp` for a path denied there.
    let covered = |held: &Held| {
        writable
            .iter()
            .any(|root| root.dir && held.path.starts_with(&root.path))
    };
    let mut ruleset = Ruleset::default().handle_access(all)?.create()?;
    for held in readable.iter().filter(|held| !covered(held)) {
        ruleset = add(ruleset, held, read)?;
    }
    for held in listable.iter().filter(|held| !covered(held)) {
        ruleset = add(ruleset, held, AccessFs::ReadDir.into())?;
    }
    for held in writable {
        ruleset = add(ruleset, held, all)?;
    }
    for device in devices() {
        ruleset = add(ruleset, device, all)?;
    }
    Ok(ruleset.into())
}

/// One rule for `held` (a file gets only the file rights of `access`).
fn add(
    ruleset: RulesetCreated,
    held: &Held,
    access: BitFlags<AccessFs>,
) -> Result<RulesetCreated, RulesetError> {
    let access = if held.dir {
        access
    } else {
        access & AccessFs::from_file(ABI_USED)
    };
    ruleset.add_rule(PathBeneath::new(held.fd.as_fd(), access))
}
