//! Markdown agent files (YAML front matter + prompt) on arbitrary text,
//! through the crate-root API `agent_core::load_markdown_agents_from`: the
//! input is written as `agent/fuzz.md` in a scratch config directory (one
//! per fuzzing process) and loaded; it never panics.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

fn scratch() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("agent-fuzz-md-{}", std::process::id()));
        let _ = std::fs::create_dir_all(dir.join("agent"));
        dir
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let dir = scratch();
    if std::fs::write(dir.join("agent").join("fuzz.md"), text).is_err() {
        return;
    }
    let _ = agent_core::load_markdown_agents_from(&[dir]);
});
