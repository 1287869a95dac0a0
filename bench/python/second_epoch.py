"""The epoch after a cold one: what a library's way of writing the cache
leaves for the next process over the same cache folder. Per library and
run: a cold epoch of B from a loopback nginx into an empty cache (a fresh
process), then a second fresh process reading the whole epoch from that
now full cache (nothing downloaded), in order or shuffled; libraries
alternated within every run, medians (min-max) of each. The page cache
is left as each library's cold epoch left it (a cache written through
the page cache is read from memory; one written with O_DIRECT, from the
disk), as a job's next epoch or a restarted job would find it.

    SLUICE_LIBRARY=build-rel/bindings/c/libsluice.so.4 PYTHONPATH=bindings/python \\
        /usr/bin/python3 bench/python/second_epoch.py --library old=PATH --library new=PATH \\
        [--runs 3] [--samples 8000] [--shuffle]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from cold_epoch import CHILD  # noqa: E402
from cold_first_sample import start_nginx, write  # noqa: E402


def epoch(library, url, cache, shuffle, samples):
    """(seconds, CPU seconds, bytes downloaded) of one epoch in a fresh process."""
    env = dict(os.environ, SLUICE_LIBRARY=library)
    out = subprocess.run([sys.executable, '-c', CHILD, url, cache, '1' if shuffle else '0',
                          '', '0', ''], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr)
    n, seconds, cpu, downloaded, _ = out.stdout.splitlines()[0].split()
    if int(n) != samples:
        raise RuntimeError(f'{library}: read {n} samples, expected {samples}')
    return float(seconds), float(cpu), int(downloaded)


def cell(values):
    return '%.3f (%.3f-%.3f)' % (statistics.median(values), min(values), max(values))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--library', action='append', required=True, help='NAME=PATH')
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--samples', type=int, default=8000)
    ap.add_argument('--shuffle', action='store_true')
    args = ap.parse_args()
    libraries = [tuple(x.split('=', 1)) for x in args.library]
    work = tempfile.mkdtemp(prefix='sluice-second-epoch-')
    try:
        data = os.path.join(work, 'www', 'data')
        write(data, args.samples, 256 << 10)
        nginx, port = start_nginx(os.path.join(work, 'www'), work)
        url = f'http://127.0.0.1:{port}/data'
        rows = {}
        try:
            for _ in range(args.runs):
                for name, path in libraries:
                    cache = tempfile.mkdtemp(dir=work)
                    try:
                        cold = epoch(path, url, cache, args.shuffle, args.samples)
                        warm = epoch(path, url, cache, args.shuffle, args.samples)
                        if warm[2] != 0:
                            raise RuntimeError(f'{name}: the second epoch downloaded {warm[2]} bytes')
                        rows.setdefault(name, []).append((cold, warm))
                        print(name, 'cold %.3f s, second %.3f s (CPU %.2f s), load %s' % (
                            cold[0], warm[0], warm[1], open('/proc/loadavg').read().split()[0]),
                            flush=True)
                    finally:
                        shutil.rmtree(cache, ignore_errors=True)
        finally:
            nginx.terminate()
            nginx.wait()
        print('%-10s %-26s %-26s %s' % ('library', 'cold epoch s', 'second epoch s', 'second CPU s'))
        for name, _ in libraries:
            runs = rows[name]
            print('%-10s %-26s %-26s %s' % (name, cell([c[0] for c, _ in runs]),
                                            cell([w[0] for _, w in runs]),
                                            cell([w[1] for _, w in runs])))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    main()
