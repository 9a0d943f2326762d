//! Where a tool that truncates its own output keeps the full text: a new
//! file in the spill directory, written by the agent **without following
//! links** (every directory on the way is opened with `O_NOFOLLOW`, the
//! file with `O_CREAT | O_EXCL`), so a command that replaced the directory
//! with a link between two calls cannot make the agent write elsewhere.
//!
//! The spill directory is resolved to its canonical form once per process
//! (the first time it is used, before a command could move it), and never
//! becomes a writable root of the sandbox; commands read it like any other
//! readable path.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use agentgate_core::truncation::{Truncator, truncate};

/// `output` as the model should see it: unchanged when it fits the
/// truncator's limits, else its head and a note saying how much was cut
/// and where the full output was saved (the same note as
/// [`Truncator::apply`]).
pub(crate) async fn truncate_and_spill(
    truncator: &Truncator,
    tool: &str,
    output: String,
) -> String {
    let Some(cut) = truncate(&output, &truncator.limits) else {
        return output;
    };
    let dir = truncator.spill_dir.clone();
    let name = spill_name(tool);
    let text = output.clone();
    let saved = tokio::task::spawn_blocking(move || write_new(&dir, &name, text.as_bytes()))
        .await
        .unwrap_or_else(|error| Err(std::io::Error::other(error.to_string())));
    cut.notice(saved.as_ref().map(PathBuf::as_path))
}

/// A file name no earlier spill of this process used.
fn spill_name(tool: &str) -> String {
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let safe: String = tool
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let n = COUNT.fetch_add(1, Ordering::Relaxed);
    format!("{safe}_out_{nanos:x}_{}_{n}.txt", std::process::id())
}

/// The canonical form of `dir`, fixed on its first use: its nearest
/// existing ancestor made canonical, then the rest as written.
fn fixed_dir(dir: &Path) -> PathBuf {
    static FIXED: Mutex<Option<HashMap<PathBuf, PathBuf>>> = Mutex::new(None);
    let mut fixed = match FIXED.lock() {
        Ok(fixed) => fixed,
        Err(poisoned) => poisoned.into_inner(),
    };
    let map = fixed.get_or_insert_with(HashMap::new);
    if let Some(known) = map.get(dir) {
        return known.clone();
    }
    let resolved = dir
        .ancestors()
        .find_map(|ancestor| {
            let canonical = ancestor.canonicalize().ok()?;
            let rest = dir.strip_prefix(ancestor).ok()?;
            Some(canonical.join(rest))
        })
        .unwrap_or_else(|| dir.to_path_buf());
    map.insert(dir.to_path_buf(), resolved.clone());
    resolved
}

/// Writes `bytes` to the new file `name` in `dir`; its path.
fn write_new(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<PathBuf> {
    let dir = fixed_dir(dir);
    #[cfg(target_os = "linux")]
    let mut file = crate::sandbox::create_new_file(&dir, name)?;
    #[cfg(not(target_os = "linux"))]
    let mut file = {
        std::fs::create_dir_all(&dir)?;
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(dir.join(name))?
    };
    file.write_all(bytes)?;
    // Files are made 0600 and new folders 0700; one that an earlier
    // version made 0755 is tightened. Best effort: a shared folder of
    // another user's cannot be, and the file itself is private anyway.
    if let Err(error) = agentgate_permission::private_files::tighten(&dir) {
        tracing::debug!(%error, dir = %dir.display(), "spill folder left as it is");
    }
    Ok(dir.join(name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentgate_core::truncation::TruncationLimits;

    fn truncator(dir: &Path) -> Truncator {
        Truncator {
            limits: TruncationLimits {
                max_lines: 1,
                max_bytes: 1000,
            },
            spill_dir: dir.to_path_buf(),
        }
    }

    #[tokio::test]
    async fn spills_and_never_through_a_swapped_link() {
        let root = std::env::temp_dir().join(format!("spill-unit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let dir = root.join("data").join("tool-output");
        let out = truncate_and_spill(&truncator(&dir), "bash", "a\nb\nc".into()).await;
        let path = out
            .split("saved to: ")
            .nth(1)
            .unwrap()
            .lines()
            .next()
            .unwrap();
        assert_eq!(std::fs::read_to_string(path).unwrap(), "a\nb\nc");
        // Only the owner may read a spill, or list its folder; a folder
        // left open (by an earlier version) is tightened.
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!((mode(path.as_ref()), mode(&dir)), (0o600, 0o700));
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        truncate_and_spill(&truncator(&dir), "bash", "d\ne\nf".into()).await;
        assert_eq!(mode(&dir), 0o700);

        // The directory becomes a link to somewhere else: nothing is
        // written there.
        let elsewhere = root.join("elsewhere");
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &dir).unwrap();
        let out = truncate_and_spill(&truncator(&dir), "bash", "a\nb\nc".into()).await;
        assert!(out.contains("could not be saved"), "{out}");
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
        std::fs::remove_dir_all(root).unwrap();
    }
}
