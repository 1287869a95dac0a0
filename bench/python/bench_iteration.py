"""Python iteration throughput over a warm local dataset: samples/s through
sluice.StreamingDataset directly and through a torch DataLoader with workers,
beside Mosaic's StreamingDataset when `streaming` is importable.

    SLUICE_LIBRARY=build/bindings/c/libsluice.so PYTHONPATH=bindings/python \
        /usr/bin/python3 bench/python/bench_iteration.py [--samples N] [--size BYTES]
"""
import argparse
import os
import shutil
import tempfile
import time

import numpy as np

import sluice


def write(folder, samples, size):
    rng = np.random.default_rng(0)
    payload = rng.integers(0, 256, size=size, dtype=np.uint8).tobytes()
    with sluice.MDSWriter(out=folder, columns={'id': 'int', 'data': 'bytes'}) as w:
        for i in range(samples):
            w.write({'id': i, 'data': payload})


def rate(fn, n):
    t = time.perf_counter()
    fn()
    dt = time.perf_counter() - t
    return n / dt, n * 1.0 / dt


def bench_direct(folder, shuffle, cache=None):
    if cache:  # through the engine: `folder` as the remote, shards cached into `cache`
        ds = sluice.StreamingDataset(remote=folder, local=cache, batch_size=256, shuffle=shuffle)
    else:
        ds = sluice.StreamingDataset(local=folder, batch_size=256, shuffle=shuffle)
    n = [0]

    def run():
        for _ in ds:
            n[0] += 1
    r, _ = rate(run, len(ds))
    return r


def bench_loader(folder, workers):
    from torch.utils.data import DataLoader
    ds = sluice.StreamingDataset(local=folder, batch_size=256)
    loader = DataLoader(ds, batch_size=256, num_workers=workers, collate_fn=lambda b: len(b))

    def run():
        for _ in loader:
            pass
    r, _ = rate(run, len(ds))
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--samples', type=int, default=200_000)
    ap.add_argument('--size', type=int, default=1024)
    ap.add_argument('--workers', type=int, default=2)
    args = ap.parse_args()
    root = tempfile.mkdtemp(prefix='sluice_bench_')
    try:
        folder = os.path.join(root, 'ds')
        write(folder, args.samples, args.size)
        print(f'{args.samples} samples of {args.size} B')
        for shuffle in (False, True):
            r = bench_direct(folder, shuffle)
            print(f'sluice StreamingDataset direct, shuffle={shuffle}: {r:,.0f} samples/s '
                  f'({r * args.size / 1e9:.2f} GB/s)')
        if sluice.engine.available():
            cache = os.path.join(root, 'cache')
            bench_direct(folder, False, cache)  # warm the cache
            r = bench_direct(folder, True, cache)
            print(f'sluice engine (remote folder, warm cache), shuffle=True: {r:,.0f} samples/s')
        r = bench_loader(folder, args.workers)
        print(f'sluice via DataLoader(num_workers={args.workers}): {r:,.0f} samples/s')
        try:
            import streaming
        except ImportError:
            print('mosaicml-streaming not importable: no comparison')
        else:
            ds = streaming.StreamingDataset(local=folder, batch_size=256)
            t = time.perf_counter()
            n = sum(1 for _ in ds)
            print(f'mosaic StreamingDataset direct: {n / (time.perf_counter() - t):,.0f} samples/s')
    finally:
        shutil.rmtree(root)


if __name__ == '__main__':
    main()
