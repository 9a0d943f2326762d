//! Files and folders only their owner may read: what the SDK keeps under
//! the user's data directory (the SQLite store and its `-wal`/`-shm`,
//! approval and session files, spilled outputs) holds transcripts, file
//! contents and command output. Folders are made `0700` and files `0600`
//! whatever the umask, and ones that already exist are tightened when
//! opened. Elsewhere than Unix these do what `std::fs` does.

use std::fs::OpenOptions;
use std::io;
use std::path::Path;

/// The mode of a private folder.
pub const PRIVATE_DIR_MODE: u32 = 0o700;
/// The mode of a private file.
pub const PRIVATE_FILE_MODE: u32 = 0o600;

/// Creates `dir` and its missing parents, each new one exactly `0700`.
/// Folders that existed are left as they are (a parent is the user's,
/// like `~/.local/share`); call [`tighten`] on one the SDK owns.
pub fn create_private_dir_all(dir: &Path) -> io::Result<()> {
    let missing: Vec<&Path> = dir
        .ancestors()
        .filter(|p| !p.as_os_str().is_empty())
        .take_while(|p| std::fs::symlink_metadata(p).is_err())
        .collect();
    for new in missing.into_iter().rev() {
        let mut builder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt;
            builder.mode(PRIVATE_DIR_MODE);
        }
        match builder.create(new) {
            Ok(()) => tighten(new)?,
            // Made meanwhile by another process: not ours to change.
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {}
            Err(error) => return Err(error),
        }
    }
    Ok(())
}

/// Makes `options` create files `0600` (the umask can only take bits
/// away; [`tighten`] after opening sets the mode exactly).
pub fn private_file_options(options: &mut OpenOptions) -> &mut OpenOptions {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(PRIVATE_FILE_MODE);
    }
    options
}

/// Sets an existing folder to `0700` and a file to `0600` when its mode
/// says more (or less, for the owner); a symbolic link or a missing path
/// is left alone.
pub fn tighten(path: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let meta = match std::fs::symlink_metadata(path) {
            Ok(meta) => meta,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(error) => return Err(error),
        };
        let wanted = if meta.is_dir() {
            PRIVATE_DIR_MODE
        } else if meta.is_file() {
            PRIVATE_FILE_MODE
        } else {
            return Ok(());
        };
        if meta.permissions().mode() & 0o777 != wanted {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(wanted))?;
        }
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(path: &Path) -> u32 {
        std::fs::symlink_metadata(path)
            .unwrap()
            .permissions()
            .mode()
            & 0o777
    }

    #[test]
    fn folders_and_files_are_private_and_loose_ones_tightened() {
        let root = std::env::temp_dir().join(format!("agentgate-private-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let dir = root.join("a/b");
        create_private_dir_all(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&root.join("a")), 0o700);
        let file = dir.join("f");
        private_file_options(OpenOptions::new().write(true).create(true))
            .open(&file)
            .unwrap();
        assert_eq!(mode(&file) & 0o077, 0);
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        tighten(&file).unwrap();
        create_private_dir_all(&dir).unwrap();
        assert_eq!(mode(&dir), 0o755, "an existing folder is left as it is");
        tighten(&dir).unwrap();
        assert_eq!((mode(&file), mode(&dir)), (0o600, 0o700));
        let link = dir.join("link");
        std::os::unix::fs::symlink("/etc/hostname", &link).unwrap();
        tighten(&link).unwrap();
        tighten(&dir.join("missing")).unwrap();
        std::fs::remove_dir_all(&root).unwrap();
    }
}
