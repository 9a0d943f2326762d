#!/usr/bin/env bash
# Regenerates agentgate-cli/link/agent.order: the functions of the release
# `agent` that a one-turn `agent run`, `agent acp` (initialize, session/new)
# and `agent serve` (sessions created, prompted and deleted) execute, as
# callgrind records them, in that order. agentgate-cli/build.rs hands the
# list to lld, which lays those functions out first, together: a run then
# keeps a few MiB of code resident instead of most of the binary.
#
# Run it after a toolchain or dependency update (symbol names carry a hash
# of the crate's version and the compiler): names the list has and the
# build does not are skipped, so a stale list loses the effect, not the
# build. `startup` in benches/ shows the peak RSS it buys.
#
#   scripts/symbol-order.sh [CARGO BUILD ARGS]   # needs valgrind
#
# CARGO BUILD ARGS go to the agent's build (`--no-default-features`, say):
# the list is for that build's features. The default is the shipped one.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
# Two builds: one `cargo build` of both packages would unify their
# dependencies' features, and so change the agent's symbol names from
# those of the documented `cargo build --release -p agentgate-cli`.
cargo build --release --manifest-path "$root/Cargo.toml" -p agentgate-cli "$@"
cargo build --release --manifest-path "$root/Cargo.toml" -p agentgate-benches \
    --bin startup --bin serve-load
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for what in run serve; do
    mkdir -p "$work/$what"
    # --dump-every-bb: `serve` is killed by the bench, so callgrind writes
    # as it goes rather than at exit.
    cat > "$work/$what.sh" <<SH
#!/bin/sh
exec valgrind --tool=callgrind --demangle=no --dump-instr=no \
    --dump-every-bb=2000000 --callgrind-out-file=$work/$what/cg.%p \
    $target/release/agent "\$@" 2>/dev/null
SH
    chmod +x "$work/$what.sh"
done
AGENT_BIN=$work/run.sh "$target/release/startup" 1 >/dev/null
"$target/release/serve-load" sessions --agent "$work/serve.sh" --sessions 20 \
    --every 10 --work "$work/serve-work" >/dev/null
# The `agent run` profiles first (oldest pid first), then the others.
files=$(ls -tr "$work"/run/cg.* "$work"/serve/cg.*)
# Callgrind names an object (ob=, cob=) or a function (fn=, cfn=) in full
# the first time, by its number after that; `'2` marks a recursion depth.
awk '
FNR == 1 { delete ob; delete fn; cur = "" }
match($0, /^c?ob=\([0-9]+\)/) {
    id = substr($0, index($0, "(") + 1); id = substr(id, 1, index(id, ")") - 1)
    name = substr($0, RLENGTH + 2); if (name != "") ob[id] = name
    if ($0 ~ /^ob=/) cur = ob[id]
    next
}
match($0, /^c?fn=\([0-9]+\)/) {
    id = substr($0, index($0, "(") + 1); id = substr(id, 1, index(id, ")") - 1)
    name = substr($0, RLENGTH + 2); if (name != "") fn[id] = name
    if ($0 !~ /^fn=/ || cur !~ /\/agent$/) next
    sym = fn[id]; sub(/'"'"'[0-9]+$/, "", sym)
    if (sym != "" && sym !~ /^[(0]/ && !(sym in seen)) { seen[sym] = 1; print sym }
}' $files > "$root/agentgate-cli/link/agent.order"
wc -l "$root/agentgate-cli/link/agent.order"
