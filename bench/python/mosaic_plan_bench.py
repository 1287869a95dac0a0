#!/usr/bin/env python3
"""Mosaic's own epoch planning, timed beside planner_bench's OneWorker.

Every worker of a Mosaic job gets its share from the array its node's
local leader builds (generate_work_random_batching: the partition of the
whole world, the shuffle of the whole epoch, the two remaps); that array is
what one worker's plan costs there. This runs exactly those calls of
mosaicml-streaming (its partition and shuffle modules, imported from an
installed or unpacked copy without the package's torch-importing
__init__) on planner_bench's inputs: one stream of equal shards (10M and
100M samples in 10k shards, 1B in 100k, 4B in 1M), 64 canonical nodes,
8 x 8 x 8 world, batch 32, py1e, seed 9176, default block (262,144),
epoch 1. One stream chooses every sample, so resample_streams's
small_per_big is the identity (np.arange, built as Mosaic builds it).

Each repeat runs in a fresh child; the parent prints the medians of the
child's wall time of the planning calls, its CPU time (user + system, the
whole child) and its peak resident set (wait4's rusage of the child).
Sizes whose arrays cannot fit (about 40 bytes a sample at peak) in this
machine's memory are reported as not run rather than tried.

    python3 bench/python/mosaic_plan_bench.py --streaming SITE_PACKAGES_DIR \\
      [--samples 10000000 100000000 ...] [--repeats 3]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import types

CHILD_BYTES_PER_SAMPLE = 40  # partition + shuffle + np.where temporaries, int64


def shards_for(samples):
    return 10_000 if samples <= 100_000_000 else 100_000 if samples <= 1_000_000_000 else 1_000_000


def import_planning(site):
    """streaming.base.partition and .shuffle without streaming/__init__."""
    for name, rel in (('streaming', 'streaming'), ('streaming.base', 'streaming/base')):
        mod = types.ModuleType(name)
        mod.__path__ = [os.path.join(site, rel)]
        sys.modules[name] = mod
    from streaming.base.partition import get_partitions
    from streaming.base.shuffle import get_shuffle
    return get_partitions, get_shuffle


def child(site, samples):
    import numpy as np
    get_partitions, get_shuffle = import_planning(site)
    shards = shards_for(samples)
    shard_sizes = np.full(shards, samples // shards, dtype=np.int64)
    start = time.perf_counter()
    # dataset.resample_streams(epoch) for one stream taking every sample.
    small_per_big = np.arange(samples, dtype=np.int64)
    big_ids = get_partitions('orig', samples, 64, 8, 8, 8, 32, 0, None)
    shuffle = get_shuffle('py1e', shard_sizes, 64, 9176, 1, 262_144)
    big_ids = np.where(big_ids != -1, shuffle[big_ids], -1)
    work = np.where(big_ids != -1, small_per_big[big_ids], -1)
    wall = time.perf_counter() - start
    print(json.dumps({'wall_s': wall, 'shape': list(work.shape)}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--streaming', required=True, help='directory holding the streaming package')
    ap.add_argument('--samples', type=int, nargs='+',
                    default=[10_000_000, 100_000_000, 1_000_000_000, 4_000_000_000])
    ap.add_argument('--repeats', type=int, default=3)
    ap.add_argument('--child', type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.streaming, args.child)
        return
    memory = os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES')
    for samples in args.samples:
        if samples * CHILD_BYTES_PER_SAMPLE > memory:
            print(f'{samples:>13,} samples: not run (about {samples * CHILD_BYTES_PER_SAMPLE / 2**30:.0f} GiB '
                  f'at {CHILD_BYTES_PER_SAMPLE} bytes a sample; this machine has {memory / 2**30:.0f} GiB)')
            continue
        walls, cpus, peaks = [], [], []
        for _ in range(args.repeats):
            proc = subprocess.Popen([sys.executable, __file__, '--streaming', args.streaming, '--child', str(samples)],
                                    stdout=subprocess.PIPE, text=True)
            out = proc.stdout.read()
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
            if proc.returncode != 0:
                sys.exit(f'{samples} samples: the child failed ({proc.returncode})')
            peak = usage.ru_maxrss  # KiB: this child's own peak
            walls.append(json.loads(out)['wall_s'])
            peaks.append(peak / 1024)
            # The child's whole CPU time (its imports included, about 0.2 s):
            # on a loaded machine the wall time says little.
            cpus.append(usage.ru_utime + usage.ru_stime)
        print(f'{samples:>13,} samples: {statistics.median(walls):.2f} s wall, '
              f'{statistics.median(cpus):.2f} s CPU, {statistics.median(peaks):,.0f} MB peak '
              f'(median of {args.repeats}; runs {", ".join(f"{w:.2f}" for w in walls)} s)', flush=True)


if __name__ == '__main__':
    main()
