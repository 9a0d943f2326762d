//! Reading the text files a project holds (its configuration, `{file:…}`
//! references, markdown agents, instruction files) with a ceiling: a
//! regular file of at most [`MAX_PROJECT_FILE_BYTES`]. A file the project
//! can point anywhere (a link to `/dev/zero`, a named pipe, a huge log)
//! must not hang or exhaust the agent.

use std::io::Read;
use std::path::Path;

/// The largest project text file read: 8 MiB.
pub const MAX_PROJECT_FILE_BYTES: u64 = 8 * 1024 * 1024;

/// `path`'s text, when it is a regular file (links followed) of at most
/// [`MAX_PROJECT_FILE_BYTES`].
pub(crate) fn read_text(path: &Path) -> std::io::Result<String> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(std::io::Error::other(
            "not a regular file (a device, pipe or socket is not read)",
        ));
    }
    let mut text = String::new();
    std::fs::File::open(path)?
        .take(MAX_PROJECT_FILE_BYTES + 1)
        .read_to_string(&mut text)?;
    if text.len() as u64 > MAX_PROJECT_FILE_BYTES {
        return Err(std::io::Error::other(format!(
            "larger than {} MiB, which is more than any configuration or instruction file needs",
            MAX_PROJECT_FILE_BYTES / (1024 * 1024)
        )));
    }
    Ok(text)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn devices_and_oversized_files_are_refused() {
        assert!(read_text(Path::new("/dev/zero")).is_err());
        let dir =
            std::env::temp_dir().join(format!("agentgate-bounded-read-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let big = dir.join("big.json");
        let file = std::fs::File::create(&big).unwrap();
        file.set_len(MAX_PROJECT_FILE_BYTES + 1).unwrap();
        let error = read_text(&big).unwrap_err();
        assert!(error.to_string().contains("8 MiB"), "{error}");
        std::fs::write(dir.join("ok.json"), "{}").unwrap();
        assert_eq!(read_text(&dir.join("ok.json")).unwrap(), "{}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
