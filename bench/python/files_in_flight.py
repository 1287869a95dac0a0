"""Cold raw-file epochs of one reader against a link with latency: how well
a reader keeps fetch_concurrency downloads in flight. StreamingFileDataset
(workers 0, shuffled, batch_size 32) reads every file of a loopback nginx
through delay_proxy.py (each response's first byte held --delay-ms), with
the engine's fetch_concurrency set; a latency-bound epoch takes about
files x delay / fetch_concurrency.

    SLUICE_LIBRARY=build/bindings/c/libsluice.so PYTHONPATH=bindings/python \\
        /usr/bin/python3 bench/python/files_in_flight.py [--files 1000] \\
        [--size 102400] [--runs 3] [--delay-ms 15] [--fetch-concurrency 2] \\
        [--library NAME=PATH ...]

--library runs the same children against other builds of libsluice.so
(e.g. before=/tmp/old.so after=build/...), interleaved run by run. Each run
is a fresh process with an empty cache folder; prints per library the
median (min, max) of the epoch's seconds and files/s.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

from cold_first_sample import start_nginx
from delay_proxy import DelayProxy
from file_dataset_bench import write_files

# The child: one epoch; StreamingFileDataset takes no fetch_concurrency
# argument, so the engine key is added where the engine is opened.
CHILD = r'''
import sys, time
from sluice.file_dataset import StreamingFileDataset
class Files(StreamingFileDataset):
    def _open_engine(self, *args, **kwargs):
        self._engine_keys = dict(self._engine_keys, fetch_concurrency=int(sys.argv[3]))
        return super()._open_engine(*args, **kwargs)
t0 = time.perf_counter()
ds = Files(remote=sys.argv[1], local=sys.argv[2], manifest='files.txt', output='bytes',
           batch_size=32, shuffle=True, shuffle_seed=1)
n = total = 0
for b in ds:
    n += 1
    total += len(b)
print(n, total, time.perf_counter() - t0)
'''


def epoch(library, url, work, fetch_concurrency):
    """(files, bytes, seconds) of one cold epoch."""
    cache = tempfile.mkdtemp(dir=work)
    try:
        out = subprocess.run([sys.executable, '-c', CHILD, url, cache, str(fetch_concurrency)],
                             capture_output=True, text=True,
                             env=dict(os.environ, SLUICE_LIBRARY=library))
        if out.returncode != 0:
            raise RuntimeError(out.stderr[-2000:])
        n, total, seconds = out.stdout.split()
        return int(n), int(total), float(seconds)
    finally:
        shutil.rmtree(cache)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--files', type=int, default=1000)
    ap.add_argument('--size', type=int, default=100 << 10)
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--delay-ms', type=float, default=15.0)
    ap.add_argument('--fetch-concurrency', type=int, default=2)
    ap.add_argument('--library', action='append', default=[],
                    help='NAME=PATH of a libsluice.so to run (default: $SLUICE_LIBRARY)')
    args = ap.parse_args()
    libraries = [tuple(x.split('=', 1)) for x in args.library] or [
        ('sluice', os.environ['SLUICE_LIBRARY'])]
    work = tempfile.mkdtemp(prefix='sluice-files-in-flight-')
    try:
        www = os.path.join(work, 'www')
        write_files(os.path.join(www, 'ds'), args.files, args.size)
        nginx, port = start_nginx(www, work)
        proxy = DelayProxy(port, delay_ms=args.delay_ms)
        rows = {}
        try:
            url = f'http://127.0.0.1:{proxy.port}/ds'
            for _ in range(args.runs):
                for name, library in libraries:
                    n, total, seconds = epoch(library, url, work, args.fetch_concurrency)
                    if n != args.files or total != args.files * args.size:
                        raise RuntimeError(f'{name}: read {n} files of {total} bytes, expected '
                                           f'{args.files} of {args.files * args.size}')
                    rows.setdefault(name, []).append(seconds)
        finally:
            proxy.close()
            nginx.terminate()
            nginx.wait()
        print(f'{args.files} files of {args.size} B, one reader, fetch_concurrency '
              f'{args.fetch_concurrency}, first byte +{args.delay_ms:g} ms; medians of '
              f'{args.runs} cold epochs (fresh process, empty cache)')
        for name, xs in rows.items():
            med = statistics.median(xs)
            print(f'  {name:12s} {med:8.3f} s ({min(xs):.3f}, {max(xs):.3f}) '
                  f'{args.files / med:8.0f} files/s')
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    main()
