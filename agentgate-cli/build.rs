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

fn main() {
    println!("cargo::rerun-if-changed=link/agent.order");
    println!("cargo::rerun-if-env-changed=AGENTGATE_SYMBOL_ORDER");
    println!("cargo::rerun-if-env-changed=CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER");
    if !wanted() {
        return;
    }
    let Ok(dir) = env::var("CARGO_MANIFEST_DIR") else {
        return;
    };
    let order = Path::new(&dir).join("link/agent.order");
    if order.is_file() {
        println!(
            "cargo::rustc-link-arg-bin=agent=-Wl,--symbol-ordering-file={}",
            order.display()
        );
        println!("cargo::rustc-link-arg-bin=agent=-Wl,--no-warn-symbol-ordering");
    }
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
