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

--work is a parquet_stream_bench.py work folder whose s3rver holds the table
(that bench uploads it). With --local FOLDER, the same first row read from
the folder in place, once, nothing logged: the command to run under
`perf record`.
"""
import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import delay_proxy  # noqa: E402

CHILD = '''
import json, sys, time
import sluice
t0 = time.time()
where = {"local": sys.argv[1]} if len(sys.argv) == 2 else {"remote": sys.argv[1], "local": sys.argv[2]}
ds = sluice.StreamingDataset(batch_size=64, shuffle=False, shuffle_seed=17, **where)
t1 = time.time()
next(iter(ds))
print(json.dumps({"start": t0, "open": t1, "first": time.time()}))
'''


class LoggedConnection(delay_proxy.Connection):
    """delay_proxy's connection, noting each request and its answer in LOG."""
    log = []

    def __init__(self, *args):
        super().__init__(*args)
        self.current = None

    def requests(self):
        try:
            while True:
                data = self.client.recv(delay_proxy.CHUNK)
                if not data:
                    break
                with self.lock:
                    if self.request_at is None:
                        self.request_at = time.monotonic()
                        head = data.split(b'\r\n\r\n')[0].decode('latin1').split('\r\n')
                        ranges = [h[6:].strip() for h in head if h.lower().startswith('range:')]
                        self.current = {'line': head[0], 'range': ranges[0] if ranges else '',
                                        'asked': time.time(), 'bytes': 0}
                        self.log.append(self.current)
                self.upstream.sendall(data)
        except OSError:
            pass
        finally:
            delay_proxy.shutdown(self.upstream)

    def responses(self):
        """delay_proxy.Connection.responses, noting the answer's bytes and times."""
        buf = bytearray(delay_proxy.CHUNK)
        view = memoryview(buf)
        free_at = 0.0
        try:
            while True:
                n = self.upstream.recv_into(buf)
                if not n:
                    break
                with self.lock:
                    started, self.request_at = self.request_at, None
                    current = self.current
                now = time.monotonic()
                if started is not None:
                    now = delay_proxy.wait_until(started + self.delay)
                    free_at = now
                    current['first'] = time.time()
                free_at = max(free_at, now - delay_proxy.BURST) + n / self.rate
                # Noted before the bytes leave: once a client has them, so has the log.
                current['bytes'] += n
                current['last'] = time.time()
                self.client.sendall(view[:n])
                if free_at - time.monotonic() > delay_proxy.BURST:
                    delay_proxy.wait_until(free_at)
        except OSError:
            pass
        finally:
            delay_proxy.shutdown(self.client)


def timeline(work, prefix, runs):
    import resume_bench
    delay_proxy.Connection = LoggedConnection
    server = resume_bench.S3rver(os.path.join(work, 's3rver'))
    try:
        listener = socket.socket()
        listener.bind(('127.0.0.1', 0))
        listener.listen(64)
        threading.Thread(target=delay_proxy.serve, daemon=True,
                         args=(listener, server.port, 0.015, 100e6)).start()
        env = dict(resume_bench.s3_env(server.endpoint),
                   S3_ENDPOINT_URL=f'http://127.0.0.1:{listener.getsockname()[1]}')
        for r in range(runs):
            LoggedConnection.log.clear()
            cache = tempfile.mkdtemp(prefix='first-row-')
            try:
                out = subprocess.run([sys.executable, '-c', CHILD, f's3://bench/{prefix}/', cache],
                                     env=env, capture_output=True, text=True, check=True)
            finally:
                shutil.rmtree(cache, ignore_errors=True)
            t = json.loads(out.stdout.strip().splitlines()[-1])
            print(f'run {r + 1}: construction {t["open"] - t["start"]:.3f} s, '
                  f'first row {t["first"] - t["start"]:.3f} s')
            for e in sorted(LoggedConnection.log, key=lambda e: e['asked']):
                if e['asked'] > t['first']:
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
    args = ap.parse_args()
    if args.local:
        out = subprocess.run([sys.executable, '-c', CHILD, args.local], check=True,
                             capture_output=True, text=True)
        t = json.loads(out.stdout)
        print(f'construction {t["open"] - t["start"]:.3f} s, first row {t["first"] - t["start"]:.3f} s')
        return
    if not args.work:
        ap.error('--work or --local')
    timeline(os.path.abspath(args.work), args.prefix, args.runs)


if __name__ == '__main__':
    main()
