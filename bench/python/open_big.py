#!/usr/bin/env python3
"""Opening a pretraining-size dataset from Python: StreamingDataset(local=)
construction + len() + the first `ds.shards[0]`, each run in a fresh process
(issue 38: "opens in under a second in every process").

Per run: wall seconds of the three steps, the part of it spent inside the
engine's own open (sluice_stream_open), the rest (Python and the other C
calls), and the process's max RSS. Prints every run and the medians.

    SLUICE_LIBRARY=build/bindings/c/libsluice.so PYTHONPATH=bindings/python \\
      python3 bench/python/open_big.py DATASET_DIR [--runs 3]

DATASET_DIR is an index.json folder, e.g. one written by
bench/python/synthetic_index.py (the shard files need not exist: nothing
is read).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys


def child(folder):
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
    t0 = time.perf_counter()
    ds = sluice.StreamingDataset(local=folder, batch_size=1)
    n = len(ds)
    first = ds.shards[0]
    wall = time.perf_counter() - t0
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({'wall_s': wall, 'engine_open_s': inside[0], 'outside_s': wall - inside[0],
                      'max_rss_mb': rss_mb, 'len': n, 'shards': len(ds.shards),
                      'first_shard_samples': first.samples}))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('folder')
    parser.add_argument('--runs', type=int, default=3)
    parser.add_argument('--child', action='store_true', help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.folder)
        return
    runs = []
    for _ in range(args.runs):
        out = subprocess.run([sys.executable, os.path.abspath(__file__), '--child', args.folder],
                             check=True, capture_output=True, text=True).stdout
        runs.append(json.loads(out.strip().splitlines()[-1]))
        print(json.dumps(runs[-1]), flush=True)
    medians = {k: round(statistics.median(r[k] for r in runs), 3)
               for k in ('wall_s', 'engine_open_s', 'outside_s', 'max_rss_mb')}
    print('median of', args.runs, json.dumps(medians))


if __name__ == '__main__':
    main()
