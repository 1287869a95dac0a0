"""The cost of a mixture schedule against fixed proportions over the same
three local MDS streams (int samples): the epoch's plan (one process, one
worker: Plan(...).worker_ids) and samples/s iterating the epoch (whole
batches, iter_batches), for `proportion=` 0.7/0.2/0.1 (Mosaic's
resample-and-shuffle) and a 2-point linear schedule from 0.7/0.2/0.1 to
0.2/0.3/0.5 at half the epoch. Prints the median of `--repeats` runs of
each.

    SLUICE_LIBRARY=build/bindings/c/libsluice.so PYTHONPATH=bindings/python \\
        /usr/bin/python3 bench/python/mixture_bench.py [--samples N] [--repeats 3]
"""
import argparse
import shutil
import statistics
import tempfile
import time

import sluice
from sluice.world import World

SHARES = (0.7, 0.2, 0.1)


def write(folder, first, n):
    with sluice.MDSWriter(out=folder, columns={'value': 'int'}) as w:
        for v in range(first, first + n):
            w.write({'value': v})


def make(folders, epoch_size, scheduled):
    common = dict(batch_size=256, shuffle=True, shuffle_seed=17, num_canonical_nodes=1, epoch_size=epoch_size)
    if scheduled:
        return sluice.StreamingDataset(
            streams=[sluice.Stream(local=f) for f in folders],
            mixture=[(0, list(SHARES)), (epoch_size // 2, [0.2, 0.3, 0.5])], mixture_interpolation='linear',
            **common)
    return sluice.StreamingDataset(
        streams=[sluice.Stream(local=f, proportion=p) for f, p in zip(folders, SHARES)], **common)


def plan_seconds(ds):
    t = time.perf_counter()
    ids = ds.plan(world=World()).worker_ids(0, 0, 0)
    elapsed = time.perf_counter() - t
    return elapsed, len(ids)


def read_rate(ds):
    t = time.perf_counter()
    n = 0
    for batch in ds.iter_batches():
        n += len(batch['value'])
    return n / (time.perf_counter() - t), n


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--samples', type=int, default=400_000, help='samples over the three streams')
    parser.add_argument('--repeats', type=int, default=3)
    args = parser.parse_args()
    root = tempfile.mkdtemp(prefix='mixture_bench_')
    try:
        sizes = [args.samples * 6 // 10, args.samples * 3 // 10, args.samples // 10]
        folders, first = [], 0
        for i, n in enumerate(sizes):
            folders.append(f'{root}/s{i}')
            write(folders[-1], first, n)
            first += n
        epoch = args.samples
        print(f'streams {sizes} samples, epoch_size {epoch}, batch 256, py1e, 1 process; '
              f'medians of {args.repeats}')
        for name, scheduled in (('proportions 0.7/0.2/0.1', False), ('schedule, linear 2-point', True)):
            plans, rates = [], []
            for _ in range(args.repeats):
                seconds, planned = plan_seconds(make(folders, epoch, scheduled))
                plans.append(seconds)
                rate, read = read_rate(make(folders, epoch, scheduled))
                rates.append(rate)
            assert planned == epoch and read == epoch, (planned, read)
            print(f'{name:26s} plan {statistics.median(plans) * 1e3:8.1f} ms   '
                  f'read {statistics.median(rates) / 1e6:6.2f} M samples/s')
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == '__main__':
    main()
