//! What the tests share: temporary directories and the PostgreSQL options
//! of one test (its own schema, so tests run in parallel).

use std::path::PathBuf;

use agentgate_store::PostgresOptions;

/// A fresh directory under the system temp dir, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!(
            "agentgate-store-{name}-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The options of test `name` in its own schema, or `None` (having said
/// the test is skipped) when `AGENTGATE_TEST_POSTGRES` is unset.
pub fn postgres(name: &str) -> Option<PostgresOptions> {
    match std::env::var("AGENTGATE_TEST_POSTGRES") {
        Ok(url) if !url.trim().is_empty() => {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .subsec_nanos();
            let schema = format!("t_{name}_{}_{nanos}", std::process::id());
            Some(PostgresOptions::new(url).schema(schema))
        }
        _ => {
            println!(
                "skipped: {name} needs PostgreSQL; set AGENTGATE_TEST_POSTGRES=postgres://user@host:port/db"
            );
            None
        }
    }
}
