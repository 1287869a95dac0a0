#!/usr/bin/env bash
# Runs the libFuzzer targets of a -Dfuzz=true build for a fixed time each,
# two at a time, from the committed seeds (tests/fuzz/corpus/<target>/)
# plus what earlier runs in the same build found (<build>/fuzz-corpus/).
#   tests/fuzz/run_fuzzers.sh <build dir> <seconds per target> [target...]
# FUZZ_SEED=<n> makes libFuzzer's choices repeatable (CI); unset, each run
# draws its own seed.
# Prints executions per target; exits non-zero when a target found a crash,
# leak, timeout or broken invariant (the input is in <build>/fuzz-artifacts/;
# make it a regression test, see README.md).
set -uo pipefail
build="$1"; seconds="$2"; shift 2
src="$(cd "$(dirname "$0")" && pwd)"
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for d in "$src"/corpus/*/; do targets+=("$(basename "$d")"); done
fi
jobs="${FUZZ_JOBS:-2}"
seed_flag=()
if [ -n "${FUZZ_SEED:-}" ]; then seed_flag=(-seed="$FUZZ_SEED"); fi
logs="$build/fuzz-logs"
mkdir -p "$logs" "$build/fuzz-artifacts"

run_one() {
  local t="$1" exe="$build/tests/fuzz/$1"
  mkdir -p "$build/fuzz-corpus/$t"
  # -timeout: one input taking 10 s is a hang; -rss_limit_mb (and with it
  # -malloc_limit_mb) 2 GiB: a single allocation past it is a finding,
  # which is how a declared size driving an allocation shows up.
  "$exe" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "${seed_flag[@]}" \
    -artifact_prefix="$build/fuzz-artifacts/$t-" \
    "$build/fuzz-corpus/$t" "$src/corpus/$t" >"$logs/$t.log" 2>&1
  local rc=$?
  local execs
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$logs/$t.log" | tail -1)
  if [ $rc -eq 0 ]; then
    printf '%-30s %10s execs in %ss\n' "$t" "${execs:-?}" "$seconds"
  else
    printf '%-30s FAILED (exit %d) after %s execs, see %s\n' "$t" "$rc" "${execs:-?}" "$logs/$t.log"
    grep -E 'FUZZ_CHECK|ERROR: |runtime error|Test unit written' "$logs/$t.log" | head -5
  fi
  return $rc
}

failed=0
pids=()
names=()
for t in "${targets[@]}"; do
  if [ ! -x "$build/tests/fuzz/$t" ]; then echo "no fuzz target $t in $build" >&2; exit 2; fi
  run_one "$t" & pids+=($!); names+=("$t")
  if [ ${#pids[@]} -ge "$jobs" ]; then
    wait "${pids[0]}" || failed=1
    pids=("${pids[@]:1}")
  fi
done
for p in "${pids[@]}"; do wait "$p" || failed=1; done
exit $failed
