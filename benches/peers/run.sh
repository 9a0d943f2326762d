#!/usr/bin/env bash
# The peers benchmark of issues 27 and 43: the agent (release build),
# opencode and codex from the npm registry, run offline against the same
# scripted mock model (benches/src/mock_model.rs) on a cold start, one
# turn, a 20-step tool loop, 80 steps with 52 KB tool outputs and 10 grep
# steps over a generated 10,000-file tree; then `agent serve` against
# `opencode serve` and `agent acp` against `opencode acp`; interleaved
# rounds, medians, ratios against the agent on the same wire API.
#
# Usage: benches/peers/run.sh [ROUNDS]   (default 3)
#
# The peers are installed with npm into <target dir>/peers/ when missing
# (a peer that cannot be installed is reported as not run, not dropped).
# Writes benches/results/peers-<UTC timestamp>.md and prints it. The last
# line of stdout is the results file's path.
set -euo pipefail

rounds="${1:-3}"
opencode_version="1.18.33"
codex_version="0.169.0"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"

target="$(cargo metadata --format-version 1 --no-deps | grep -o '"target_directory":"[^"]*"' | cut -d'"' -f4)"
cache="$target/peers"
opencode="$cache/opencode-$opencode_version/node_modules/opencode-linux-x64/bin/opencode"
codex="$cache/codex-$codex_version/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"

install() { # DIR PACKAGE BINARY
  if [ -x "$3" ]; then return 0; fi
  if ! command -v npm >/dev/null; then
    echo "peers: npm not found; $2 is reported as not installed" >&2
    return 0
  fi
  echo "== installing $2 into $1" >&2
  mkdir -p "$1"
  npm install --prefix "$1" --no-audit --no-fund --loglevel=error "$2" >&2 \
    || echo "peers: npm install $2 failed; it is reported as not installed" >&2
}
install "$cache/opencode-$opencode_version" "opencode-ai@$opencode_version" "$opencode"
install "$cache/codex-$codex_version" "@openai/codex@$codex_version" "$codex"

echo "== building the agent and the harness (release)" >&2
cargo build --quiet --release -p agentgate-cli --bin agent
cargo build --quiet --release -p agentgate-benches --bin peers

# The projects live outside this repository: inside it, every peer would
# take the repository (target/ included) for the project.
work="${TMPDIR:-/tmp}/agentgate-peers-work"

stamp="$(date -u +%Y-%m-%dT%H%MZ)"
mkdir -p benches/results
out="benches/results/peers-$stamp.md"
{
  echo "# Peers: the agent, opencode and codex on the same mock model"
  echo
  echo "Command: \`benches/peers/run.sh $rounds\`; started $(date -u +%Y-%m-%dT%H:%M:%SZ);" \
    "commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)."
  echo "Machine: $(nproc) CPUs, $(lscpu | sed -n 's/^Model name: *//p' | head -n1);" \
    "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)."
  echo
} > "$out.tmp"
"$target/release/peers" \
  --agent "$target/release/agent" --opencode "$opencode" --codex "$codex" \
  --rounds "$rounds" --work "$work" >> "$out.tmp"
echo >> "$out.tmp"
echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)." >> "$out.tmp"
mv "$out.tmp" "$out"
cat "$out"
echo "$out"
