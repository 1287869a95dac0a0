"""Cold single-pass epochs (StreamingDataset(single_pass=True)) of workload
B from a loopback nginx, libraries alternated, for what a pass's shard
buffers cost: the child's CPU seconds and minor page faults (ru_minflt, from
the dataset's construction on) per GB of shard bytes, and how many fresh
buffers of 4 MiB or more it allocated (aligned_alloc, UninitializedBuffer's
large buffers, counted by big_alloc_count.c preloaded; a buffer reused from
a pool or from the process's recycling is not counted).

    PYTHONPATH=bindings/python /usr/bin/python3 bench/python/single_pass_buffers.py \\
        --library main=$MAIN_LIBRARY --library new=build-rel/bindings/c/libsluice.so.4 \\
        [--samples 4000] [--compression zstd] [--shuffled] [--runs 3]

With --compression the shards are written compressed (every sample holds
the same payload, so zstd makes 1 GB of shards about 5 MB): the pass
receives each zip and decompresses it in memory. Needs gcc for the counter.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import cold_epoch  # noqa: E402
from cold_first_sample import payload, start_nginx  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--library', action='append', required=True, help='NAME=PATH of a libsluice.so')
    ap.add_argument('--samples', type=int, default=4000)
    ap.add_argument('--compression')
    ap.add_argument('--shuffled', action='store_true')
    ap.add_argument('--runs', type=int, default=3)
    args = ap.parse_args()
    import sluice
    libraries = [tuple(x.split('=', 1)) for x in args.library]
    work = tempfile.mkdtemp(prefix='sluice-pass-buffers-')
    try:
        counter = os.path.join(work, 'big_alloc_count.so')
        subprocess.run(['gcc', '-O2', '-shared', '-fPIC', '-o', counter,
                        os.path.join(HERE, 'big_alloc_count.c'), '-ldl'], check=True)
        data = os.path.join(work, 'www', 'data')
        one = payload(256 << 10)
        with sluice.MDSWriter(out=data, columns={'id': 'int', 'data': 'bytes'},
                              size_limit=64 << 20, compression=args.compression) as w:
            for i in range(args.samples):
                w.write({'id': i, 'data': one})
        with open(os.path.join(data, 'index.json')) as f:
            raw = sum(s['raw_data']['bytes'] for s in json.load(f)['shards'])
        nginx, port = start_nginx(os.path.join(work, 'www'), work)
        rows = {name: [] for name, _ in libraries}
        try:
            for _ in range(args.runs):
                for name, lib in libraries:
                    cache = tempfile.mkdtemp(dir=work)
                    env = dict(os.environ, SLUICE_LIBRARY=lib, LD_PRELOAD=counter)
                    out = subprocess.run(
                        [sys.executable, '-c', cold_epoch.CHILD, f'http://127.0.0.1:{port}/data',
                         cache, '1' if args.shuffled else '0', '', '1', ''],
                        capture_output=True, text=True, env=env)
                    shutil.rmtree(cache)
                    if out.returncode != 0:
                        raise RuntimeError(out.stderr)
                    n, seconds, cpu, _, faults = out.stdout.splitlines()[0].split()
                    if int(n) != args.samples:
                        raise RuntimeError(f'{name}: read {n} samples')
                    big = [line for line in out.stderr.splitlines() if line.startswith('BIGALLOC')]
                    rows[name].append((float(seconds), float(cpu), int(faults),
                                       int(big[-1].split()[1])))
        finally:
            nginx.terminate()
            nginx.wait()
        print(f'{args.samples} x 256 KiB, {raw / 1e9:.2f} GB of shards'
              f'{", " + args.compression if args.compression else ""}, single pass '
              f'{"shuffled" if args.shuffled else "in order"}; medians of {args.runs} (min-max)')
        print(f'  {"library":10s} {"epoch s":>20s} {"CPU s/GB":>18s} {"faults/GB":>24s} '
              f'{"fresh buffers":>14s}')
        for name, xs in rows.items():
            def col(k, scale=1.0, fmt='.2f'):
                v = [x[k] * scale for x in xs]
                return f'{statistics.median(v):{fmt}} ({min(v):{fmt}}-{max(v):{fmt}})'
            print(f'  {name:10s} {col(0):>20s} {col(1, 1e9 / raw):>18s} '
                  f'{col(2, 1e9 / raw, ".0f"):>24s} {col(3, 1, ".0f"):>14s}')
    finally:
        shutil.rmtree(work)


if __name__ == '__main__':
    main()
