"""Where a cold Parquet stream's first row goes (issue 35): a fresh process
opens `StreamingDataset(remote=s3://bench/PREFIX/, local=<empty folder>)`
through delay_proxy.py (15 ms to first byte, 100 MB/s a connection) in front
of parquet_stream_bench.py's s3rver, and reads one row; this script logs
each request the proxy carries (its line, its Range, when it arrived, when
its answer's first and last bytes left) and prints them, in seconds from
the dataset's construction, beside the construction's end and the first row.

    SLUICE_LIBRARY=build/bindings/c/libsluice.so.4 PYTHONPATH=bindings/python \\
        /usr/bin/python3 bench/python/parquet_first_row_timeline.py \\
        --work /tmp/pq-bench --prefix pq-text-x5 [--runs 3]

With --direct, the requests are logged through the same proxy holding
nothing back (no delay, no rate limit): the timeline of s3rver itself.

With --shuffle, the dataset is shuffled (shuffle=True, seed 17): its first
row's group is known only once every footer is in.

With --pass, the whole pass is read and the requests in flight are printed
every 50 ms (how many row groups download at once).

--work is a parquet_stream_bench.py work folder whose s3rver holds the table
(that bench uploads it). With --local FOLDER, the same first row read from
the folder in place, once, nothing logged: the command to run under
`perf record`.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import delay_proxy  # noqa: E402

CHILD = '''
import json, sys, time
import sluice
t0 = time.time()
where = {"local": sys.argv[1]} if len(sys.argv) == 2 else {"remote": sys.argv[1], "local": sys.argv[2]}
ds = sluice.StreamingDataset(batch_size=64, shuffle=SHUFFLE, shuffle_seed=17, **where)
t1 = time.time()
rows = iter(ds)
next(rows)
first = time.time()
n = 1
if WHOLE:
    for _ in rows:
        n += 1
print(json.dumps({"start": t0, "open": t1, "first": first, "end": time.time(), "rows": n}))
'''


class LoggedConnection(delay_proxy.Connection):
    """delay_proxy's connection, noting each request and its answer in LOG."""
    log = []

    def on_request(self, data):
        head = data.split(b'\r\n\r\n')[0].decode('latin1').split('\r\n')
        ranges = [h[6:].strip() for h in head if h.lower().startswith('range:')]
        self.current = {'line': head[0], 'range': ranges[0] if ranges else '',
                        'asked': time.time(), 'bytes': 0}
        self.log.append(self.current)

    def on_answer(self, n, first):
        # Noted before the bytes leave: once a client has them, so has the log.
        with self.lock:
            current = self.current
        if first:
            current['first'] = time.time()
        current['bytes'] += n
        current['last'] = time.time()


def in_flight(log, start, end, step=0.05):
    """Requests in flight (asked, their answer's last byte not yet sent) at
    start, start + step, ... up to end: a whole pass's concurrency on the wire."""
    counts = []
    k = 0
    while start + k * step < end:
        x = start + k * step
        counts.append(sum(1 for e in log if e['asked'] <= x < e.get('last', e['asked'])))
        k += 1
    return counts


def child_code(whole, shuffle=False):
    return (CHILD.replace('if WHOLE:', 'if True:' if whole else 'if False:')
            .replace('shuffle=SHUFFLE', f'shuffle={shuffle}'))


def timeline(work, prefix, runs, whole=False, direct=False, shuffle=False):
    import resume_bench
    delay_proxy.Connection = LoggedConnection
    server = resume_bench.S3rver(os.path.join(work, 's3rver'))
    try:
        env = dict(resume_bench.s3_env(server.endpoint),
                   S3_ENDPOINT_URL=delay_proxy.start_in_thread(
                       server.port, *((0.0, 1e15) if direct else ())))
        for r in range(runs):
            LoggedConnection.log.clear()
            cache = tempfile.mkdtemp(prefix='first-row-')
            try:
                out = subprocess.run([sys.executable, '-c', child_code(whole, shuffle),
                                      f's3://bench/{prefix}/', cache],
                                     env=env, capture_output=True, text=True, check=True)
            finally:
                shutil.rmtree(cache, ignore_errors=True)
            t = json.loads(out.stdout.strip().splitlines()[-1])
            print(f'run {r + 1}: construction {t["open"] - t["start"]:.3f} s, '
                  f'first row {t["first"] - t["start"]:.3f} s')
            log = sorted(LoggedConnection.log, key=lambda e: e['asked'])
            if whole:
                wire = sum(e['bytes'] for e in log)
                print(f'  {t["rows"]} rows, the last at {t["end"] - t["start"]:.3f} s; '
                      f'{wire / 1e6:.1f} MB on the wire, {wire / 1e6 / (t["end"] - t["start"]):.1f} MB/s')
                print('  in flight every 50 ms from the construction: ' +
                      ' '.join(map(str, in_flight(log, t['open'], t['end']))))
            for e in log:
                if e['asked'] > (t['end'] if whole else t['first']):
                    continue
                print(f'  asked {e["asked"] - t["start"]:.3f}  first byte '
                      f'{e.get("first", t["start"]) - t["start"]:.3f}  last '
                      f'{e.get("last", t["start"]) - t["start"]:.3f}  {e["bytes"]:>10,} B  '
                      f'{e["line"]}  {e["range"]}')
    finally:
        server.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--work')
    ap.add_argument('--prefix', default='pq-text-x5')
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--local', help='read the first row of this folder in place, once')
    ap.add_argument('--pass', dest='whole', action='store_true',
                    help='read the whole pass, not only its first row, and print the requests '
                         'in flight every 50 ms')
    ap.add_argument('--direct', action='store_true',
                    help='no delay and no rate limit: s3rver itself, its requests logged')
    ap.add_argument('--shuffle', action='store_true',
                    help="shuffled (Mosaic's py1e, seed 17): the first row waits for every footer")
    args = ap.parse_args()
    if args.local:
        out = subprocess.run([sys.executable, '-c', child_code(args.whole, args.shuffle), args.local],
                             check=True, capture_output=True, text=True)
        t = json.loads(out.stdout)
        print(f'construction {t["open"] - t["start"]:.3f} s, first row {t["first"] - t["start"]:.3f} s')
        return
    if not args.work:
        ap.error('--work or --local')
    timeline(os.path.abspath(args.work), args.prefix, args.runs, args.whole, args.direct,
             args.shuffle)


if __name__ == '__main__':
    main()
