#!/bin/sh
# Before/after runs of the engine benchmarks and the speed table (issue 33:
# "behaviour and speed unchanged"), interleaved (before, after, before, ...)
# so a loaded machine's swings fall on both sides alike.
#
#   [BENCHES='planner_bench ...'] bench/before_after.sh BEFORE_TREE AFTER_TREE OUT [RUNS] [SCALE]
#
# Each tree needs a release build in BUILD (default build-rel: meson setup
# build-rel -Dbuildtype=release -Dtests=false -Dbench=true; ninja -C build-rel
# bench/engine/engine_bench bench/read/read_bench bench/planner_bench
# bindings/c/libsluice.so.4). Each side runs its own binaries, library and
# Python package on its own data folder under OUT, with the same arguments;
# the speed table is AFTER's script on both sides (older ones lack options
# such as --no-registry).
# Every invocation is wrapped in /usr/bin/time, whose last stderr line is
# "user sys wall" seconds: CPU time is what the load stretches least. OUT/
# holds one log per bench, side and run (the benches' own rows and CPU
# counters are in the logs); the summary prints each side's
# median (min-max) of user+sys and wall seconds per bench.
set -eu
[ $# -ge 3 ] || { sed -n 5,6p "$0" >&2; exit 2; }
before=$1 after=$2 out=$3 runs=${4:-5} scale=${5:-0.01}
build=${BUILD:-build-rel}
benches=${BENCHES:-engine_bench read_bench planner_bench speed_table}
python=${PYTHON:-python3}
mkdir -p "$out"

# The benchmarks that exist in both trees, with arguments both accept.
# planner_bench: 10M samples, which both versions register; OneWorker's
# which:0 (node 3, rank 5, worker 7) is the one worker older versions plan.
planner_filter='BM_(WholeArray|OneWorker)/samples:10000000/(threads|iterations|which:0)'

run() {  # side tree bench run: one invocation, logged
  side=$1 tree=$2 bench=$3 i=$4
  log=$out/$bench.$side.$i.log
  data=$out/data-$side
  case $bench in
    engine_bench)
      set -- "$tree/$build/bench/engine/engine_bench" "$data/engine" \
        --sets=100000x1024,800x262144 --passes=3 ;;
    read_bench)
      set -- "$tree/$build/bench/read/read_bench" "$data/read" --scale="$scale" --passes=3 ;;
    planner_bench)
      set -- "$tree/$build/bench/planner_bench" --benchmark_filter="$planner_filter" ;;
    speed_table)
      set -- env SLUICE_LIBRARY="$tree/$build/bindings/c/libsluice.so.4" \
        PYTHONPATH="$tree/bindings/python" "$python" "$after/bench/python/speed_table.py" \
        --work "$data/speed" --scale "$scale" --runs 1 --rows loader,batch --no-registry ;;
  esac
  /usr/bin/time -f '%U %S %e' "$@" >"$log" 2>"$log.time" || {
    echo "$bench ($side, run $i) failed: see $log and $log.time" >&2
    return 1
  }
}

# Run 0 (not summarised) writes each side's datasets, so the timed runs
# measure reading alone.
for bench in $benches; do
  [ "$bench" = planner_bench ] && continue
  run before "$before" "$bench" 0
  run after "$after" "$bench" 0
done
for bench in $benches; do
  i=1
  while [ "$i" -le "$runs" ]; do
    run before "$before" "$bench" "$i"
    run after "$after" "$bench" "$i"
    i=$((i + 1))
  done
done

# Medians of the /usr/bin/time lines.
"$python" - "$out" "$runs" $benches <<'EOF'
import statistics, sys
out, runs, benches = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def cell(xs):
    return f'{statistics.median(xs):.2f} ({min(xs):.2f}-{max(xs):.2f})'
print('| bench | before: CPU s | after: CPU s | before: wall s | after: wall s |')
print('| --- | --- | --- | --- | --- |')
for bench in benches:
    row = {}
    for side in ('before', 'after'):
        cpu, wall = [], []
        for i in range(1, runs + 1):
            with open(f'{out}/{bench}.{side}.{i}.log.time') as f:
                u, s, e = f.read().split('\n')[-2].split()
            cpu.append(float(u) + float(s))
            wall.append(float(e))
        row[side] = (cell(cpu), cell(wall))
    print(f'| {bench} | {row["before"][0]} | {row["after"][0]} | '
          f'{row["before"][1]} | {row["after"][1]} |')
EOF
