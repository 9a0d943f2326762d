//! Lays out the release `agent`'s machine code so that what a one-turn
//! `agent run` and `agent acp` execute sits together (issue 43).
//!
//! The binary holds about 24 MB of code and a turn runs about 3.6 MB of
//! it, spread over the whole text: every page touched brings its
//! neighbours in (the kernel maps up to 64 KiB around a fault), so most
//! of the binary ended up resident. `link/agent.order` lists the
//! functions those runs execute (from `scripts/symbol-order.sh`, which
//! records them with callgrind); lld places them first, in that order.
//!
//! A name the build no longer has is skipped, so a stale list only loses
//! the effect, never the build. Applied only where the linker is known to
//! be lld: a release build for `x86_64-unknown-linux-gnu` (Rust's default
//! linker there since 1.90) with no linker configured through the
//! environment. `AGENTGATE_SYMBOL_ORDER=0` turns it off.

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
    !flags.split('\x1f').any(|flag| {
        flag.contains("linker") || flag.contains("link-self-contained") || flag.contains("fuse-ld")
    })
}
