"""Cold epochs against the link: a whole epoch read from an empty cache, in
order and shuffled, from a loopback nginx directly and through the delaying
proxy (delay_proxy.py: 15 ms to every response's first byte, 100 MB/s per
connection), or with --s3rver from a loopback s3rver (resume_bench.py's;
SigV4 for Sluice and curl alike). The reference is every shard fetched by
parallel `curl` transfers over the same path into /dev/null (issue 41's
reference: the receive alone, no file written; HTTP/1.1 to one host:
--parallel-immediate gives each transfer its own connection).

    SLUICE_LIBRARY=build/bindings/c/libsluice.so PYTHONPATH=bindings/python \\
        /usr/bin/python3 bench/python/cold_epoch.py --workload B \\
        [--samples N] [--size BYTES] [--runs 3] [--curl-parallel 8,32] \\
        [--fetch-concurrency N] [--library NAME=PATH[,PYTHONPATH] ...] [--s3rver] [--curl-files] \\
        [--single-pass [--single-pass-part-size 0,8388608]] [--perf DIR] [--sched]

Workloads (MDS, 64 MiB uncompressed shards): A = 1 KiB samples, B = 256 KiB
samples; --samples scales them (defaults 200,000 and 4,000: the issue's
500,000 and 8,000 scaled down for a shared 2-core machine). Each Sluice run
is a fresh process with an empty cache folder, reading with batch_size 16.
--library runs the same children against other builds of libsluice.so
(e.g. before=/tmp/old.so after=build/...; with ,PYTHONPATH the child imports
the sluice package of that build too), interleaved with each other and
with curl, so drift hits every row alike. Prints per row the median (min,
max) of the epoch's seconds, its MB/s (bytes that reached the cache / time),
the median's ratio to the best curl row of the same path, and the child's
CPU seconds (user + system, from the dataset's construction on) per GB
(cpu_seconds and cpu_per_gb, which speed_table.py's cold rows use too),
the server's CPU seconds per GB (s3rver's, or the loopback nginx's: one
process), and the machine's busy CPU seconds over the epoch (/proc/stat,
every core, from the dataset's construction on for Sluice: the epoch's
whole cost with the server's and the kernel's softirq work, which no
process's own count holds; other processes' work is in it too, so read it
with the load: on 2 cores it cannot exceed twice the epoch).
--fetch-concurrency sets the engine's key of that name (shards one reader
opens at once; default: the engine's, 4 for MDS). The server shares the
machine's cores with the reader (s3rver is one Node process; nginx runs
one worker; the delaying proxy's row shows no server CPU).
--curl-files adds, beside each curl reference, the same transfers written
into files (curl's writes of 4-16 KiB into fresh page cache, deleted after each
run as a cache folder is): the receive and the write a cached epoch must
both pay, without the engine or a consumer; its ratio is to the best curl
row (into /dev/null) as every row's is.
--single-pass adds, per library, the rows of the single-pass mode
(StreamingDataset(single_pass=True): shards received into memory, nothing
cached), interleaved with the others; their bytes (for MB/s and CPU s/GB)
are the dataset's shard bytes, as the cached rows' are the cache's, and
"dl x" is the bytes the engine downloaded over the dataset's (a shard a
shuffled single pass drops and reads again is received again).
Each row also gives the child's minor page faults per GB (ru_minflt from
the dataset's construction on: a fresh page's first touch, which the kernel
zeroes; a 2 MiB huge page counts once) and the huge pages faulted in per
GB (/proc/vmstat thp_fault_alloc over the child's life: machine-wide, so
another process's count too). --perf DIR runs each Sluice child under
`perf record -g` into DIR (e.g. for the share of `clear_page_erms`).
--sched prints, per Sluice row, where its child's busiest threads spent
the epoch, from /proc/self/task/*/schedstat (medians over the runs): the
seconds each ran, waited runnable on the run queue (the cores busy with
other work: on a shared machine, the load), and the rest of the epoch
(blocked: waiting for bytes, for work, for the disk); the main thread
(the consumer) first, then the others by CPU seconds. A wall that grows
with the run queue and not with the blocked time is the machine's load,
not the engine's waits.
--single-pass-part-size gives the single-pass rows once per value, each
with the engine's key single_pass_part_size (0: one request a shard; a
library that does not know the key refuses it), interleaved as above.
"""
import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

WORKLOADS = {'A': (200_000, 1 << 10), 'B': (4_000, 256 << 10)}
# --perf: the folder each Sluice child's `perf record` goes to, and a count.
PERF_DIR = None
PERF_RUNS = [0]
# --sched: the name of the row whose child runs next (None: not asked).
SCHED_ROW = [None]

CHILD = r'''
import sys, time
sys.path.insert(0, %r)
from cold_epoch import cpu_seconds, machine_busy_seconds, minor_faults, thread_sched
import sluice
class Dataset(sluice.StreamingDataset):
    # Engine keys beside Mosaic's arguments (see StreamingDataset.__init__).
    _engine_keys = {'fetch_concurrency': int(sys.argv[4])} if sys.argv[4] else {}
    if sys.argv[6]:
        _engine_keys['single_pass_part_size'] = int(sys.argv[6])
sched0 = thread_sched()
c0, t0, f0, m0 = cpu_seconds(), time.perf_counter(), minor_faults(), machine_busy_seconds()
extra = {'single_pass': True} if sys.argv[5] == '1' else {}
ds = Dataset(remote=sys.argv[1], local=sys.argv[2], shuffle=sys.argv[3] == '1', batch_size=16,
             shuffle_seed=17, **extra)
n = sum(1 for _ in ds)
m1 = machine_busy_seconds()
print(n, time.perf_counter() - t0, cpu_seconds() - c0, ds._engine.counters()['bytes_downloaded'],
      minor_faults() - f0)
print(' '.join('%%s:%%.4f:%%.4f' %% (tid, run - sched0.get(tid, (0, 0))[0], wait - sched0.get(tid, (0, 0))[1])
               for tid, (run, wait) in thread_sched().items()))
print(m1 - m0)
''' % HERE


# The CPU cost of a cold epoch, here and in speed_table.py (whose children,
# Sluice's, Mosaic's and LitData's, import this module: hence no import of
# sluice or numpy at its top): user + system seconds of the epoch's process
# and the children it reaped, from the dataset's construction on, over the
# bytes that reached its cache.
def cpu_seconds():
    """User + system CPU seconds of this process (every thread) and of its
    children that have been waited for."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime + children_cpu_seconds()


def minor_faults():
    """Minor page faults of this process so far (getrusage ru_minflt): each
    first touch of a fresh page, which the kernel zeroes (a 2 MiB huge
    page's fault counts once, as a 4 KiB page's does)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def thread_sched():
    """{thread id: (seconds run, seconds waited runnable on a run queue)}
    of this process's threads so far (/proc/self/task/*/schedstat; empty
    where the kernel does not tell)."""
    out = {}
    try:
        tids = os.listdir('/proc/self/task')
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f'/proc/self/task/{tid}/schedstat') as f:
                run, wait = f.read().split()[:2]
        except (OSError, ValueError):
            continue  # a thread that ended meanwhile
        out[tid] = (int(run) / 1e9, int(wait) / 1e9)
    return out


def busiest_threads(line, main_tid, seconds, count=3):
    """[(name, run s, run queue s, blocked s)] of the child's main thread
    and its `count` - 1 busiest others, from the child's schedstat line
    (`tid:run:wait` each) over an epoch of `seconds`."""
    threads = [x.split(':') for x in line.split()]
    threads = [(tid, float(run), float(wait)) for tid, run, wait in threads]
    main = [t for t in threads if t[0] == main_tid]
    rest = sorted((t for t in threads if t[0] != main_tid), key=lambda t: -t[1])
    return [('main' if t[0] == main_tid else f'#{i}', t[1], t[2], max(0.0, seconds - t[1] - t[2]))
            for i, t in enumerate(main + rest[:count - len(main)])]


# The machine's busy CPU seconds over the last Sluice child's epoch (from
# its dataset's construction on), as that child read them.
MACHINE_BUSY = [None]

# --sched: per row name, the busiest threads of each run (busiest_threads).
SCHED_ROWS = {}


def thp_faults():
    """Huge pages the kernel has faulted in, machine-wide (/proc/vmstat
    thp_fault_alloc: 2 MiB zeroed each); 0 where it is not told."""
    try:
        with open('/proc/vmstat') as f:
            for line in f:
                if line.startswith('thp_fault_alloc '):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def children_cpu_seconds():
    """User + system CPU seconds of this process's children that have been
    waited for."""
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return kids.ru_utime + kids.ru_stime


def cpu_per_gb(cpu, nbytes):
    """CPU seconds per GB (1e9 bytes) downloaded."""
    return cpu / (nbytes / 1e9)


def folder_bytes(folder):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(folder) for f in fs)


def sluice_epoch(library, url, shuffle, work, samples, fetch_concurrency=None, env=None,
                 single_pass_bytes=None, part_size=None):
    """(seconds, CPU seconds, bytes in the cache, bytes downloaded (None
    but in the single-pass mode), the child's minor faults, the machine's
    huge-page faults) of one cold epoch (`env`: the child's environment
    before SLUICE_LIBRARY, default this one's). With `single_pass_bytes`
    (the dataset's shard bytes), the single-pass mode: those bytes instead
    of the cache's, and the bytes the engine downloaded. `part_size`: the
    engine's single_pass_part_size (None: its default). The faults count
    from the dataset's construction on; the huge-page faults are the
    whole machine's over the child's life (other processes' included)."""
    cache = tempfile.mkdtemp(dir=work)
    try:
        library, _, pythonpath = library.partition(',')
        env = dict(env or os.environ, SLUICE_LIBRARY=library)
        if pythonpath:
            env['PYTHONPATH'] = pythonpath
        thp0 = thp_faults()
        cmd = [sys.executable, '-c', CHILD, url, cache, '1' if shuffle else '0',
               str(fetch_concurrency or ''), '1' if single_pass_bytes else '0',
               '' if part_size is None else str(part_size)]
        if PERF_DIR:
            # One profile a child (perf record's CPU-clock samples where the
            # machine has no hardware counters), named by its row and run.
            PERF_RUNS[0] += 1
            name = '%s-%s-%s-%d.data' % (
                os.path.basename(os.path.dirname(library)) or 'lib',
                'single' if single_pass_bytes else 'cached', 'shuffled' if shuffle else 'inorder',
                PERF_RUNS[0])
            cmd = ['perf', 'record', '-q', '-g', '-o', os.path.join(PERF_DIR, name), '--'] + cmd
        child = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 env=env)
        stdout, stderr = child.communicate()
        thp = thp_faults() - thp0
        if child.returncode != 0:
            raise RuntimeError(stderr)
        lines = stdout.splitlines()
        n, seconds, cpu, downloaded, faults = lines[0].split()
        if SCHED_ROW[0] is not None and not PERF_DIR:
            SCHED_ROWS.setdefault(SCHED_ROW[0], []).append(
                busiest_threads(lines[1], str(child.pid), float(seconds)))
        if int(n) != samples:
            raise RuntimeError(f'{library}: read {n} samples, expected {samples}')
        MACHINE_BUSY[0] = float(lines[2])
        if single_pass_bytes:
            return (float(seconds), float(cpu), single_pass_bytes, int(downloaded), int(faults),
                    thp)
        return float(seconds), float(cpu), folder_bytes(cache), None, int(faults), thp
    finally:
        shutil.rmtree(cache)


def curl_epoch(urls, parallel, work, curl_args=(), discard=False):
    """(seconds, CPU seconds, bytes) of every shard by `parallel` transfers,
    each on its own connection (`curl_args`: e.g. a signature's), each
    written into a file under `work`, or with `discard` into /dev/null (the
    issue 41 reference; the bytes then from curl's %{size_download})."""
    args = ['curl', '-sf', '--no-progress-meter', '-Z', '--parallel-immediate', '--parallel-max',
            str(parallel), *curl_args]
    outs = [os.devnull if discard else os.path.join(work, f'curl{i}.bin')
            for i in range(len(urls))]
    if discard:
        args += ['-w', '%{size_download}\\n']
    for o, u in zip(outs, urls):
        args += ['-o', o, u]
    # getrusage, not os.times: its clock ticks (10 ms) are a whole curl run
    # over a small dataset.
    before = children_cpu_seconds()
    t = time.perf_counter()
    out = subprocess.run(args, check=True, stdout=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - t
    cpu = children_cpu_seconds() - before
    if discard:
        return seconds, cpu, sum(int(x) for x in out.stdout.split())
    size = sum(os.path.getsize(o) for o in outs)
    for o in outs:
        os.remove(o)
    return seconds, cpu, size


def machine_busy_seconds():
    """CPU seconds every core of the machine has been busy so far (/proc/stat:
    user, nice, system, irq and softirq; not idle, iowait or steal): a
    loopback epoch's whole cost, the server's and the kernel's softirq
    work included, which no process's own count holds, and other
    processes' work beside it (so read with the load)."""
    with open('/proc/stat') as f:
        fields = f.readline().split()[1:]
    user, nice, system, _, _, irq, softirq = (int(x) for x in fields[:7])
    return (user + nice + system + irq + softirq) / os.sysconf('SC_CLK_TCK')


def process_cpu_seconds(pid):
    """User + system CPU seconds of process `pid` so far (Linux /proc)."""
    with open(f'/proc/{pid}/stat') as f:
        fields = f.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


class Path:
    """Where one row reads from: `url` for curl, `remote` for Sluice, with
    the child's `env`, curl's `curl_args`, and the server's process id when
    its CPU is measured."""

    def __init__(self, name, url, remote=None, env=None, curl_args=(), server_pid=None):
        self.name, self.url, self.remote = name, url, remote or url
        self.env, self.curl_args, self.server_pid = env, curl_args, server_pid

    def measured(self, run):
        """run() -> (seconds, CPU, bytes[, downloaded, faults, huge-page
        faults]) as (seconds, CPU, bytes, the server's CPU seconds (None
        when not measured), downloaded, faults, huge-page faults (each
        None when not told), the machine's busy CPU seconds over the run)."""
        before = process_cpu_seconds(self.server_pid) if self.server_pid else None
        machine = machine_busy_seconds()
        MACHINE_BUSY[0] = None
        out = run()
        # A Sluice child's own count spans its epoch only (not its start-up).
        machine = MACHINE_BUSY[0] if MACHINE_BUSY[0] is not None else \
            machine_busy_seconds() - machine
        server = process_cpu_seconds(self.server_pid) - before if self.server_pid else None
        rest = tuple(out[3:]) + (None,) * (6 - len(out))
        return (*out[:3], server, *rest, machine)


def s3rver_path(work, data):
    """A loopback s3rver serving the shards in `data` (uploaded once) as a
    Path, and the server to stop."""
    import resume_bench
    server = resume_bench.S3rver(os.path.join(work, 's3rver'))
    try:
        resume_bench.upload(data, 'data', server.endpoint)
    except BaseException:
        server.stop()
        raise
    base = f'{server.endpoint}/{resume_bench.BUCKET}/data'
    return Path('s3rver', base, f's3://{resume_bench.BUCKET}/data',
                resume_bench.s3_env(server.endpoint), resume_bench.CURL_SIGV4_ARGS,
                server.proc.pid), server


def main():
    from cold_first_sample import start_nginx, write
    from delay_proxy import DelayProxy
    ap = argparse.ArgumentParser()
    ap.add_argument('--workload', choices=sorted(WORKLOADS), default='B')
    ap.add_argument('--samples', type=int)
    ap.add_argument('--size', type=int)
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--curl-parallel', default='8,32',
                    help='comma-separated transfer counts for the curl references (into /dev/null)')
    ap.add_argument('--library', action='append', default=[],
                    help='NAME=PATH[,PYTHONPATH] of a libsluice.so (and its package) to run '
                    '(default: $SLUICE_LIBRARY)')
    ap.add_argument('--curl-files', action='store_true',
                    help='also each curl reference writing the shards into files (the page cache)')
    ap.add_argument('--no-proxy', action='store_true', help='loopback only')
    ap.add_argument('--s3rver', action='store_true',
                    help='from a loopback s3rver instead of nginx (no proxy)')
    ap.add_argument('--fetch-concurrency', type=int,
                    help="the engine's fetch_concurrency (default: the engine's own)")
    ap.add_argument('--single-pass', action='store_true',
                    help='also the single-pass rows (shards in memory, nothing cached)')
    ap.add_argument('--single-pass-part-size',
                    help='comma-separated single_pass_part_size values, a single-pass row each')
    ap.add_argument('--perf', metavar='DIR',
                    help='run each Sluice child under `perf record -g`, a profile each into DIR')
    ap.add_argument('--sched', action='store_true',
                    help="per Sluice row, its busiest threads' run, run-queue and blocked seconds")
    args = ap.parse_args()
    global PERF_DIR
    PERF_DIR = args.perf
    samples, size = WORKLOADS[args.workload]
    samples, size = args.samples or samples, args.size or size
    libraries = [tuple(x.split('=', 1)) for x in args.library] or [
        ('sluice', os.environ['SLUICE_LIBRARY'])]
    parallels = [int(x) for x in args.curl_parallel.split(',')]
    work = tempfile.mkdtemp(prefix='sluice-cold-epoch-')
    try:
        data = os.path.join(work, 'www', 'data')
        write(data, samples, size)
        shards = sorted(n for n in os.listdir(data) if n.endswith('.mds'))
        data_bytes = sum(os.path.getsize(os.path.join(data, n)) for n in shards)
        part_sizes = ([int(x) for x in args.single_pass_part_size.split(',')]
                      if args.single_pass_part_size else [None])
        modes = [('', None, None)] + ([
            (f'single-pass{"" if v is None else f" parts {v >> 20} MiB"} ', data_bytes, v)
            for v in part_sizes] if args.single_pass else [])
        servers = []  # stopped at the end
        if args.s3rver:
            path, s3 = s3rver_path(work, data)
            servers.append(s3.stop)
            paths = [path]
        else:
            nginx, port = start_nginx(os.path.join(work, 'www'), work)
            servers.append(lambda: (nginx.terminate(), nginx.wait()))
            paths = [Path('loopback', f'http://127.0.0.1:{port}/data', server_pid=nginx.pid)]
            if not args.no_proxy:
                proxy = DelayProxy(port)
                servers.append(proxy.close)
                paths.append(Path('proxy', f'http://127.0.0.1:{proxy.port}/data'))
        try:
            rows = {}  # (path name, row name) -> [(seconds, cpu, bytes, server cpu)]
            for _ in range(args.runs):
                for path in paths:
                    for k in parallels:
                        for into in ('null', 'files') if args.curl_files else ('null',):
                            rows.setdefault((path.name, f'curl > {into}, {k} parallel'), []).append(
                                path.measured(lambda: curl_epoch(
                                    [f'{path.url}/{n}' for n in shards], k, work, path.curl_args,
                                    discard=into == 'null')))
                    for name, lib in libraries:
                        for order, shuffle in (('in order', False), ('shuffled', True)):
                            for mode, single, part_size in modes:
                                if args.sched:
                                    SCHED_ROW[0] = f'{path.name} {name}, {mode}{order}'
                                rows.setdefault((path.name, f'{name}, {mode}{order}'), []).append(
                                    path.measured(lambda: sluice_epoch(
                                        lib, path.remote, shuffle, work, samples,
                                        args.fetch_concurrency, path.env, single,
                                        part_size)))
        finally:
            for stop in reversed(servers):
                stop()
        print(f'workload {args.workload}: {samples} samples x {size} B, {len(shards)} shards of '
              f'<= 64 MiB; medians of {args.runs} cold epochs (fresh process, empty cache)' +
              ('' if args.s3rver or args.no_proxy else
               '; proxy: 15 ms to first byte, 100 MB/s per connection'))
        print(f'  {"path":8s} {"row":36s} {"epoch s (min, max)":>26s} {"MB/s":>7s} '
              f'{"x best curl":>11s} {"CPU s/GB":>8s}' +
              f' {"server CPU s/GB":>15s}' +
              (f' {"dl x":>5s}' if args.single_pass else '') +
              f' {"faults/GB":>9s} {"THP/GB":>6s} {"machine CPU s":>13s}')
        for path in (p.name for p in paths):
            best = None
            for (pth, name), xs in rows.items():
                if pth == path and name.startswith('curl'):
                    mbps = statistics.median(x[2] / x[0] for x in xs) / 1e6
                    best = mbps if best is None else max(best, mbps)
            for (pth, name), xs in rows.items():
                if pth != path:
                    continue
                secs = [x[0] for x in xs]
                mbps = statistics.median(x[2] / x[0] for x in xs) / 1e6
                cpu_gb = statistics.median(cpu_per_gb(x[1], x[2]) for x in xs)
                server = f' {"":15s}' if xs[0][3] is None else \
                    f' {statistics.median(cpu_per_gb(x[3], x[2]) for x in xs):15.2f}'
                downloaded = (f' {"":5s}' if args.single_pass else '') if xs[0][4] is None else \
                    f' {statistics.median(x[4] / x[2] for x in xs):5.2f}'
                faults = '' if xs[0][5] is None else \
                    f' {statistics.median(x[5] / (x[2] / 1e9) for x in xs):9.0f}' \
                    f' {statistics.median(x[6] / (x[2] / 1e9) for x in xs):6.0f}'
                faults = faults or f' {"":9s} {"":6s}'
                machine = f' {statistics.median(x[7] for x in xs):13.2f}'
                print(f'  {path:8s} {name:36s} {statistics.median(secs):8.3f} '
                      f'({min(secs):.3f}, {max(secs):.3f}){"":>5s} {mbps:7.0f} '
                      f'{mbps / best:10.0%} {cpu_gb:8.2f}{server}{downloaded}{faults}{machine}')
        if SCHED_ROWS:
            print("  threads' seconds over the epoch, medians: run / run queue / blocked")
            for row, runs in SCHED_ROWS.items():
                print(f'  {row:45s} ' + '  '.join(
                    f'{runs[0][i][0]} ' + ' / '.join(
                        f'{statistics.median(r[i][k] for r in runs):.2f}' for k in (1, 2, 3))
                    for i in range(min(len(r) for r in runs))))
    finally:
        shutil.rmtree(work)


if __name__ == '__main__':
    main()
