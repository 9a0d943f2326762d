#!/usr/bin/env bash
# Runs the Rust permission benchmarks (criterion) and the JavaScript
# baseline (opencode's algorithm under node) on the same rule sets and
# queries, then prints a table of ns per evaluation and the ratios.
#
# Usage: benches/run-comparison.sh [SECONDS]   (measurement time per
# benchmark, default 3; the JS baseline measures the same time per fixture)
set -euo pipefail

seconds="${1:-3}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

command -v node >/dev/null || { echo "run-comparison: node is required for the JavaScript baseline" >&2; exit 1; }

target="$(cargo metadata --format-version 1 --no-deps | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).target_directory))')"
fixtures="$target/bench-fixtures.json"
js_out="$target/bench-js.json"

echo "== exporting fixtures to $fixtures" >&2
cargo run --quiet --release -p agentgate-benches --bin export-fixtures -- "$fixtures"

echo "== criterion (Rust), ${seconds}s per benchmark" >&2
cargo bench --quiet -p agentgate-benches --bench permission -- \
  --warm-up-time 1 --measurement-time "$seconds" --noplot '^(evaluate|compiled)/' >&2

echo "== node baseline, ${seconds}s per fixture" >&2
node benches/baseline/opencode_evaluate.mjs "$fixtures" --seconds "$seconds" --json > "$js_out"

node - "$target/criterion" "$js_out" "$fixtures" <<'JS'
const fs = require("node:fs");
const [critDir, jsFile, fixturesFile] = process.argv.slice(2);
const js = JSON.parse(fs.readFileSync(jsFile, "utf8"));
const fixtures = JSON.parse(fs.readFileSync(fixturesFile, "utf8"));
const median = (group, name) => {
  const file = `${critDir}/${group}/${name}/new/estimates.json`;
  return JSON.parse(fs.readFileSync(file, "utf8")).median.point_estimate;
};
const fmt = (ns) => (ns >= 100 ? ns.toFixed(0) : ns.toFixed(1));
const rows = [["ruleset", "rules", "Rust evaluate ns/op", "Rust compiled ns/op", "JS ns/op", "JS/evaluate", "JS/compiled"]];
for (const f of fixtures) {
  const rules = f.rulesets.reduce((n, r) => n + r.length, 0);
  const ev = median("evaluate", f.name);
  const co = median("compiled", f.name);
  const j = js[f.name].ns_per_evaluation;
  rows.push([f.name, String(rules), fmt(ev), fmt(co), fmt(j), `${(j / ev).toFixed(0)}x`, `${(j / co).toFixed(0)}x`]);
}
const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
const line = (r) => "| " + r.map((cell, c) => cell.padEnd(widths[c])).join(" | ") + " |";
console.log(line(rows[0]));
console.log("| " + widths.map((w) => "-".repeat(w)).join(" | ") + " |");
for (const r of rows.slice(1)) console.log(line(r));
JS
