#!/usr/bin/env bash
# `agent acp` and `opencode acp` side by side: the same ACP client script
# (agentgate-cli/tests/acp/acp_client.mjs, on the official TypeScript SDK)
# against each, with the same mock model, offline. Prints each agent's
# checks that failed and one table: updates sent, time to the first chunk,
# the edit turn, the cancel, peak memory (VmHWM) of the first process.
#
#   scripts/acp_compare.sh [RUNS]        (default 3 runs each; medians)
#
# Needs: a debug build of `agent` (cargo build -p agentgate-cli), and in
# target/mcp-servers (as .ci/run installs them) @agentclientprotocol/sdk and
# opencode-ai. CARGO_TARGET_DIR is honoured.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-3}"
target="${CARGO_TARGET_DIR:-$PWD/target}"
agent="$target/debug/agent"
modules="$PWD/target/mcp-servers/node_modules"
export ACP_SDK="${AGENT_ACP_SDK:-$modules/@agentclientprotocol/sdk}"
opencode="${OPENCODE_BIN:-$modules/opencode-linux-x64/bin/opencode}"
script="$PWD/agentgate-cli/tests/acp/acp_client.mjs"
for need in "$agent" "$ACP_SDK/package.json" "$opencode"; do
  [ -e "$need" ] || { echo "missing $need (see the header of $0)" >&2; exit 2; }
done
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

run() { # NAME RUN COMMAND...
  local name="$1" n="$2"; shift 2
  local root="$work/$name-$n"
  mkdir -p "$root/project" "$root/home"
  env -i PATH="$PATH" HOME="$root/home" XDG_DATA_HOME="$root/data" XDG_CONFIG_HOME="$root/config" \
    XDG_CACHE_HOME="$root/cache" XDG_STATE_HOME="$root/state" ACP_SDK="$ACP_SDK" \
    OPENCODE_DISABLE_MODELS_FETCH=1 OPENCODE_DISABLE_LSP_DOWNLOAD=1 OPENCODE_DISABLE_AUTOUPDATE=1 \
    AGENT_DEMO_WORD_DELAY_MS=0 \
    node "$script" --lenient --project "$root/project" -- "$@" > "$work/$name-$n.json" 2> "$work/$name-$n.err"
}

for n in $(seq 1 "$runs"); do
  run agent "$n" "$agent" acp
  run opencode "$n" "$opencode" acp
done

python3 - "$work" "$runs" <<'PY'
import json, statistics, sys
work, runs = sys.argv[1], int(sys.argv[2])
rows = {}
for name in ("agent", "opencode"):
    reports = [json.load(open(f"{work}/{name}-{n}.json")) for n in range(1, runs + 1)]
    failed = sorted({c["name"] for r in reports for c in r["checks"] if not c["ok"]})
    print(f"{name}: {len(reports[0]['checks'])} checks, failing in some run: {failed or 'none'}")
    med = lambda key: statistics.median(r["metrics"].get(key) or 0 for r in reports)
    kinds = reports[0]["metrics"]["updates_by_kind"]
    rows[name] = {
        "updates (4 prompts)": med("updates_first_process"),
        "  by kind (run 1)": ", ".join(f"{k} {v}" for k, v in kinds.items()),
        "updates replayed by load": med("updates_replayed"),
        "model requests": statistics.median(r["model_requests"] for r in reports),
        "first chunk (ms)": med("first_chunk_ms"),
        "edit turn (ms)": med("edit_turn_ms"),
        "cancel -> cancelled (ms)": med("cancel_ms"),
        "peak RSS (MiB)": round(med("peak_rss_kb") / 1024, 1),
    }
print()
print(f"{'median of ' + str(runs) + ' runs':28} | {'agent acp':30} | opencode acp")
for key in rows["agent"]:
    print(f"{key:28} | {str(rows['agent'][key]):30} | {rows['opencode'][key]}")
PY
