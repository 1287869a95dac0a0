#!/bin/bash
# The node's first open of a remote folder (issue 38's Parquet footer
# index), library A against library B, alternated: a fresh cache and state
# folder a run, CPU from /usr/bin/time; then `cmp` of the two libraries'
# listing.json, parquet_footers and parquet_index.bin. With --callgrind, one counted run a
# library instead (valgrind, all threads): total instructions and per file.
#
#   bench/index/first_open_ab.sh [--callgrind] STREAM_OPEN LIB_DIR_A LIB_DIR_B FOLDER WORK [ROUNDS]
#
# STREAM_OPEN: build-rel/bench/index/stream_open; LIB_DIR_*: folders holding
# libsluice.so.4 (e.g. another tree's build-rel/bindings/c), put first on
# LD_LIBRARY_PATH; FOLDER: the remote (e.g. hard links of
# tests/data/parquet/pa26_codec_none.parquet); WORK: scratch (caches there).
set -euo pipefail
callgrind=0
if [[ "${1:-}" == --callgrind ]]; then callgrind=1; shift; fi
open=$1 a=$2 b=$3 folder=$4 work=$5 rounds=${6:-3}
files=$(find "$folder" -maxdepth 1 -type f | wc -l)
mkdir -p "$work"
run() {  # LIB_DIR NAME
  rm -rf "$work/cache-$2" "$work/state-$2"
  mkdir -p "$work/state-$2"
  if [[ $callgrind == 1 ]]; then
    SLUICE_CACHE_STATE_DIR="$work/state-$2" LD_LIBRARY_PATH="$1" valgrind --tool=callgrind \
      --callgrind-out-file="$work/callgrind-$2.out" "$open" "$folder" "$work/cache-$2" \
      >/dev/null 2>"$work/valgrind-$2.log"
    ir=$(grep -m1 '^summary:' "$work/callgrind-$2.out" | awk '{print $2}')
    echo "$2: $ir instructions, $((ir / files)) a file ($files files)"
  else
    local load; load=$(cut -d' ' -f1 /proc/loadavg)
    SLUICE_CACHE_STATE_DIR="$work/state-$2" LD_LIBRARY_PATH="$1" /usr/bin/time -f "%e %U %S %M" \
      -o "$work/time-$2" "$open" "$folder" "$work/cache-$2" >/dev/null
    echo "$2: wall user system maxrss_kb $(cat "$work/time-$2") load $load"
  fi
}
if [[ $callgrind == 1 ]]; then rounds=1; fi
for ((r = 1; r <= rounds; r++)); do
  run "$a" A
  run "$b" B
done
# parquet_index.bin's bytes 16-23 are its key, made of its inputs' inode
# and mtime (stream_index.cc's ListedTable): they differ run to run.
for f in listing.json parquet_footers parquet_index.bin; do
  skip=0
  if [[ $f == parquet_index.bin ]]; then skip=24; fi
  # A folder on a local disk keeps no parquet_footers (KeepsParquetFooterStore).
  ina=0 inb=0
  [[ -e "$work/cache-A/.sluice/$f" ]] && ina=1
  [[ -e "$work/cache-B/.sluice/$f" ]] && inb=1
  if ((ina + inb < 2)); then
    echo "$f: $( ((ina + inb == 0)) && echo "in neither" || { ((ina)) && echo "only A's" || echo "only B's"; })"
  elif cmp -s -i $skip "$work/cache-A/.sluice/$f" "$work/cache-B/.sluice/$f"; then
    echo "$f: identical"
  else
    echo "$f: DIFFERS"
  fi
done
