"""What a cold single pass costs on the wire (issue 41): GETs and bytes of
shard files counted in a loopback nginx's access log, beside the epoch's
seconds and CPU seconds per GB of the dataset, for each --library given
(libraries interleaved within every run) and each --sluice-keys variant.
Every epoch is a fresh process with an empty local folder
(cold_first_sample.child_time); medians of --runs with min and max.

    SLUICE_LIBRARY=$NEW PYTHONPATH=bindings/python /usr/bin/python3 bench/python/single_pass_wire.py \\
        --data $WORK/full/data --dataset B-8000 --work $WORK/wire \\
        --library main=$MAIN --library new=$NEW \\
        [--shuffle] [--proxy] [--runs 3] [--sluice-keys '{"single_pass": true}' ...]

With --proxy the children read through delay_proxy.py (15 ms to first
byte, 100 MB/s a connection) in front of the same nginx, whose log still
counts the requests.

($MAIN, $NEW: two builds' libsluice.so.4; the parent process loads $NEW.)

--data is served read-only (a speed_table.py --work folder's data/); only
--work is written (nginx's files, the children's local folders).
"""
import argparse
import collections
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cold_epoch  # noqa: E402
import cold_first_sample  # noqa: E402
from delay_proxy import DelayProxy  # noqa: E402


def wire(log):
    """(GETs, bytes sent) of the shard files (.mds) in nginx's log `log`
    (combined format: the request in the first quotes, then status and
    body bytes)."""
    gets, sent = 0, 0
    with open(log) as f:
        for line in f:
            quoted = line.split('"')
            if len(quoted) < 3 or '.mds' not in quoted[1]:
                continue
            gets += 1
            sent += int(quoted[2].split()[1])
    return gets, sent


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--data', required=True)
    ap.add_argument('--dataset', required=True, help='the folder under --data')
    ap.add_argument('--work', required=True)
    ap.add_argument('--library', action='append', required=True, metavar='NAME=PATH')
    ap.add_argument('--sluice-keys', action='append', default=[], metavar='JSON')
    ap.add_argument('--shuffle', action='store_true')
    ap.add_argument('--proxy', action='store_true',
                    help='through delay_proxy.py (15 ms, 100 MB/s per connection)')
    ap.add_argument('--runs', type=int, default=3)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    log = os.path.join(args.work, 'access.log')
    nbytes = cold_epoch.folder_bytes(os.path.join(args.data, args.dataset))
    proc, port = cold_first_sample.start_nginx(args.data, args.work,
                                               access_log=f'access_log {log};')
    proxy = None
    variants = [json.loads(k) for k in args.sluice_keys] or [{}]
    cells = collections.defaultdict(list)
    try:
        if args.proxy:
            proxy = DelayProxy(port)
            port = proxy.port
        for _ in range(args.runs):
            for keys in variants:
                for lib in args.library:
                    name, path = lib.split('=', 1)
                    env = dict(os.environ, SLUICE_LIBRARY=path)
                    open(log, 'w').close()
                    _, whole, cpu, _, n = cold_first_sample.child_time(
                        f'http://127.0.0.1:{port}/{args.dataset}', args.shuffle, args.work,
                        epoch=True, env=env, engine_keys=keys)
                    time.sleep(0.2)  # nginx logs a request once answered
                    gets, sent = wire(log)
                    cells[(json.dumps(keys), name)].append(
                        (whole, cold_epoch.cpu_per_gb(cpu, nbytes), gets, sent / 1e9, n))
    finally:
        if proxy:
            proxy.close()
        proc.kill()
        proc.wait()
    print(f'{args.dataset}, {"shuffled" if args.shuffle else "in order"}, '
          f'{"through the delaying proxy, " if proxy else ""}'
          f'{nbytes / 1e9:.2f} GB, medians of {args.runs} (min-max)')
    print('| keys | library | epoch, s | CPU s/GB | GETs | GB sent | samples |')
    print('| --- | --- | ---: | ---: | ---: | ---: | ---: |')
    for (keys, name), runs in cells.items():
        def cell(k, fmt):
            values = [r[k] for r in runs]
            return (f'{statistics.median(values):{fmt}} '
                    f'({min(values):{fmt}}-{max(values):{fmt}})')
        print(f'| {keys} | {name} | {cell(0, ".2f")} | {cell(1, ".2f")} | {cell(2, ".0f")} | '
              f'{cell(3, ".2f")} | {cell(4, ".0f")} |')


if __name__ == '__main__':
    main()
