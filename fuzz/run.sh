#!/usr/bin/env bash
# Runs every fuzz target for a fixed budget and prints one line per target:
# budget, executions, corpus size, and whether it crashed. Crashes are kept
# in fuzz/artifacts/<target>/ (turn each into a regression test).
#
# Usage: nice -n 19 fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]   (default 60)
# Needs cargo-fuzz (`cargo install cargo-fuzz`); the toolchain is stable, so
# the nightly-only flags are unlocked with RUSTC_BOOTSTRAP=1.
set -uo pipefail

seconds="${1:-60}"
shift || true
cd "$(dirname "${BASH_SOURCE[0]}")"
command -v cargo-fuzz >/dev/null || { echo "fuzz/run.sh: install cargo-fuzz first: cargo install cargo-fuzz" >&2; exit 1; }
export RUSTC_BOOTSTRAP=1

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(cargo fuzz list)
fi

# Build once (sanitizer: none; these are safe-Rust crates, the checks are
# the targets' assertions and panics).
for t in "${targets[@]}"; do cargo fuzz build --sanitizer none -O "$t" >&2 || exit 1; done

status=0
printf '| target | budget | executions | exec/s | corpus | result |\n| --- | --- | --- | --- | --- | --- |\n'
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t" "artifacts/$t"
  log="$(mktemp)"
  cargo fuzz run --sanitizer none -O "$t" "corpus/$t" -- \
    -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 > "$log" 2>&1
  rc=$?
  execs="$(awk '/stat::number_of_executed_units/ {print $NF}' "$log" | tail -1)"
  speed="$(awk '/stat::average_exec_per_sec/ {print $NF}' "$log" | tail -1)"
  corpus="$(ls "corpus/$t" | wc -l)"
  if [ $rc -eq 0 ]; then
    result="no crash"
  else
    status=1
    crash="$(grep -o 'artifacts/[^ ]*' "$log" | tail -1)"
    result="CRASH ($crash)"
    grep -m1 -A3 "panicked at" "$log" >&2 || tail -20 "$log" >&2
  fi
  printf '| %s | %ss | %s | %s | %s | %s |\n' "$t" "$seconds" "${execs:-?}" "${speed:-?}" "$corpus" "$result"
  rm -f "$log"
done
exit $status
