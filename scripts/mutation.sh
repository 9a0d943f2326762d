#!/usr/bin/env bash
# Mutation testing (cargo-mutants) of the code that decides permissions: the
# rules engine and gate (agentgate-permission) and the shell and path checks
# (agentgate-tools). Each crate's mutants are judged by that crate's own tests.
#
#   scripts/mutation.sh [permission|tools|all] [cargo-mutants args...]
#
# Writes target/mutants/<group>/mutants.out/ and prints, per file, the viable
# mutants, how many the tests caught (a timeout counts as caught) and the score.
# With --iterate, mutants caught by earlier runs are skipped and still counted.
# Survivors are in target/mutants/<group>/mutants.out/missed.txt; the ones
# judged equivalent are listed in docs/mutation-testing.md.
set -euo pipefail
cd "$(dirname "$0")/.."

group=${1:-all}
shift || true

command -v cargo-mutants >/dev/null 2>&1 || cargo install cargo-mutants --locked

permission_files=(wildcard compiled radix config ruleset gate subagent)
tools_files=(bash_scan shell_eval external paths)

run_group() {
  local name=$1 package=$2 src=$3
  shift 3
  local files=()
  for f in "$@"; do files+=(--file "$src/$f.rs"); done
  local out="target/mutants/$name"
  mkdir -p "$out"
  # --iterate skips the mutants an earlier run caught; keep counting them.
  if [[ " ${extra[*]} " == *" --iterate "* ]]; then
    if [ -d "$out/mutants.out" ]; then
      mkdir -p "$out/carried"
      for kind in caught timeout; do
        cat "$out/mutants.out/$kind.txt" >> "$out/carried/$kind.txt" 2>/dev/null || true
      done
    fi
  else
    rm -rf "$out/carried"
  fi
  # The exit status says whether any mutant survived; the summary below says
  # which, so a survivor does not stop the other group.
  # A mutant that hangs the gate fails its test at the tests' time limit;
  # 2 s instead of 10 keeps such mutants from dominating the run.
  AGENT_TEST_LIMIT_MS=${AGENT_TEST_LIMIT_MS:-2000} \
    cargo mutants --package "$package" "${files[@]}" --profile mutants \
    --jobs "${MUTANTS_JOBS:-2}" --timeout "${MUTANTS_TIMEOUT:-120}" \
    --output "$out" "${extra[@]}" -- "${test_args[@]}" || true
  summarize "$out/mutants.out" "$src" "$@"
}

# One row per file: viable = caught + missed + timeout (unviable mutants do
# not build and say nothing about the tests).
summarize() {
  local dir=$1 src=$2
  shift 2
  printf '\n| file | viable | caught | missed | timeout | score |\n|---|---|---|---|---|---|\n'
  for f in "$@"; do
    local path="$src/$f.rs" caught missed timeout
    caught=$(cat "$dir/caught.txt" "$dir/../carried/caught.txt" 2>/dev/null | grep -c "^$path:" || true)
    missed=$(grep -c "^$path:" "$dir/missed.txt" 2>/dev/null || true)
    timeout=$(cat "$dir/timeout.txt" "$dir/../carried/timeout.txt" 2>/dev/null | grep -c "^$path:" || true)
    local viable=$((caught + missed + timeout))
    local score="-"
    if [ "$viable" -gt 0 ]; then
      score=$(awk -v k=$((caught + timeout)) -v v="$viable" 'BEGIN { printf "%.1f%%", 100 * k / v }')
    fi
    printf '| %s | %d | %d | %d | %d | %s |\n' "$path" "$viable" "$caught" "$missed" "$timeout" "$score"
  done
}

# The tests each group's mutants are judged by: agentgate-permission's whole
# suite (doctests included); agentgate-tools' unit and integration tests without
# the MCP ones (servers over stdio and HTTP, nothing of the shell or path
# checks) and without doctests, which would double each mutant's build.
permission() {
  test_args=()
  run_group permission agentgate-permission agentgate-permission/src "${permission_files[@]}"
}
tools() {
  test_args=(--lib --test all -- --skip mcp)
  run_group tools agentgate-tools agentgate-tools/src "${tools_files[@]}"
}

extra=("$@")
case "$group" in
  permission) permission ;;
  tools) tools ;;
  all) permission; tools ;;
  *)
    echo "usage: $0 [permission|tools|all] [cargo-mutants args...]" >&2
    exit 2
    ;;
esac
