"""A cold first sample's steps through the delaying proxy, on one clock
(issue 41): first_sample_timeline.py's logged proxy (each request, its
Range, the connection that carried it, when it was sent and answered)
merged with first_sample_phases.py's child stamps (each C ABI call the
first sample needs, begun and returned), and the consumer thread's CPU
from `iter()` to the first sample (`time.thread_time`). Libraries
alternate run by run, WebDataset beside them with --webdataset.

    PYTHONPATH=bindings/python /usr/bin/python3 bench/python/first_sample_steps.py \\
        --library main=$MAIN --library new=$NEW [--samples 500000 --size 1024] \\
        [--runs 7] [--shuffle] [--webdataset]

Per run it prints the merged steps (ms from the dataset's construction)
and a summary line (index.json sent and answered, the first sample's
requests sent, the sample, the connections used); then per library the
medians and the consumer's CPU.
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
import first_sample_phases  # noqa: E402
import parquet_first_row_timeline  # noqa: E402

# The phases child, also timing its own thread's CPU over iter() and next().
CHILD = first_sample_phases.CHILD.replace(
    'sample = next(iter(ds))',
    'c0 = time.thread_time(); sample = next(iter(ds)); c1 = time.thread_time()').replace(
    'for name, t in stamps:', "print('CPU', c1 - c0)\nfor name, t in stamps:")
assert 'thread_time' in CHILD and "'CPU'" in CHILD, 'first_sample_phases.CHILD changed'


class ConnectionLogged(parquet_first_row_timeline.LoggedConnection):
    """The logged connection, each request also naming its connection."""

    def on_request(self, data):
        super().on_request(data)
        self.current['conn'] = id(self)


def sluice_run(lib, base, work, shuffle):
    """(events [(wall clock, text)], construction's wall clock, the
    consumer's CPU seconds) of one fresh child reading through the proxy."""
    ConnectionLogged.log.clear()
    cache = tempfile.mkdtemp(dir=work)
    try:
        out = subprocess.run([sys.executable, '-c', CHILD, f'{base}/data', cache, '1' if shuffle else '0'],
                             capture_output=True, text=True, check=True,
                             env=dict(os.environ, SLUICE_LIBRARY=lib))
    finally:
        shutil.rmtree(cache)
    time.sleep(0.05)  # the proxy's threads note the last bytes
    events, cpu = [], None
    for line in out.stdout.strip().splitlines():
        if line.startswith('CPU '):
            cpu = float(line.split()[1])
        else:
            t, name = line.split(' ', 1)
            events.append((float(t), name))
    stamps = {name: t for t, name in events}
    conns = {}
    for e in ConnectionLogged.log:
        conn = conns.setdefault(e['conn'], len(conns))
        what = f"{e['line'].split()[1]} {e['range']}"
        events.append((e['asked'], f'sent {what} (connection {conn})'))
        if 'first' in e:
            events.append((e['first'], f'  answer\'s first byte: {what}'))
    return sorted(events), stamps['construction begins'], stamps['first sample in Python'], cpu


def summary(t0, at):
    """index.json sent, its first byte, the first and last request sent
    after it before `at`, and the connections used then (ms from t0)."""
    sent = [e for e in ConnectionLogged.log if e['asked'] <= at]
    index = [e for e in sent if '/index.json' in e['line']]
    rest = [e for e in sent if '/index.json' not in e['line']]
    if not index or not rest or 'first' not in index[0]:
        return None
    ms = lambda t: (t - t0) * 1e3  # noqa: E731
    return (ms(index[0]['asked']), ms(index[0]['first']), ms(min(e['asked'] for e in rest)),
            ms(max(e['asked'] for e in rest)), ms(at), len({e['conn'] for e in sent}))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--library', action='append', required=True, help='NAME=PATH of a libsluice.so')
    ap.add_argument('--runs', type=int, default=7)
    ap.add_argument('--samples', type=int, default=500000)
    ap.add_argument('--size', type=int, default=1024)
    ap.add_argument('--shuffle', action='store_true')
    ap.add_argument('--webdataset', action='store_true')
    args = ap.parse_args()
    libs = [spec.split('=', 1) for spec in args.library]
    delay_proxy.Connection = ConnectionLogged
    work = tempfile.mkdtemp(prefix='sluice-first-steps-')
    try:
        cold_first_sample.write(os.path.join(work, 'www', 'data'), args.samples, args.size)
        if args.webdataset:
            import registry_peers
            import webdataset_peer
            site, payload = registry_peers.site_packages(), cold_first_sample.payload(args.size)
            tars = webdataset_peer.write_tars(os.path.join(work, 'www', 'wds'), args.samples, payload)
        nginx, port = cold_first_sample.start_nginx(os.path.join(work, 'www'), work)
        try:
            base = delay_proxy.start_in_thread(port)
            rows, cpus, firsts = {}, {}, {}
            for r in range(args.runs):
                for name, lib in libs:
                    events, t0, at, cpu = sluice_run(lib, base, work, args.shuffle)
                    print(f'--- {name}, run {r + 1}')
                    for t, text in events:
                        if t0 - 1e-3 <= t <= at + 1e-3:
                            print(f'  {(t - t0) * 1e3:7.2f}  {text}')
                    row = summary(t0, at)
                    if row:
                        print('  index.json sent %.1f, answered %.1f; then requests sent %.1f-%.1f; '
                              'sample %.1f ms; %d connections' % row)
                        rows.setdefault(name, []).append(row)
                    cpus.setdefault(name, []).append(cpu)
                    firsts.setdefault(name, []).append(at - t0)
                if args.webdataset:
                    urls = [f'{base}/wds/{os.path.basename(t)}' for t in tars]
                    first = webdataset_peer.webdataset_time(site, urls, args.shuffle, args.samples, payload)
                    print(f'--- webdataset, run {r + 1}: first sample {first * 1e3:.1f} ms')
                    firsts.setdefault('webdataset', []).append(first)
            print(f'load average {" ".join(f"{x:.2f}" for x in os.getloadavg())}')
            for name, xs in firsts.items():
                print(f'{name}: first sample, median {statistics.median(xs) * 1e3:.1f} ms '
                      f'({", ".join(f"{x * 1e3:.1f}" for x in xs)})')
                if name in rows:
                    cols = [statistics.median(c) for c in zip(*rows[name])]
                    print('  medians: index.json sent %.1f, answered %.1f; then requests sent '
                          '%.1f-%.1f; sample %.1f ms; %.0f connections' % tuple(cols))
                if name in cpus:
                    print(f'  consumer CPU, iter() to the first sample: median '
                          f'{statistics.median(cpus[name]) * 1e3:.2f} ms '
                          f'({", ".join(f"{x * 1e3:.2f}" for x in cpus[name])})')
        finally:
            nginx.terminate()
            nginx.wait()
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    main()
