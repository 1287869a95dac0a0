"""The floor under a cached cold epoch's receive and cache write (issue 41):
B's shards (cold_epoch.py's workload, MDS in 64 MiB shards) from a
loopback nginx by 4 parallel curl into /dev/null and into files, and by
bench/http/cache_write_floor.c in each of its modes (receive only; read
and written in 16 KiB or 1 MiB calls; spliced from the socket into the
file), alternated within every run; medians (min-max) of the wall, its
ratio to curl into /dev/null, the receiver's and nginx's CPU seconds per
GB. Each row's files are deleted after it, as a cache folder is; --pause
waits that many seconds before each row (the memory the last row freed
is then reported to the host on a VM with free page reporting, and the
next row's first touch of it costs more: BENCHMARKS.md, cache41s).

    cc -O2 -pthread -o $WORK/cache_write_floor bench/http/cache_write_floor.c
    SLUICE_LIBRARY=build/bindings/c/libsluice.so.4 PYTHONPATH=bindings/python \\
        /usr/bin/python3 bench/python/cache_write_floor.py $WORK/cache_write_floor \\
        [--runs 5] [--samples 8000] [--pause 0]

(The sluice package is imported by the shared harness for its data writer.)
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
from cold_epoch import curl_epoch, process_cpu_seconds  # noqa: E402
from cold_first_sample import start_nginx, write  # noqa: E402

MODES = ('curl > null', 'curl > files', 'null', 'write', 'write1m', 'splice', 'splice16k')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('floor', help='the built cache_write_floor program')
    ap.add_argument('--runs', type=int, default=5)
    ap.add_argument('--samples', type=int, default=8000)
    ap.add_argument('--pause', type=float, default=0.0,
                    help='seconds to wait before each row')
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix='sluice-cache-write-floor-')
    rows = {}
    try:
        data = os.path.join(work, 'www', 'data')
        write(data, args.samples, 256 << 10)
        shards = sorted(n for n in os.listdir(data) if n.endswith('.mds'))
        size = sum(os.path.getsize(os.path.join(data, n)) for n in shards)
        nginx, port = start_nginx(os.path.join(work, 'www'), work)
        out = os.path.join(work, 'out')
        os.makedirs(out)
        try:
            for _ in range(args.runs):
                for mode in MODES:
                    time.sleep(args.pause)
                    before = process_cpu_seconds(nginx.pid)
                    if mode.startswith('curl'):
                        seconds, cpu, _ = curl_epoch(
                            [f'http://127.0.0.1:{port}/data/{n}' for n in shards], 4, out,
                            discard=mode == 'curl > null')
                    else:
                        got = subprocess.run([args.floor, str(port), mode, '4', out] +
                                             [f'/data/{n}' for n in shards],
                                             capture_output=True, text=True, check=True)
                        seconds, cpu = (float(x) for x in got.stdout.split())
                        for name in os.listdir(out):
                            os.remove(os.path.join(out, name))
                    server = process_cpu_seconds(nginx.pid) - before
                    rows.setdefault(mode, []).append((seconds, cpu / size * 1e9,
                                                      server / size * 1e9))
        finally:
            nginx.terminate()
            nginx.wait()
    finally:
        shutil.rmtree(work)
    print(f'{len(shards)} shards, {size / 1e9:.2f} GB, 4 parallel, medians of {args.runs}, '
          f'pause {args.pause:g} s, load {open("/proc/loadavg").read().split()[0]}')
    best = statistics.median(x[0] for x in rows['curl > null'])
    print(f'  {"row":14s} {"wall s (min-max)":>24s} {"of curl":>8s} {"CPU s/GB":>9s} '
          f'{"nginx s/GB":>10s}')
    for mode, xs in rows.items():
        walls = [x[0] for x in xs]
        median = statistics.median(walls)
        print(f'  {mode:14s} {median:8.3f} ({min(walls):.3f}-{max(walls):.3f})  '
              f'{best / median:8.0%} {statistics.median(x[1] for x in xs):9.2f} '
              f'{statistics.median(x[2] for x in xs):10.2f}')


if __name__ == '__main__':
    main()
