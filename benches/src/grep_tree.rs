//! The generated tree the search benches grep: `search-vs-rg` (the grep
//! tool against `rg`) and the peers harness's grep-step workload.

use std::path::Path;

/// The token one file in 100 holds (`NEEDLE_<file number>`, on its line 21).
pub const NEEDLE: &str = "NEEDLE_";

const WORDS: &[&str] = &[
    "let", "value", "config", "session", "request", "stream", "parser", "result", "error", "match",
    "return", "async", "await", "struct", "impl", "token", "buffer", "index",
];

/// Writes `files` files under `dir` (100 folders `dNNN` of 100 files
/// `fNNNNN.{rs,ts,md}`, 40 lines of 8 words each, from a fixed xorshift
/// seed, so every tree is the same); file `f` with `f % 100 == 7` holds
/// [`NEEDLE`]`{f}` at the end of its line 21. A marker file
/// `.generated-FILES` makes a second call on the same `dir` a no-op.
/// Returns how many files hold the needle.
pub fn generate_tree(dir: &Path, files: usize) -> std::io::Result<usize> {
    let marker = dir.join(format!(".generated-{files}"));
    if marker.exists() {
        // The files f < FILES with f % 100 == 7.
        return Ok(files.saturating_add(92) / 100);
    }
    let mut state = 0x1234_5678_9abc_def0u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut written = 0;
    for f in 0..files {
        let folder = dir.join(format!("d{:03}", f / 100));
        std::fs::create_dir_all(&folder)?;
        let ext = ["rs", "ts", "md"][f % 3];
        let mut text = String::with_capacity(2048);
        for line in 0..40 {
            for _ in 0..8 {
                text.push_str(WORDS[(next() % WORDS.len() as u64) as usize]);
                text.push(' ');
            }
            if f % 100 == 7 && line == 20 {
                text.push_str(&format!("{NEEDLE}{f}"));
                written += 1;
            }
            text.push('\n');
        }
        std::fs::write(folder.join(format!("f{f:05}.{ext}")), text)?;
    }
    std::fs::write(marker, "")?;
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tree_has_its_needles_and_is_made_once() {
        let dir = std::env::temp_dir().join(format!("grep-tree-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(generate_tree(&dir, 300).unwrap(), 3);
        let text = std::fs::read_to_string(dir.join("d001/f00107.md")).unwrap();
        assert_eq!(
            text.lines().nth(20).unwrap().split(' ').next_back(),
            Some("NEEDLE_107")
        );
        assert_eq!(generate_tree(&dir, 300).unwrap(), 3, "kept, not rewritten");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
