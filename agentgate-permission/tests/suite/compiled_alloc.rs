//! Evaluation allocates nothing: proven with a counting global allocator.
//!
//! The allocator counts per thread, because the other tests of this binary
//! allocate on their own threads while this one measures.
#![allow(unsafe_code)] // a GlobalAlloc impl is unsafe by definition

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use agentgate_permission::{Action, CompiledRuleset, Rule, Ruleset, decide, wildcard};

struct Counting;

thread_local! {
    /// Allocations made by the current thread (a const initialiser: reading
    /// it never allocates).
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn count_one() {
    // `try_with`: the slot is gone while the thread is being torn down.
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

fn allocations() -> usize {
    ALLOCATIONS.with(Cell::get)
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_one();
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_one();
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn ruleset() -> Ruleset {
    let mut rules = vec![
        Rule::new("*", "*", Action::Allow),
        Rule::new("external_directory", "*", Action::Ask),
        Rule::new("read", "*.env", Action::Ask),
        Rule::new("read", "*.env.*", Action::Ask),
        Rule::new("read", "*.env.example", Action::Allow),
        Rule::new("b?sh", "echo *", Action::Allow),
    ];
    for i in 0..200 {
        rules.push(Rule::new("bash", format!("tool{i} sub *"), Action::Deny));
        rules.push(Rule::new(format!("mcp_{i}_*"), "*", Action::Ask));
    }
    rules.push(Rule::new("bash", "git push *", Action::Deny));
    Ruleset::from(rules)
}

#[test]
fn evaluation_does_not_allocate() {
    let rules = ruleset();
    let compiled = CompiledRuleset::new(&[&rules]);
    let queries = [
        ("bash", "git push origin main"),
        ("bash", "tool17 sub command --flag"),
        ("bash", "echo hi\nrm -rf /"),
        ("read", "config/.env"),
        ("read", "config/.env.example"),
        ("mcp_42_fetch", "https://example.com"),
        ("edit", "src\\main.rs"),
        ("unknown", ""),
    ];
    // Warm up anything lazily initialised by the test harness itself.
    let mut sink = 0usize;
    let before = allocations();
    for _ in 0..100 {
        for (permission, pattern) in queries {
            sink += compiled.decide(permission, pattern) as usize;
            sink += compiled.evaluate(permission, pattern).index.unwrap_or(0);
            sink += decide(permission, pattern, &[&rules]) as usize;
            sink += usize::from(wildcard::matches(pattern, "git *"));
        }
    }
    let after = allocations();
    assert_eq!(
        after - before,
        0,
        "evaluation allocated {} times",
        after - before
    );
    // A small ruleset takes the other paths: literal permissions through
    // their own index, the rest through a few wildcard groups.
    let small = Ruleset::from(vec![
        Rule::new("*", "*", Action::Ask),
        Rule::new("bash", "git *", Action::Allow),
        Rule::new("b?sh", "rm *", Action::Deny),
        Rule::new("edit", "src/*", Action::Allow),
        Rule::new("mcp_*", "*", Action::Deny),
        Rule::new("read", "*.env", Action::Deny),
    ]);
    let compiled_small = CompiledRuleset::new(&[&small]);
    let before = allocations();
    for _ in 0..100 {
        for (permission, pattern) in queries {
            sink += compiled_small.decide(permission, pattern) as usize;
            sink += compiled_small
                .evaluate(permission, pattern)
                .index
                .unwrap_or(0);
        }
    }
    let after = allocations();
    assert_eq!(
        after - before,
        0,
        "evaluation allocated {} times",
        after - before
    );

    assert!(sink > 0);
    // The counter does count this thread's allocations.
    let probe = std::hint::black_box(vec![1u8; 8]);
    assert!(allocations() > after, "the counting allocator saw nothing");
    drop(probe);
}
