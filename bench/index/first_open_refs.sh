#!/bin/bash
# The node's first open of a local Parquet folder (issue 38) beside its
# floors, alternated in one run: the engine (stream_open on LIB_DIR's
# library, a fresh cache and state folder a run), the C floor
# (footer_read_floor.c: list and read each tail, nothing decoded) and the
# reference readers listing the folder and decoding every footer: arrow-rs
# (footer_parse_floor/, its three modes) and DuckDB and pyarrow
# (footer_parse_duckdb.py). A line a run: wall user system maxrss_kb from
# /usr/bin/time, the load before it, and the program's own line (files, row
# groups and rows, to check each against the engine's samples and shards).
#
#   bench/index/first_open_refs.sh STREAM_OPEN LIB_DIR FLOOR ARROW FOLDER WORK [ROUNDS] [READERS]
#
# STREAM_OPEN: build-rel/bench/index/stream_open; LIB_DIR: a folder holding
# libsluice.so.4; FLOOR: `cc -O2 -pthread -o FLOOR bench/index/footer_read_floor.c`;
# ARROW: footer_parse_floor/target/release/footer_parse_floor (cargo build
# --release --locked there); WORK: scratch. READERS (default "engine floor
# arrow-reader arrow-tail arrow-lean duckdb-file"): which run a round, in
# that order; also duckdb-chunk, pyarrow-count, pyarrow-frags (slow: ~60 us
# of CPU and ~21 KB of memory a file: 2.1 GB at 100k). The folder's pages are warm after
# the first run: every run reads from the page cache.
set -euo pipefail
open=$1 lib=$2 floor=$3 arrow=$4 folder=$5 work=$6 rounds=${7:-3}
readers=${8:-engine floor arrow-reader arrow-tail arrow-lean duckdb-file}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work"
run() {  # NAME COMMAND...
  local name=$1 load; shift
  load=$(cut -d' ' -f1 /proc/loadavg)
  /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$@" >"$work/out"
  echo "$name: wall user system maxrss_kb $(cat "$work/time") load $load | $(tail -1 "$work/out")"
}
for ((r = 1; r <= rounds; r++)); do
  for reader in $readers; do
    case $reader in
      engine)
        rm -rf "$work/cache" "$work/state"
        mkdir -p "$work/state"
        SLUICE_CACHE_STATE_DIR="$work/state" LD_LIBRARY_PATH="$lib" run engine "$open" "$folder" "$work/cache"
        ;;
      floor) run floor "$floor" "$folder" 16 ;;
      arrow-*) run "$reader" "$arrow" "$folder" 16 "${reader#arrow-}" ;;
      duckdb-* | pyarrow-*) run "$reader" "$here/footer_parse_duckdb.py" "$reader" "$folder" ;;
      *) echo "unknown reader $reader" >&2; exit 2 ;;
    esac
  done
done
rm -rf "$work/cache" "$work/state"
