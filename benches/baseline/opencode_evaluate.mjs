// JavaScript baseline: opencode's permission evaluation, written from the
// behavioural reference (§2 Wildcard.match, §4 merge/evaluate), to measure
// the Rust engine against it on the same rule sets and queries.
//
// The algorithm is opencode's: flatten the rulesets, findLast the rule whose
// permission and pattern both match, and match each wildcard with a regular
// expression built on every call from the escaped pattern ("*" -> ".*",
// "?" -> ".", a trailing " *" made optional as "( .*)?", anchored, dot-all).
//
// Usage: node opencode_evaluate.mjs FIXTURES.json [--seconds S] [--json]
// FIXTURES.json comes from `cargo run -p agentgate-benches --bin export-fixtures`.
// Prints one line per fixture (name, ns/evaluation), or JSON with --json.

import { readFileSync } from "node:fs";

const REGEX_SPECIALS = /[.+^${}()|[\]\\]/g;

export function match(input, pattern) {
  const str = input.replaceAll("\\", "/");
  let escaped = pattern
    .replaceAll("\\", "/")
    .replace(REGEX_SPECIALS, "\\$&")
    .replaceAll("*", ".*")
    .replaceAll("?", ".");
  if (escaped.endsWith(" .*")) {
    escaped = escaped.slice(0, -3) + "( .*)?";
  }
  const flags = process.platform === "win32" ? "si" : "s";
  return new RegExp("^" + escaped + "$", flags).test(str);
}

export function merge(...rulesets) {
  return rulesets.flat();
}

export function evaluate(permission, pattern, ...rulesets) {
  const rules = rulesets.flat();
  const found = rules.findLast(
    (rule) => match(permission, rule.permission) && match(pattern, rule.pattern),
  );
  return found ?? { action: "ask", permission, pattern: "*" };
}

function measure(fixture, seconds) {
  const { rulesets, queries } = fixture;
  let sink = 0;
  let i = 0;
  const run = (count) => {
    for (let n = 0; n < count; n++) {
      const q = queries[i % queries.length];
      i++;
      if (evaluate(q.permission, q.pattern, ...rulesets).action === "allow") sink++;
    }
  };
  // Warm-up: let the JIT settle (a quarter of the measuring time).
  const warmEnd = process.hrtime.bigint() + BigInt(Math.round(seconds * 0.25e9));
  while (process.hrtime.bigint() < warmEnd) run(queries.length);
  // Measure whole passes over the queries until the time is up.
  let count = 0;
  const start = process.hrtime.bigint();
  const end = start + BigInt(Math.round(seconds * 1e9));
  let now = start;
  while (now < end) {
    run(queries.length);
    count += queries.length;
    now = process.hrtime.bigint();
  }
  return { ns: Number(now - start) / count, evaluations: count, sink };
}

function check(fixture) {
  fixture.queries.forEach((q, k) => {
    const got = evaluate(q.permission, q.pattern, ...fixture.rulesets).action;
    if (got !== fixture.expected[k]) {
      throw new Error(
        `fixture ${fixture.name}: ${q.permission} ${JSON.stringify(q.pattern)} -> ${got}, Rust decided ${fixture.expected[k]}`,
      );
    }
  });
}

function main(argv) {
  const file = argv[0];
  if (!file) {
    console.error("usage: node opencode_evaluate.mjs FIXTURES.json [--seconds S] [--json]");
    process.exit(2);
  }
  const sIndex = argv.indexOf("--seconds");
  const seconds = sIndex >= 0 ? Number(argv[sIndex + 1]) : 2;
  const fixtures = JSON.parse(readFileSync(file, "utf8"));
  const results = {};
  for (const fixture of fixtures) {
    check(fixture);
    const rules = fixture.rulesets.reduce((n, r) => n + r.length, 0);
    const { ns, evaluations } = measure(fixture, seconds);
    results[fixture.name] = { rules, ns_per_evaluation: ns, evaluations };
    if (!argv.includes("--json")) {
      console.log(`${fixture.name}\t${rules} rules\t${ns.toFixed(1)} ns/evaluation`);
    }
  }
  if (argv.includes("--json")) console.log(JSON.stringify(results));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main(process.argv.slice(2));
}
