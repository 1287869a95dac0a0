"""The cost of a packed resume: CPU time of sluice_pack_begin(skip_rows)
for worker 0 of 1 (the rows skipped before the first one handed out),
medians of 3, on lognormal documents (mean ~550 tokens, seq_len 2048).
With --elastic, the cost of an elastic resume instead: CPU and wall time
of sluice_pack_begin_segments for role 0 of 3 ranks after one rank (one
worker, batches of 8) consumed skip_rows rows (it re-reads the token
counts of every document the first shape's ranks consumed).
Runs against any libsluice with sluice_pack_begin (compare two builds with
SLUICE_LIBRARY); each line also prints the next row's token sum, which
must be the same for every build.

    python3 pack_resume_bench.py DIR make          # writes the dataset
    python3 pack_resume_bench.py DIR 1000 3000 5000 [--method bin|concat] [--elastic]
        [--remote]

--remote (with --elastic): each run reads DIR from a cold cache through a
loopback s3rver (resume_bench.S3rver) behind delay_proxy.py (15 ms to
first byte, 100 MB/s a connection): the wall time of the elastic begin
then includes fetching the shards of the documents it re-reads.
"""
import argparse
import ctypes
import json
import os
import statistics
import subprocess
import tempfile
import time

import numpy as np

from sluice import MDSWriter, StreamingDataset, _lib


def make(out, docs=20000, seed=3):
    rng = np.random.default_rng(seed)
    with MDSWriter(out=out, columns={'tokens': 'ndarray:int32'}, size_limit=1 << 24) as w:
        for _ in range(docs):
            n = int(min(8192, max(1, rng.lognormal(6.0, 0.8))))
            w.write({'tokens': rng.integers(1, 50000, size=n).astype(np.int32)})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('dir')
    ap.add_argument('skips', nargs='+')
    ap.add_argument('--method', default='bin')
    ap.add_argument('--elastic', action='store_true')
    ap.add_argument('--remote', action='store_true')
    args = ap.parse_args()
    if args.skips == ['make']:
        make(args.dir)
        return
    if args.remote:
        remote_elastic(args)
        return
    spec = dict(column='tokens', seq_len=2048, eos_id=0, method=args.method)
    packer = StreamingDataset(local=args.dir, batch_size=8, pack=spec)._packer_for_engine()
    row = np.empty(2048, dtype=np.int64)
    count = ctypes.c_uint32()
    _lib.check(_lib.lib.sluice_pack_begin(packer._ptr, 0, 0, 1, 0))  # shards opened once
    for skip in map(int, args.skips):
        times, walls = [], []
        for _ in range(3):
            t, w = time.process_time(), time.perf_counter()
            if args.elastic:
                shape = dict(nodes=1, workers=1, batch_size=8)
                segments = [dict(shape, ranks_per_node=1, rows=skip),
                            dict(shape, ranks_per_node=3, rows=0)]
                _lib.check(_lib.lib.sluice_pack_begin_segments(
                    packer._ptr, 0, json.dumps(segments).encode(), 0, 0))
            else:
                _lib.check(_lib.lib.sluice_pack_begin(packer._ptr, 0, 0, 1, skip))
            times.append(time.process_time() - t)
            walls.append(time.perf_counter() - w)
        _lib.check(_lib.lib.sluice_pack_next(packer._ptr, 1, row.ctypes.data, None, None,
                                             ctypes.byref(count)))
        kind = 'elastic 1 -> 3 ranks' if args.elastic else 'same shape'
        print(f'{args.method} {kind} skip {skip}: begin CPU '
              f'{statistics.median(times) * 1000:.1f} ms, wall '
              f'{statistics.median(walls) * 1000:.1f} ms (next row sum {int(row.sum())})')


def remote_elastic(args):
    """--remote: the elastic begin from a cold cache over s3rver + proxy."""
    import resume_bench
    from delay_proxy import DelayProxy
    spec = dict(column='tokens', seq_len=2048, eos_id=0, method=args.method)
    work = tempfile.mkdtemp(prefix='pack_resume_')
    server = resume_bench.S3rver(os.path.join(work, 's3rver'))
    try:
        base = f'{server.endpoint}/{resume_bench.BUCKET}'
        for name in sorted(os.listdir(args.dir)):
            subprocess.run(['curl', '-sf', *resume_bench.CURL_SIGV4_ARGS, '-T',
                            os.path.join(args.dir, name), f'{base}/data/{name}'],
                           check=True, stdout=subprocess.DEVNULL)
        with DelayProxy(server.port) as proxy:
            os.environ.update(resume_bench.s3_env(f'http://127.0.0.1:{proxy.port}'))
            row = np.empty(2048, dtype=np.int64)
            count = ctypes.c_uint32()
            for skip in map(int, args.skips):
                walls, times = [], []
                for run in range(3):
                    ds = StreamingDataset(remote=f's3://{resume_bench.BUCKET}/data',
                                          local=os.path.join(work, f'cache-{skip}-{run}'),
                                          batch_size=8, pack=spec)
                    packer = ds._packer_for_engine()
                    shape = dict(nodes=1, workers=1, batch_size=8)
                    segments = [dict(shape, ranks_per_node=1, rows=skip),
                                dict(shape, ranks_per_node=3, rows=0)]
                    t, w = time.process_time(), time.perf_counter()
                    _lib.check(_lib.lib.sluice_pack_begin_segments(
                        packer._ptr, 0, json.dumps(segments).encode(), 0, 0))
                    times.append(time.process_time() - t)
                    walls.append(time.perf_counter() - w)
                    _lib.check(_lib.lib.sluice_pack_next(packer._ptr, 1, row.ctypes.data, None,
                                                         None, ctypes.byref(count)))
                print(f'{args.method} elastic 1 -> 3 ranks, cold s3rver + proxy, skip {skip}: '
                      f'begin CPU {statistics.median(times) * 1000:.1f} ms, wall '
                      f'{statistics.median(walls) * 1000:.1f} ms (next row sum {int(row.sum())})')
    finally:
        server.stop()


if __name__ == '__main__':
    main()
