#!/usr/bin/env bash
# Runs every comparison of issue 14 in one run and prints one table of
# ratios, also written to benches/results/run-all-<UTC date>.md:
#
#   1. permission evaluation, plain and compiled, vs opencode's algorithm
#      under node (benches/run-comparison.sh, unchanged);
#   2. instructions per evaluation (valgrind --tool=callgrind) for both paths;
#   3. SSE and full decoding throughput per provider vs a plain byte scan of
#      the same bytes (bench `decode`);
#   4. grep and glob on a generated tree of 10,000 files vs the `rg` binary
#      (installed with apt-get when missing);
#   5. the agent loop's overhead per step (bench `loop_overhead`) and the
#      load run (bench `load`: 1,000 concurrent sessions);
#   6. session stores: 1,000 sessions x 20 messages through SqliteStore vs
#      FileSessionStore (bench `store`);
#   7. the peers (benches/peers/run.sh): the agent, opencode and codex from
#      the npm registry on the same mock model, in a results file of its own
#      (benches/results/peers-<UTC date>.md); skipped with a note when npm
#      is missing. PEERS_ROUNDS sets its rounds (default 3).
#
# Usage: nice -n 19 benches/run-all.sh [SECONDS]   (measurement time per
# criterion benchmark and per JS fixture, default 3)
set -euo pipefail

seconds="${1:-3}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

need() { command -v "$1" >/dev/null || { echo "run-all: $1 is required ($2)" >&2; exit 1; }; }
need node "the JavaScript baseline and the table"
if ! command -v rg >/dev/null; then
  echo "== installing ripgrep" >&2
  if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
  # A fresh machine may have empty package lists.
  $sudo apt-get update -qq >&2 || true
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq ripgrep >&2
fi
if ! command -v valgrind >/dev/null; then
  echo "== installing valgrind" >&2
  if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
  $sudo apt-get update -qq >&2 || true
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq valgrind >&2
fi

target="$(cargo metadata --format-version 1 --no-deps | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).target_directory))')"
work="$target/run-all"
mkdir -p "$work" benches/results
crit="$target/criterion"

echo "== 1. permission comparison (benches/run-comparison.sh $seconds)" >&2
benches/run-comparison.sh "$seconds" > "$work/permission.md"

echo "== 2. callgrind instruction counts" >&2
cargo build --quiet --release -p agentgate-benches --bin eval-count
n=20000
: > "$work/callgrind.tsv"
for fixture in 10 100 1000 realistic; do
  for path in evaluate compiled; do
    counts=()
    for iterations in 0 "$n"; do
      out="$work/callgrind.$path.$fixture.$iterations"
      valgrind --tool=callgrind --callgrind-out-file="$out" \
        "$target/release/eval-count" "$path" "$fixture" "$iterations" 2>/dev/null
      counts+=("$(awk '/^(summary|totals):/ {print $2; exit}' "$out")")
    done
    echo -e "$path\t$fixture\t$(( (counts[1] - counts[0]) / n ))" >> "$work/callgrind.tsv"
  done
done

echo "== 3. decode throughput" >&2
cargo bench --quiet -p agentgate-benches --bench decode -- \
  --warm-up-time 1 --measurement-time "$seconds" --noplot >&2

echo "== 4. grep and glob vs rg (10,000 files)" >&2
cargo run --quiet --release -p agentgate-benches --bin search-vs-rg -- "$work/tree" 10000 7 > "$work/search.json"

echo "== 5. loop overhead and load" >&2
cargo bench --quiet -p agentgate-benches --bench loop_overhead -- \
  --warm-up-time 1 --measurement-time "$seconds" --noplot >&2
cargo bench --quiet -p agentgate-benches --bench load -- --json | tee "$work/load.txt" >&2
cargo bench --quiet -p agentgate-benches --bench load -- --json --tool-yields | tee -a "$work/load.txt" >&2

echo "== 6. session stores: SQLite vs files" >&2
cargo bench --quiet -p agentgate-benches --bench store -- --json | tee "$work/store.txt" >&2

echo "== 7. peers: agent vs opencode and codex (benches/peers/run.sh)" >&2
if command -v npm >/dev/null; then
  if peers_file="$(benches/peers/run.sh "${PEERS_ROUNDS:-3}" | tail -n 1)"; then
    peers_note="Peers (benches/peers/run.sh, same run): $peers_file"
  else
    peers_note="Peers: benches/peers/run.sh failed (its error is above in this run's output)."
  fi
else
  peers_note="Peers: skipped, npm is not installed (benches/peers/run.sh needs it to install opencode and codex)."
  echo "run-all: $peers_note" >&2
fi

stamp="$(date -u +%Y-%m-%dT%H%MZ)"
out="benches/results/run-all-$stamp.md"
node - "$crit" "$target/bench-js.json" "$target/bench-fixtures.json" "$work" "$seconds" > "$out" <<'JS'
const fs = require("node:fs");
const [crit, jsFile, fixturesFile, work, seconds] = process.argv.slice(2);
const est = (group, name) =>
  JSON.parse(fs.readFileSync(`${crit}/${group}/${name}/new/estimates.json`, "utf8")).median.point_estimate;
const bytes = (group, name) =>
  JSON.parse(fs.readFileSync(`${crit}/${group}/${name}/new/benchmark.json`, "utf8")).throughput.Bytes;
const js = JSON.parse(fs.readFileSync(jsFile, "utf8"));
const fixtures = JSON.parse(fs.readFileSync(fixturesFile, "utf8"));
const ir = {};
for (const line of fs.readFileSync(`${work}/callgrind.tsv`, "utf8").trim().split("\n")) {
  const [path, fixture, count] = line.split("\t");
  ir[`${path}/${fixture}`] = Number(count);
}
const search = JSON.parse(fs.readFileSync(`${work}/search.json`, "utf8"));
const load = fs.readFileSync(`${work}/load.txt`, "utf8").split("\n")
  .filter((l) => l.startsWith("{\"load\"")).map((l) => JSON.parse(l).load);
const f = (x, d = 0) => x.toFixed(d);
const ns = (x) => (x >= 100 ? f(x) : f(x, 1)) + " ns";
const rows = [["comparison", "ours", "reference", "reference / ours"]];
for (const fx of fixtures) {
  const rules = fx.rulesets.reduce((n, r) => n + r.length, 0);
  const ev = est("evaluate", fx.name), co = est("compiled", fx.name), j = js[fx.name].ns_per_evaluation;
  rows.push([`permission ${fx.name} (${rules} rules): evaluate vs JS`, ns(ev), ns(j), `${f(j / ev)}x`]);
  rows.push([`permission ${fx.name} (${rules} rules): compiled vs JS`, ns(co), ns(j), `${f(j / co)}x`]);
  rows.push([`permission ${fx.name}: compiled vs evaluate (time)`, ns(co), ns(ev), `${f(ev / co, 2)}x`]);
  const ie = ir[`evaluate/${fx.name}`], ic = ir[`compiled/${fx.name}`];
  rows.push([`permission ${fx.name}: compiled vs evaluate (instructions/eval)`, `${ic} Ir`, `${ie} Ir`, `${f(ie / ic, 2)}x`]);
}
// Issue 14, point 2: the compiled evaluator's targets, judged in this run.
const targets = [];
for (const fx of fixtures) {
  const ev = est("evaluate", fx.name), co = est("compiled", fx.name);
  targets.push([`compiled never slower than evaluate: ${fx.name}`, ns(co), ns(ev), co <= ev ? "met" : "NOT MET"]);
}
const limits = { "10": 100, "1000": 300 };
for (const [name, limit] of Object.entries(limits)) {
  const co = est("compiled", name);
  targets.push([`compiled at ${name} rules <= ${limit} ns`, ns(co), `${limit} ns`, co <= limit ? "met" : "NOT MET"]);
}
const mibs = (group, name) => bytes(group, name) / est(group, name) * 1e9 / (1 << 20);
for (const p of ["openai", "anthropic", "gemini", "responses"]) {
  const scan = mibs("decode_scan", p), sse = mibs("decode_sse", p), client = mibs("decode_client", p);
  rows.push([`decode ${p}: SSE parser vs byte scan`, `${f(sse)} MiB/s`, `${f(scan)} MiB/s`, `${f(scan / sse, 1)}x slower`]);
  rows.push([`decode ${p}: client (HTTP+SSE+JSON) vs byte scan`, `${f(client)} MiB/s`, `${f(scan)} MiB/s`, `${f(scan / client, 1)}x slower`]);
}
rows.push([`grep tool vs rg (${search.files} files)`, `${f(search.grep_ms, 1)} ms`, `${f(search.rg_grep_ms, 1)} ms`, `${f(search.rg_grep_ms / search.grep_ms, 2)}x`]);
rows.push([`glob tool vs rg --files (${search.files} files)`, `${f(search.glob_ms, 1)} ms`, `${f(search.rg_glob_ms, 1)} ms`, `${f(search.rg_glob_ms / search.glob_ms, 2)}x`]);
const loop = est("agent_loop", "50_steps_noop_tool") / 50;
rows.push(["agent loop overhead per step (50-step prompt)", `${f(loop / 1000, 1)} µs`, "20 µs (target)", `${f(20000 / loop, 2)}x`]);
for (const l of load) {
  const tag = l.tool_yields ? "tool yields" : "tool never yields";
  rows.push([`load ${l.sessions} sessions x ${l.steps} steps (${tag}): throughput`, `${f(l.steps_per_s)} steps/s`, "", ""]);
  rows.push([`load (${tag}): step time p50 / p99`, `${f(l.p50_us)} / ${f(l.p99_us)} µs`, "", ""]);
  rows.push([`load (${tag}): peak heap per session; no starvation`, `${f(l.peak_kib_per_session, 1)} KiB; ${l.no_starvation}`, "", ""]);
}
const store = fs.readFileSync(`${work}/store.txt`, "utf8").split("\n")
  .filter((l) => l.startsWith("{\"store\"")).map((l) => JSON.parse(l).store);
for (const s of store) {
  const tag = `${s.sessions} sessions x ${s.messages} messages`;
  rows.push([`store ${tag}: write, SqliteStore vs FileSessionStore`, `${f(s.sqlite_write_ms)} ms`, `${f(s.file_write_ms)} ms`, `${f(s.file_write_ms / s.sqlite_write_ms, 2)}x`]);
  rows.push([`store ${tag}: read back, SqliteStore vs FileSessionStore`, `${f(s.sqlite_read_ms)} ms`, `${f(s.file_read_ms)} ms`, `${f(s.file_read_ms / s.sqlite_read_ms, 2)}x`]);
}
const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
const line = (r) => "| " + r.map((cell, c) => cell.padEnd(widths[c])).join(" | ") + " |";
console.log(`Command: \`benches/run-all.sh ${seconds}\`; ${new Date().toISOString()}\n`);
console.log(line(rows[0]));
console.log("| " + widths.map((w) => "-".repeat(w)).join(" | ") + " |");
for (const r of rows.slice(1)) console.log(line(r));
const tw = [0, 1, 2, 3].map((c) => Math.max(...[["target", "ours", "limit", "status"], ...targets].map((r) => r[c].length)));
const tline = (r) => "| " + r.map((cell, c) => cell.padEnd(tw[c])).join(" | ") + " |";
console.log("\nTargets for the compiled evaluator (zero allocations per evaluation: agentgate-permission/tests/suite/compiled_alloc.rs):\n");
console.log(tline(["target", "ours", "limit", "status"]));
console.log("| " + tw.map((w) => "-".repeat(w)).join(" | ") + " |");
for (const r of targets) console.log(tline(r));
console.log("\nPermission table of the same run (benches/run-comparison.sh):\n");
console.log(fs.readFileSync(`${work}/permission.md`, "utf8"));
JS
{
  echo
  echo "$peers_note"
  echo
  echo "Machine: $(nproc) CPUs"
  echo '```'
  lscpu | head -n 15
  echo '```'
} >> "$out"
cat "$out"
echo "== written to $out" >&2
