#!/usr/bin/env python3
"""Ray Data reading a local MDS dataset: sluice.ray.read_sluice with 1 and
2 read tasks against ray.data.from_torch(sluice.StreamingDataset), which
streams through one task. Run in the engines venv (it has ray):

    SLUICE_LIBRARY=build/bindings/c/libsluice.so.4 PYTHONPATH=bindings/python:tests/engines \\
        build/engines-venv/bin/python bench/python/ray_read_bench.py DIR \\
        [--samples 200000] [--runs 3]

The dataset (written once, reused when present): `samples` rows of an int,
a float64, a str of about 20 bytes and 64 random bytes, in zstd MDS shards
of 1 MiB. A run is one pass that consumes every row as Ray batches (the
rows are counted); its time starts with the read call, Ray already up (a
local Ray of two CPUs, tests/engines/ray_local.py). Prints, per way of
reading, the median seconds and rows per second over the runs, and the
rows counted (the same for every way).
"""
import argparse
import os
import statistics
import time

import numpy as np


def write_dataset(out, samples):
    import sluice
    if os.path.exists(os.path.join(out, 'index.json')):
        return
    rng = np.random.default_rng(7)
    columns = {'id': 'int', 'score': 'float64', 'text': 'str', 'data': 'bytes'}
    with sluice.MDSWriter(out=out, columns=columns, compression='zstd',
                          size_limit=1 << 20) as w:
        for i in range(samples):
            w.write({'id': i, 'score': i / 3, 'text': 'sample number %d' % i,
                     'data': rng.bytes(64)})


def consume(ds):
    return sum(len(b['id']) for b in ds.iter_batches(batch_size=4096, batch_format='numpy'))


def from_torch_ids(ds):
    # from_torch rows are {'item': sample}.
    return sum(len(b['item']) for b in ds.iter_batches(batch_size=4096, batch_format='numpy'))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('folder')
    parser.add_argument('--samples', type=int, default=200000)
    parser.add_argument('--runs', type=int, default=3)
    args = parser.parse_args()
    write_dataset(args.folder, args.samples)
    import ray_local
    import sluice
    with ray_local.started() as ray:
        import sluice.ray
        ways = {
            'read_sluice, 1 task': lambda: consume(
                sluice.ray.read_sluice(local=args.folder, override_num_blocks=1)),
            'read_sluice, 2 tasks': lambda: consume(
                sluice.ray.read_sluice(local=args.folder, override_num_blocks=2)),
            'from_torch(StreamingDataset)': lambda: from_torch_ids(
                ray.data.from_torch(sluice.StreamingDataset(local=args.folder, batch_size=4096))),
        }
        for name, run in ways.items():
            times, rows = [], None
            for _ in range(args.runs):
                start = time.perf_counter()
                rows = run()
                times.append(time.perf_counter() - start)
            median = statistics.median(times)
            print(f'{name}: {median:.2f} s, {rows / median:,.0f} rows/s ({rows} rows)',
                  flush=True)


if __name__ == '__main__':
    main()
