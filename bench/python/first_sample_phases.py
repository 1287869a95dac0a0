"""Where the time to the first sample of a cold epoch goes, phase by phase,
for one process reading from a loopback nginx (cold_first_sample.py times
the totals against WebDataset and curl; this says what makes them up).

    SLUICE_LIBRARY=build/bindings/c/libsluice.so.4 PYTHONPATH=bindings/python \\
        /usr/bin/python3 bench/python/first_sample_phases.py [--samples N] [--size BYTES]
        [--runs R] [--strace] [--proxy]

Each run is a fresh child process with an empty cache folder, in order
then shuffled (batch_size 16, shuffle_seed 17, as cold_first_sample.py).
One timeline per run, in ms since the child was started, merging:
  - the child's own stamps: interpreter up, numpy imported, `import sluice`
    (the package and what it imports: torch, libsluice.so), construction
    begun, then each C ABI call the first sample needs, begun and returned
    (sluice_stream_open: the event loop, the index's fetch and parse;
    sluice_stream_iter_begin: the head of the plan; the first
    sluice_stream_next_batch: the peek and the threads it starts), and the
    first sample in Python's hands;
  - nginx's access log: when each request arrived (its $msec less its
    $request_time) and how long it took, with its Range;
  - with --strace (strace on PATH): the child's thread starts (clone3) and
    io_uring set-ups with their durations, from `strace -f -ttt -T`
    (strace slows every system call: use it for what happens, not for
    the totals).
With --proxy the child reads through delay_proxy.py (15 ms to first byte,
100 MB/s per connection); nginx's log still says when each request
reached nginx, so an answer reaches the child 15 ms after that.
Then the medians, over the runs, of the gaps between consecutive phases.
The machine's load average is printed: on shared cores, the gaps move.

Cheap to import (no numpy, no sluice: cold_first_sample is imported by
main): the test of the log readers imports it.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

# The child: stamps (name, CLOCK_REALTIME seconds) on stdout, one per line.
# The C ABI calls are timed through a stand-in for the engine module's
# handle on the library (engine.py looks its functions up at each call).
CHILD = r'''
import sys, time
stamps = [('interpreter up', time.time())]
import numpy
stamps.append(('numpy imported', time.time()))
import sluice
from sluice import engine
stamps.append(('sluice imported', time.time()))

class Timed:
    TIMED = ('sluice_stream_open', 'sluice_stream_iter_begin', 'sluice_stream_next_batch')
    def __init__(self, lib):
        self.lib = lib
        self.seen = set()
    def __getattr__(self, name):
        fn = getattr(self.lib, name)
        if name not in self.TIMED or name in self.seen:
            return fn
        def timed(*args):
            self.seen.add(name)
            stamps.append((name + ' begins', time.time()))
            try:
                return fn(*args)
            finally:
                stamps.append((name + ' returns', time.time()))
        return timed

engine._lib_ = Timed(engine._lib_)
stamps.append(('construction begins', time.time()))
ds = sluice.StreamingDataset(remote=sys.argv[1], local=sys.argv[2], shuffle=sys.argv[3] == '1',
                             batch_size=16, shuffle_seed=17)
stamps.append(('constructed', time.time()))
sample = next(iter(ds))
stamps.append(('first sample in Python', time.time()))
assert sys.argv[3] == '1' or sample['id'] == 0, sample['id']
for name, t in stamps:
    print(f'{t:.6f} {name}')
'''

LOG_FORMAT = "'$msec $request_time $request_uri $status \"$http_range\"'"


def start_nginx(root, work):
    """cold_first_sample.start_nginx's server, logging each request."""
    import cold_first_sample as cold
    return cold.start_nginx(root, work,
                            f'log_format t {LOG_FORMAT}; access_log {work}/access.log t;')


def requests(log):
    """(arrival, text) per request in nginx's log."""
    out = []
    with open(log) as f:
        for line in f:
            msec, took, uri, status, rng = line.split(' ', 4)
            rng = rng.strip().strip('"')
            out.append((float(msec) - float(took),
                        f'request {uri} {status} {rng if rng != "-" else "whole"} '
                        f'(answered in {float(took) * 1e3:.0f} ms)'))
    return out


def sample_request(log, first_sample_at):
    """(arrival, text) of the request that carried the first sample, from
    nginx's log: of the requests that arrived by `first_sample_at`, the last
    ranged one (Sluice's peek: its second read is the sample's), else the
    last one (a whole shard streamed, as WebDataset's). None if none arrived.
    nginx logs no first-byte time: a static file's answer starts as its
    request arrives, so the arrival stands for the first byte (early by
    nginx's own time to start answering, 1 ms resolution)."""
    arrived = [r for r in requests(log) if r[0] <= first_sample_at]
    ranged = [r for r in arrived if not r[1].split(' ')[3] == 'whole']
    return (ranged or arrived or [None])[-1]


STRACE_LINE = re.compile(r'^(\d+)\s+(\d+\.\d+) (clone3|io_uring_setup)\(.*?(<(\d+\.\d+)>)?$')


def strace_events(path):
    """(time, text) of thread starts and ring set-ups in `strace -f -ttt -T` output."""
    out = []
    with open(path) as f:
        for line in f:
            m = STRACE_LINE.match(line.strip())
            if m:
                took = f' ({float(m.group(5)) * 1e3:.1f} ms)' if m.group(5) else ''
                out.append((float(m.group(2)), f'[strace] thread {m.group(1)}: {m.group(3)}{took}'))
    return out


def run_child(url, cache, shuffle, work, use_strace):
    cmd = [sys.executable, '-c', CHILD, url, cache, '1' if shuffle else '0']
    trace = os.path.join(work, 'strace.txt')
    if use_strace:
        cmd = ['strace', '-f', '-ttt', '-T', '-e', 'trace=clone3,io_uring_setup', '-o', trace] + cmd
    t0 = time.time()
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr)
    stamps = []
    for line in out.stdout.splitlines():
        t, name = line.split(' ', 1)
        stamps.append((float(t), name))
    extra = strace_events(trace) if use_strace else []
    return t0, stamps, extra


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--samples', type=int, default=8000)
    ap.add_argument('--size', type=int, default=256 << 10)
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--strace', action='store_true',
                    help='also show thread starts and io_uring set-ups (strace -f)')
    ap.add_argument('--proxy', action='store_true',
                    help='read through delay_proxy.py (15 ms, 100 MB/s per connection)')
    args = ap.parse_args()
    import cold_first_sample as cold
    work = tempfile.mkdtemp(prefix='sluice-phases-')
    try:
        data = os.path.join(work, 'www', 'data')
        cold.write(data, args.samples, args.size)
        nginx, port = start_nginx(os.path.join(work, 'www'), work)
        proxy = None
        gaps = {}
        try:
            if args.proxy:
                from delay_proxy import DelayProxy
                proxy = DelayProxy(port)
            url = f'http://127.0.0.1:{proxy.port if proxy else port}/data'
            for run in range(args.runs):
                for shuffle in (False, True):
                    log = os.path.join(work, 'access.log')
                    open(log, 'w').close()  # nginx appends: it writes on from 0
                    cache = tempfile.mkdtemp(dir=work)
                    t0, stamps, extra = run_child(url, cache, shuffle, work, args.strace)
                    time.sleep(0.05)  # nginx logs a request once answered
                    shutil.rmtree(cache)
                    order = 'shuffled' if shuffle else 'in order'
                    print(f'--- run {run + 1}, {order}')
                    first = stamps[-1][0]
                    events = stamps + [e for e in requests(log) + extra if e[0] <= first]
                    for t, text in sorted(events):
                        print(f'  {(t - t0) * 1e3:9.1f} ms  {text}')
                    previous = ('child started', t0)
                    for t, name in stamps:
                        gaps.setdefault((order, previous[0], name), []).append(t - previous[1])
                        previous = (name, t)
        finally:
            if proxy is not None:
                proxy.close()
            nginx.terminate()
            nginx.wait()
        print(f'{args.samples} samples x {args.size} B'
              + (', through the delaying proxy' if proxy else '') + '; load average '
              f'{" ".join(f"{x:.2f}" for x in os.getloadavg())}; medians of {args.runs} runs')
        for (order, a, b), xs in gaps.items():
            print(f'  {order:9s} {a:>34s} -> {b:34s} {statistics.median(xs) * 1e3:8.1f} ms')
    finally:
        shutil.rmtree(work)


if __name__ == '__main__':
    main()
