//! Identifiers for messages, parts and sessions.
//!
//! Ids are `prefix_` followed by 20 hex digits: the creation time in
//! milliseconds and a process-wide counter, so ids of one process sort in
//! creation order (as opencode's ascending ids do).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A fresh ascending id such as `msg_0000019abc12ef000001`.
pub fn ascending(prefix: &str) -> String {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    // The counter keeps ids unique and ordered within a process even when
    // the clock does not advance (or goes backwards); the time prefix keeps
    // them roughly ordered across processes.
    let millis = now_ms();
    format!(
        "{prefix}_{:012x}{:08x}",
        millis & 0xffff_ffff_ffff,
        n & 0xffff_ffff
    )
}

/// Milliseconds since the Unix epoch (0 if the clock is before it).
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    #[test]
    fn ids_ascend_within_a_process() {
        let a = super::ascending("prt");
        let b = super::ascending("prt");
        assert!(a.starts_with("prt_") && a < b);
    }
}
