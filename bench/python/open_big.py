#!/usr/bin/env python3
"""Opening a pretraining-size dataset from Python: StreamingDataset(local=)
construction + len() + the first `ds.shards[0]`, each run in a fresh process
(issue 38: "opens in under a second in every process").

Per run: wall seconds of the three steps, the part of it spent inside the
engine's own open (sluice_stream_open), the rest (Python and the other C
calls), the process's max RSS, and what the open added to its private
(anonymous) and shared (file-backed, e.g. the node's mapped binary index)
resident memory (/proc/self/smaps_rollup before and after). Prints every
run and the medians.

With --first, index.json's modification time is set to now before the first
run, so that run is the node's first process (it parses index.json and
writes the binary index every later run maps); it is reported apart.

    SLUICE_LIBRARY=build/bindings/c/libsluice.so PYTHONPATH=bindings/python \\
      python3 bench/python/open_big.py DATASET_DIR [--runs 3] [--first]

DATASET_DIR is an index.json folder, e.g. one written by
bench/python/synthetic_index.py (the shard files need not exist: nothing
is read). With --remote URL it is the cache folder of a stream of that
remote instead (a folder of Parquet files, say: StreamingDataset(remote=URL,
local=DATASET_DIR)); --first then does nothing.

With --fetch, each run then reads one sample at random, `ds[i]` (so
that a run finds its shard not yet cached: a remote stream's first piece
fetch, for Parquet its row group's chunks and its file's footer from the
node's footer store) and reports that step's seconds and what the open and
the fetch together added to smaps_rollup's Private_Clean, Private_Dirty,
Shared_Clean and Shared_Dirty (file pages mapped by this process alone
count as private clean).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys


def smaps_mb():
    fields = {}
    with open('/proc/self/smaps_rollup') as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 2 and parts[1].isdigit():
                fields[parts[0].rstrip(':')] = int(parts[1]) / 1024
    return fields


def resident_mb():
    fields = smaps_mb()
    return fields.get('Anonymous', 0.0), fields.get('Rss', 0.0) - fields.get('Anonymous', 0.0)


def child(folder, remote, fetch):
    import resource
    import time

    import sluice
    from sluice import engine

    lib = engine._lib_
    opened = lib.sluice_stream_open
    inside = [0.0]

    def timed_open(*args):
        t = time.perf_counter()
        try:
            return opened(*args)
        finally:
            inside[0] += time.perf_counter() - t

    lib.sluice_stream_open = timed_open  # what engine.Engine calls
    anon0, shared0 = resident_mb()
    smaps0 = smaps_mb()
    t0 = time.perf_counter()
    ds = sluice.StreamingDataset(remote=remote, local=folder, batch_size=1)
    n = len(ds)
    first = ds.shards[0]
    wall = time.perf_counter() - t0
    out = {}
    if fetch:
        import random
        i = random.randrange(n)
        t1 = time.perf_counter()
        ds[i]
        out['fetch_s'] = time.perf_counter() - t1
        out['sample'] = i
        smaps1 = smaps_mb()
        for k in ('Private_Clean', 'Private_Dirty', 'Shared_Clean', 'Shared_Dirty'):
            out[k + '_mb'] = smaps1.get(k, 0.0) - smaps0.get(k, 0.0)
    anon1, shared1 = resident_mb()
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({'wall_s': wall, 'engine_open_s': inside[0], 'outside_s': wall - inside[0],
                      'max_rss_mb': rss_mb, 'private_mb': anon1 - anon0,
                      'shared_mb': shared1 - shared0, 'len': n, 'shards': len(ds.shards),
                      'first_shard_samples': first.samples, **out}))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('folder')
    parser.add_argument('--runs', type=int, default=3)
    parser.add_argument('--first', action='store_true',
                        help="make the first run the node's first process (see above)")
    parser.add_argument('--remote', help='the stream\'s remote (DATASET_DIR is then its cache)')
    parser.add_argument('--fetch', action='store_true', help='then read ds[0] (see above)')
    parser.add_argument('--child', action='store_true', help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.folder, args.remote, args.fetch)
        return
    if args.first and not args.remote:
        os.utime(os.path.join(args.folder, 'index.json'))

    def run():
        extra = (['--remote', args.remote] if args.remote else []) + (['--fetch'] if args.fetch else [])
        out = subprocess.run([sys.executable, os.path.abspath(__file__), '--child', args.folder]
                             + extra, check=True, capture_output=True, text=True).stdout
        return json.loads(out.strip().splitlines()[-1])

    if args.first:
        print('first process', json.dumps(run()), flush=True)
    runs = []
    for _ in range(args.runs):
        runs.append(run())
        print(json.dumps(runs[-1]), flush=True)
    keys = ['wall_s', 'engine_open_s', 'outside_s', 'max_rss_mb', 'private_mb', 'shared_mb']
    if args.fetch:
        keys += ['fetch_s', 'Private_Clean_mb', 'Private_Dirty_mb', 'Shared_Clean_mb',
                 'Shared_Dirty_mb']
    medians = {k: round(statistics.median(r[k] for r in runs), 3) for k in keys}
    print('median of', args.runs, json.dumps(medians))


if __name__ == '__main__':
    main()
