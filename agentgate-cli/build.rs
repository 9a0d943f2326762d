//! Lays out the release `agent`'s machine code so that what `agent run`,
//! `agent acp` and `agent serve` execute sits together (issue 43).
//!
//! The binary holds about 24 MB of code and a one-turn run executes about
//! 3.6 MB of it, spread over the whole text: every page touched brings its
//! neighbours in (the kernel maps up to 64 KiB around a fault), so most of
//! the binary ended up resident. `link/agent.order` lists the functions
//! those commands execute (`scripts/symbol-order.sh` records them with
//! callgrind); lld places them first, in that order.
//!
//! A name the build does not have is skipped, so a stale list loses some
//! of the effect, never the build: names carry a hash of the compiler, the
//! dependencies' versions and features, and LTO numbers the copies of a
//! function (`write_str.13163`) in an order any code change may shift.
//! Applied only where the linker is known to be lld: a release build for
//! `x86_64-unknown-linux-gnu` by Rust 1.90 or later (lld is the default
//! linker there since) with no linker or linker flavour set through the
//! environment or `rustflags`. `AGENTGATE_SYMBOL_ORDER=0` turns it off.

use std::env;
use std::path::Path;

/// How far the number LTO gives a copied function may move between the
/// build a list was recorded from and this one (see [`widened`]).
const COPY_NUMBERS: u64 = 200;

fn main() {
    println!("cargo::rerun-if-changed=link/agent.order");
    println!("cargo::rerun-if-env-changed=AGENTGATE_SYMBOL_ORDER");
    println!("cargo::rerun-if-env-changed=CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER");
    if !wanted() {
        return;
    }
    let (Some(dir), Some(out)) = (env::var_os("CARGO_MANIFEST_DIR"), env::var_os("OUT_DIR")) else {
        return;
    };
    let Ok(list) = std::fs::read_to_string(Path::new(&dir).join("link/agent.order")) else {
        return;
    };
    let order = Path::new(&out).join("agent.order");
    if std::fs::write(&order, widened(&list)).is_ok() {
        println!(
            "cargo::rustc-link-arg-bin=agent=-Wl,--symbol-ordering-file={}",
            order.display()
        );
        println!("cargo::rustc-link-arg-bin=agent=-Wl,--no-warn-symbol-ordering");
    }
}

/// The list with each numbered copy widened to its neighbours' numbers.
///
/// Fat LTO merges every crate into one module and renames a local
/// function whose name is taken by appending `.N`, N counting every such
/// collision so far (`<String as fmt::Write>::write_str.13163`: std's
/// inline functions are copied into each crate that calls them). Any code
/// change before it in the module moves N: one added collision shifted
/// all 95 numbered names of the list by one, and those functions ran from
/// outside the ordered block again (27 of them, 1.7 MiB resident). A name
/// with another number is a copy of the same function, so listing the
/// numbers around the recorded one only ever places copies of it.
fn widened(list: &str) -> String {
    let mut out = String::with_capacity(list.len() * 2);
    for name in list.lines().filter(|line| !line.is_empty()) {
        out.push_str(name);
        out.push('\n');
        // Rust's own names only: C objects are not merged by LTO, and
        // their numbered names (`.constprop.0`) are distinct variants.
        if !(name.starts_with("_R") || name.starts_with("_ZN")) {
            continue;
        }
        let Some((base, number)) = name.rsplit_once('.') else {
            continue;
        };
        let Ok(number) = number.parse::<u64>() else {
            continue;
        };
        let low = number.saturating_sub(COPY_NUMBERS);
        for other in (low..=number + COPY_NUMBERS).filter(|n| *n != number) {
            out.push_str(base);
            out.push('.');
            out.push_str(&other.to_string());
            out.push('\n');
        }
    }
    out
}

/// Whether this build links with Rust's own lld, optimised.
fn wanted() -> bool {
    let var = |name: &str| env::var(name).unwrap_or_default();
    if var("AGENTGATE_SYMBOL_ORDER") == "0" || var("PROFILE") != "release" {
        return false;
    }
    if var("TARGET") != "x86_64-unknown-linux-gnu"
        || env::var_os("CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER").is_some()
    {
        return false;
    }
    // A linker or linker flavour chosen in RUSTFLAGS (or a config's
    // `rustflags`) may not be lld.
    let flags = var("CARGO_ENCODED_RUSTFLAGS");
    if flags.split('\x1f').any(|flag| {
        flag.contains("linker") || flag.contains("link-self-contained") || flag.contains("fuse-ld")
    }) {
        return false;
    }
    rustc_minor().is_some_and(|minor| minor >= 90)
}

/// The minor version of the compiler building this crate (`rustc 1.95.0
/// (...)` gives 95); before 1.90 the default linker here was the system's
/// `ld`, which has no `--symbol-ordering-file`.
fn rustc_minor() -> Option<u32> {
    let rustc = env::var_os("RUSTC")?;
    let out = std::process::Command::new(rustc).arg("-V").output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let version = text.split_whitespace().nth(1)?;
    let mut parts = version.split('.');
    (parts.next()? == "1").then_some(())?;
    parts.next()?.parse().ok()
}
