"""What writing the cache behind a consumer served from reused buffers would
cost, before building it: a single pass in order of B (served from its
reused shard buffers, nothing written) alone, and beside a second process
writing the same bytes as a cache would, either with O_DIRECT from one
reused buffer (4 writes in flight) or through the page cache; the writer
starts when the pass's epoch does (after the child's start, measured on the
round's lone run). Alternated, each row's epoch median (min-max), the
pass's CPU s/GB (its own process only) and the writer's wall.

    SLUICE_LIBRARY=build-rel/bindings/c/libsluice.so.4 PYTHONPATH=bindings/python \\
        /usr/bin/python3 bench/python/single_pass_beside_write.py [--runs 3] [--samples 8000]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from cold_epoch import sluice_epoch  # noqa: E402
from cold_first_sample import start_nginx, write  # noqa: E402

WRITER = '''
import os, sys, time
sys.path.insert(0, %r)
import page_cache_write_cost
path, total, flags, in_flight, delay = sys.argv[1:6]
time.sleep(float(delay))
t = time.perf_counter()
page_cache_write_cost.write_file(path, int(total), int(flags), int(in_flight))
print(time.perf_counter() - t)
os.remove(path)
''' % HERE

ROWS = (('alone', None, 0), ('+ O_DIRECT writer', os.O_DIRECT, 4), ('+ buffered writer', 0, 1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--samples', type=int, default=8000)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix='sluice-pass-beside-write-')
    try:
        data = os.path.join(work, 'www', 'data')
        write(data, args.samples, 256 << 10)
        nbytes = sum(os.path.getsize(os.path.join(data, n))
                     for n in os.listdir(data) if n.endswith('.mds'))
        block = 2 << 20
        total = nbytes // block * block
        nginx, port = start_nginx(os.path.join(work, 'www'), work)
        rows, start = {}, 0.0
        try:
            for _ in range(args.runs):
                for name, flags, in_flight in ROWS:
                    time.sleep(3)  # past the guest's free page reporting delay, every row alike
                    writer = None if flags is None else subprocess.Popen(
                        [sys.executable, '-c', WRITER, os.path.join(work, 'writer.bin'), str(total),
                         str(flags), str(in_flight), str(start)], stdout=subprocess.PIPE, text=True)
                    t0 = time.perf_counter()
                    seconds, cpu, size, *_ = sluice_epoch(
                        os.environ['SLUICE_LIBRARY'], f'http://127.0.0.1:{port}/data', False, work,
                        args.samples, single_pass_bytes=nbytes)
                    if writer is None:
                        start = max(0.0, time.perf_counter() - t0 - seconds - 0.1)
                        written = 0.0
                    else:
                        out, _ = writer.communicate()
                        if writer.returncode != 0:
                            raise RuntimeError(f'{name} failed')
                        written = float(out)
                    rows.setdefault(name, []).append((seconds, cpu / (size / 1e9), written))
        finally:
            nginx.terminate()
            nginx.wait()
        print(f'single pass in order, {nbytes / 1e9:.2f} GB from loopback nginx, medians of '
              f'{args.runs}; load {os.getloadavg()[0]:.1f}')
        for name, xs in rows.items():
            secs = [x[0] for x in xs]
            print(f'  {name:20s} epoch {statistics.median(secs):.2f} s ({min(secs):.2f}-'
                  f'{max(secs):.2f})  CPU {statistics.median(x[1] for x in xs):.2f} s/GB  '
                  f'writer {statistics.median(x[2] for x in xs):.2f} s')
    finally:
        shutil.rmtree(work)


if __name__ == '__main__':
    main()
