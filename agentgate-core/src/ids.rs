//! Identifiers for messages, parts and sessions.
//!
//! Ids are `prefix_` followed by 28 hex digits: the creation time in
//! milliseconds, a process-wide counter and a random tag drawn once per
//! process, so ids of one process sort in creation order (as opencode's
//! ascending ids do) and ids of two processes never meet.

use std::hash::{BuildHasher, Hasher};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A fresh ascending id such as `msg_0000019abc12ef000001a3f09c1e`.
pub fn ascending(prefix: &str) -> String {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    // The counter keeps ids unique and ordered within a process even when
    // the clock does not advance (or goes backwards); the time prefix keeps
    // them roughly ordered across processes. The process tag keeps them
    // apart across processes: two servers sharing one database start alike,
    // so their counters agree, and creating sessions in the same
    // millisecond gave both the same id (one server's session, messages
    // and asks then overwrote the other's).
    let millis = now_ms();
    format!(
        "{prefix}_{:012x}{:08x}{:08x}",
        millis & 0xffff_ffff_ffff,
        n & 0xffff_ffff,
        process_tag()
    )
}

/// 32 random bits drawn once per process (std's per-process random
/// hashing keys, over the process id and the time): what keeps the ids of
/// two processes, on one machine or two, apart.
fn process_tag() -> u32 {
    static TAG: OnceLock<u32> = OnceLock::new();
    *TAG.get_or_init(|| {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u32(std::process::id());
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        hasher.write_u128(nanos);
        // The low half of the 64-bit hash; truncation is the point.
        (hasher.finish() & 0xffff_ffff) as u32
    })
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
        assert_eq!(a.len(), "prt_".len() + 28);
        // The process's tag ends every id.
        let tag = format!("{:08x}", super::process_tag());
        assert!(a.ends_with(&tag) && b.ends_with(&tag));
    }
}
