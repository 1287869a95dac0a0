"""Issue 35's resumed first row and cold first row, library against library:
each measurement a fresh process, the libraries alternating within every
round (A/B runs on a shared machine), medians over the rounds, the load
average beside each round.

    /usr/bin/python3 bench/python/parquet_resume_bench.py \\
        --library main=$WORK/libsluice-main.so.4 --library new=build/bindings/c/libsluice.so.4 \\
        [--rounds 5] [--resumes 3] [--row 500000] \\
        [--resume $WORK/big/pq-text-x5 --resume $WORK/big/pq-text-x5-mds] \\
        [--cold $WORK/pq-bench --prefix pq-text-x5 [--proxy] [--shuffle]] \\
        [--warm $WORK/pq-bench --prefix pq-bin256k --warm-prefix pq-bin256k-mds]

--resume FOLDER (repeatable): resume in place. An invocation opens
`StreamingDataset(local=FOLDER, batch_size=64, shuffle=False)`
--resumes times, each a new dataset given `load_state_dict(state_dict(ROW,
True))`, and times iter() to the first row; that row must be the one a
plain pass reads at ROW (its digest, taken once per folder and library).
The tables are parquet_stream_bench.py's (`--scale 5 --tables text` makes
pq-text-x5; its MDS twin pq-text-x5-mds comes with `--libs sluice-mds`).

--cold WORK: the first row of `s3://bench/PREFIX/` from the s3rver of a
parquet_stream_bench.py work folder (which uploaded the table), a new
empty cache folder each run, with `--proxy` through delay_proxy.py (15 ms
to first byte, 100 MB/s a connection) as well: construction to the first
row, and construction alone. With --shuffle, the dataset is shuffled
(shuffle=True, seed 17, as parquet_first_row_timeline.py --shuffle): its
first row's group is known only once every footer is in. Every library's
cold first row must be the same row (its digest), else the run stops.

--warm WORK: the same first row of `s3://bench/PREFIX/` (and of each
--warm-prefix) from a cache folder a whole untimed pass filled, one per
library and prefix, kept across the rounds (a warm node's construction
and first row: Parquet beside its MDS twin).

--library NAME=LIBSLUICE[:PYTHONPATH] (repeatable): the Python package
is this tree's bindings/python unless a path follows the library.

--child MODE ARGS...: one invocation, as the rounds run it; for running
under a profiler (`valgrind --tool=callgrind --separate-threads=yes
--instr-atstart=no`: the child switches instrumentation on at iter() and
off at the first row when $SLUICE_BENCH_CALLGRIND is set).
"""
import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)


def callgrind(on):
    """Instrumentation on or off for every thread (under callgrind only)."""
    if os.environ.get('SLUICE_BENCH_CALLGRIND'):
        subprocess.run(['callgrind_control', '-i', 'on' if on else 'off', str(os.getpid())],
                       check=True, capture_output=True)


def digest(row):
    h = hashlib.sha256()
    for key in sorted(row):
        v = row[key]
        h.update(key.encode())
        h.update(repr(v.tolist() if hasattr(v, 'tolist') else v).encode())
    return h.hexdigest()[:16]


def child_resume(folder, row, resumes):
    import time
    import sluice
    ds = sluice.StreamingDataset(local=folder, batch_size=64, shuffle=False)
    # A state of epoch 0: taken before any iter(), Mosaic's state_dict says
    # epoch -1, and a dataset given it starts epoch 0 from its first row.
    it = iter(ds)
    next(it)
    state = ds.state_dict(row, True)
    del it, ds
    times, rows = [], []
    for _ in range(resumes):
        ds = sluice.StreamingDataset(local=folder, batch_size=64, shuffle=False)
        ds.load_state_dict(state)
        callgrind(True)
        t = time.perf_counter()
        it = iter(ds)
        first = next(it)
        times.append(time.perf_counter() - t)
        callgrind(False)
        rows.append(digest(first))
        del it, ds
    print(json.dumps({'times': times, 'digests': rows}))


def child_expected(folder, row):
    import sluice
    ds = sluice.StreamingDataset(local=folder, batch_size=64, shuffle=False)
    print(json.dumps({'digest': digest(ds[row])}))


def child_cold(remote, cache, shuffle):
    import time
    import sluice
    t0 = time.perf_counter()
    ds = sluice.StreamingDataset(remote=remote, local=cache, batch_size=64,
                                 shuffle=shuffle == 'shuffle', shuffle_seed=17)
    t1 = time.perf_counter()
    callgrind(True)
    first = next(iter(ds))
    t2 = time.perf_counter()
    callgrind(False)
    print(json.dumps({'open': t1 - t0, 'first': t2 - t0, 'digest': digest(first)}))


def child_fill(remote, cache):
    import sluice
    ds = sluice.StreamingDataset(remote=remote, local=cache, batch_size=64, shuffle=False)
    print(json.dumps({'rows': sum(1 for _ in ds)}))


def run_child(lib, args, env=None, timeout=600):
    name, library, pythonpath = lib
    env = dict(env or os.environ, SLUICE_LIBRARY=library, PYTHONPATH=pythonpath)
    out = subprocess.run([sys.executable, os.path.abspath(__file__), '--child', *args], env=env,
                         capture_output=True, text=True, timeout=timeout)
    if out.returncode != 0:
        raise SystemExit(f'{name} {" ".join(args)}: exit {out.returncode}\n{out.stderr[-2000:]}')
    return json.loads(out.stdout.strip().splitlines()[-1])


def load():
    return os.getloadavg()[0]


def parse_library(text):
    name, _, rest = text.partition('=')
    library, _, pythonpath = rest.partition(':')
    if not name or not library:
        raise argparse.ArgumentTypeError(f'--library NAME=LIBSLUICE[:PYTHONPATH], not {text!r}')
    return name, os.path.abspath(library), pythonpath or os.path.join(ROOT, 'bindings', 'python')


def cold_env(work, proxy):
    """The s3rver of `work` (and the proxy in front of it): (env, stop)."""
    import delay_proxy
    import resume_bench
    server = resume_bench.S3rver(os.path.join(work, 's3rver'))
    env = resume_bench.s3_env(server.endpoint)
    if not proxy:
        return env, server.stop
    env = dict(env, S3_ENDPOINT_URL=delay_proxy.start_in_thread(server.port))
    return env, server.stop


def main():
    if sys.argv[1:2] == ['--child']:
        mode, rest = sys.argv[2], sys.argv[3:]
        if mode == 'resume':
            return child_resume(rest[0], int(rest[1]), int(rest[2]))
        if mode == 'expected':
            return child_expected(rest[0], int(rest[1]))
        if mode == 'cold':
            return child_cold(rest[0], rest[1], rest[2])
        if mode == 'fill':
            return child_fill(rest[0], rest[1])
        raise SystemExit(f'no child mode {mode!r}')
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--library', action='append', type=parse_library, required=True)
    ap.add_argument('--rounds', type=int, default=5)
    ap.add_argument('--resumes', type=int, default=3)
    ap.add_argument('--row', type=int, default=500_000)
    ap.add_argument('--resume', action='append', default=[], metavar='FOLDER')
    ap.add_argument('--cold', metavar='WORK')
    ap.add_argument('--prefix', default='pq-text-x5')
    ap.add_argument('--proxy', action='store_true', help='cold through delay_proxy.py too')
    ap.add_argument('--shuffle', action='store_true', help='cold runs shuffled (seed 17)')
    ap.add_argument('--warm', metavar='WORK')
    ap.add_argument('--warm-prefix', action='append', default=[], metavar='PREFIX')
    args = ap.parse_args()
    results = {}  # (what, library) -> [seconds]
    loads = []
    expected = {}
    cold_digests = {}  # source -> the cold first row's digest, every library's
    for folder in args.resume:
        for lib in args.library:
            expected[(folder, lib[0])] = run_child(lib, ['expected', folder, str(args.row)])['digest']
    sources = []
    if args.cold:
        sources.append(('s3rver', cold_env(os.path.abspath(args.cold), False)))
        if args.proxy:
            sources.append(('proxy', cold_env(os.path.abspath(args.cold), True)))
    warm = {}  # (library, prefix) -> its filled cache folder
    if args.warm:
        sources.append(('warm', cold_env(os.path.abspath(args.warm), False)))
        env = sources[-1][1][0]
        for lib in args.library:
            for prefix in [args.prefix] + args.warm_prefix:
                warm[(lib[0], prefix)] = tempfile.mkdtemp(prefix='pq-warm-')
                run_child(lib, ['fill', f's3://bench/{prefix}/', warm[(lib[0], prefix)]], env)
    try:
        for r in range(args.rounds):
            loads.append(load())
            for lib in args.library:
                for folder in args.resume:
                    got = run_child(lib, ['resume', folder, str(args.row), str(args.resumes)])
                    bad = [d for d in got['digests'] if d != expected[(folder, lib[0])]]
                    if bad:
                        raise SystemExit(f'{lib[0]} {folder}: resumed at a row other than {args.row}')
                    results.setdefault((f'resume {os.path.basename(folder)}', lib[0]), []).extend(got['times'])
                for prefix in [args.prefix] + args.warm_prefix if args.warm else []:
                    env = sources[-1][1][0]
                    got = run_child(lib, ['cold', f's3://bench/{prefix}/', warm[(lib[0], prefix)],
                                          'in-order'], env)
                    results.setdefault((f'warm first row, {prefix}', lib[0]), []).append(got['first'])
                    results.setdefault((f'warm construction, {prefix}', lib[0]), []).append(got['open'])
                for source, (env, _) in sources:
                    if source == 'warm':
                        continue
                    cache = tempfile.mkdtemp(prefix='pq-cold-')
                    try:
                        got = run_child(lib, ['cold', f's3://bench/{args.prefix}/', cache,
                                              'shuffle' if args.shuffle else 'in-order'], env)
                    finally:
                        shutil.rmtree(cache, ignore_errors=True)
                    if cold_digests.setdefault(source, got['digest']) != got['digest']:
                        raise SystemExit(f'{lib[0]}: cold first row from {source} is another row')
                    results.setdefault((f'cold first row, {source}', lib[0]), []).append(got['first'])
                    results.setdefault((f'cold construction, {source}', lib[0]), []).append(got['open'])
            loads.append(load())
            # The table so far after every round: a run cut short keeps its rounds.
            print(f'after round {r + 1}, load average over the rounds: '
                  f'{min(loads):.1f}-{max(loads):.1f}')
            print('| measure | library | median (s) | runs (s) |')
            print('| --- | --- | ---: | --- |')
            for (what, name), xs in results.items():
                print(f'| {what} | {name} | {statistics.median(xs):.3f} | '
                      f'{" ".join(f"{x:.3f}" for x in xs)} |', flush=True)
    finally:
        for _, (_, stop) in sources:
            stop()
        for cache in warm.values():
            shutil.rmtree(cache, ignore_errors=True)


if __name__ == '__main__':
    main()
