"""Where a cold epoch's first sample goes through the delaying proxy (issue
41): workload B (--samples x --size, default 8,000 x 256 KiB) as MDS shards
and as WebDataset tar shards (webdataset_peer.py) on a loopback nginx, behind
delay_proxy.py (15 ms to first byte, 100 MB/s a connection) run in this
process so that each request it carries is logged (parquet_first_row_timeline's
LoggedConnection). Each run is a fresh process per reader, in order (or,
with --shuffle, shuffled as cold_first_sample.py shuffles each), an
empty cache for Sluice (cold_first_sample.CHILD, with each --keys JSON as its
engine keys), interleaved; for each run it prints every request sent before
the first sample was in hand (method and path, Range, when it was sent, its
answer's first and last byte, in ms from the dataset's construction), then
the medians.

    SLUICE_LIBRARY=build/bindings/c/libsluice.so.4 PYTHONPATH=bindings/python \\
        /usr/bin/python3 bench/python/first_sample_timeline.py [--runs 5] \\
        [--keys '{}' --keys '{"guess_first_shard": false}'] [--warm-index] [--shuffle]

WebDataset comes from registry_peers.py's venv (filled on first use).
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

import cold_first_sample  # noqa: E402
import delay_proxy  # noqa: E402
import parquet_first_row_timeline  # noqa: E402
import registry_peers  # noqa: E402
import webdataset_peer  # noqa: E402

Logged = parquet_first_row_timeline.LoggedConnection


def show(name, first, at):
    """The requests sent before `at` (the wall clock with the first sample
    in hand, `first` seconds after the construction)."""
    t0 = at - first
    print(f'{name}: first sample {first * 1e3:.1f} ms')
    for e in sorted(Logged.log, key=lambda e: e['asked']):
        if e['asked'] <= at:
            ms = {k: (e.get(k, t0) - t0) * 1e3 for k in ('asked', 'first', 'last')}
            print(f'  sent {ms["asked"]:6.1f}  first byte {ms["first"]:6.1f}  last '
                  f'{ms["last"]:6.1f} ms  {e["bytes"]:>10,} B  {e["line"]}  {e["range"]}')


def sluice_first(base, work, keys, warm_index=None, shuffle=False):
    """(seconds to the first sample, the wall clock then) of a fresh Sluice
    process reading `base`/data in order (or shuffled), cold, with engine keys `keys`;
    with `warm_index` (a path), its cache folder holds that index.json
    first: a node's earlier copy, its shards not cached."""
    cache = tempfile.mkdtemp(dir=work)
    if warm_index:
        shutil.copy(warm_index, os.path.join(cache, 'index.json'))
    try:
        out = subprocess.run([sys.executable, '-c', cold_first_sample.CHILD, f'{base}/data', cache,
                              '1' if shuffle else '0', '0', '0', keys], capture_output=True, text=True, check=True)
    finally:
        shutil.rmtree(cache)
    first, _, _, at, _ = map(float, out.stdout.strip().splitlines()[-1].split())
    return first, at


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--runs', type=int, default=5)
    ap.add_argument('--samples', type=int, default=8000)
    ap.add_argument('--size', type=int, default=256 << 10)
    ap.add_argument('--keys', action='append',
                    help="Sluice's engine keys as JSON, one row each (default: '{}')")
    ap.add_argument('--warm-index', action='store_true',
                    help="also a Sluice row whose cache holds index.json (warm index, cold "
                         "shards: a restart's case), interleaved")
    ap.add_argument('--shuffle', action='store_true',
                    help='shuffled epochs instead of in order (each reader as cold_first_sample.py '
                         'shuffles it)')
    args = ap.parse_args()
    delay_proxy.Connection = Logged
    work = tempfile.mkdtemp(prefix='sluice-first-timeline-')
    try:
        cold_first_sample.write(os.path.join(work, 'www', 'data'), args.samples, args.size)
        site, payload = registry_peers.site_packages(), cold_first_sample.payload(args.size)
        tars = webdataset_peer.write_tars(os.path.join(work, 'www', 'wds'), args.samples, payload)
        nginx, port = cold_first_sample.start_nginx(os.path.join(work, 'www'), work)
        try:
            base = delay_proxy.start_in_thread(port)
            urls = [f'{base}/wds/{os.path.basename(t)}' for t in tars]
            rows = {}
            for _ in range(args.runs):
                for keys in args.keys or ['{}']:
                    Logged.log.clear()
                    first, at = sluice_first(base, work, keys, shuffle=args.shuffle)
                    time.sleep(0.05)  # the proxy's threads note the last bytes
                    rows.setdefault(f'sluice {keys}', []).append(first)
                    show(f'sluice {keys}', first, at)
                    if args.warm_index:
                        Logged.log.clear()
                        first, at = sluice_first(base, work, keys,
                                                 os.path.join(work, 'www', 'data', 'index.json'),
                                                 shuffle=args.shuffle)
                        time.sleep(0.05)
                        rows.setdefault(f'sluice {keys}, warm index', []).append(first)
                        show(f'sluice {keys}, warm index', first, at)
                Logged.log.clear()
                first, at = webdataset_peer.webdataset_time(site, urls, args.shuffle, args.samples,
                                                            payload, at=True)
                time.sleep(0.05)
                rows.setdefault('webdataset', []).append(first)
                show('webdataset', first, at)
            for name, xs in rows.items():
                print(f'{name}: median {statistics.median(xs) * 1e3:.1f} ms of {len(xs)} '
                      f'({", ".join(f"{x * 1e3:.1f}" for x in xs)})')
        finally:
            nginx.terminate()
            nginx.wait()
    finally:
        shutil.rmtree(work)


if __name__ == '__main__':
    main()
