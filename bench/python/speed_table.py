"""The speed issue's table (issue 24) in one run on the same data: Sluice,
mosaicml-streaming and LitData (the registry's releases pinned in peers.txt,
in a venv registry_peers.py makes; or checkouts given with --mosaic-src and
--litdata-src), WebDataset on the HTTP rows (issue 41; peers.txt's, from the
same venv) and the references,
each measurement a fresh process, libraries interleaved within every run,
medians of --runs with min and max.

    SLUICE_LIBRARY=build/bindings/c/libsluice.so.4 PYTHONPATH=bindings/python \\
        /usr/bin/python3 bench/python/speed_table.py --work /tmp/sluice-speed \\
        [--runs 3] [--scale 1] [--rows loader,batch,s3,http,proxy,resume] \\
        [--images 20000] [--mosaic-src DIR] [--litdata-src DIR] [--no-registry]
        [--sluice-keys JSON ...] [--workloads A,B]

The peers' own imports, from Debian (./dev installs only Sluice's):
apt-get install python3-filelock (LitData) python3-snappy python3-brotli
python3-zstd python3-torchvision (mosaicml-streaming's compressions and its
vision module, imported by its package).

Quick check: --scale 0.01 --runs 1. Workloads: A = 500,000 x 1 KiB and
B = 8,000 x 256 KiB (times --scale), MDS in 64 MiB shards, written once
under --work with LitData's own copy (kept between invocations, with the
s3rver folder and the warm caches; see resume_bench.py). Rows (--rows):

  loader  DataLoader(2 workers, batch 16), in order, A and B: samples/s;
          reference: a bare map-style dataset over the memmapped shards,
          glibc's malloc thresholds raised as Sluice's package raises them
          (bench_loader.py's bare_tuned; LitData's StreamingDataLoader over its copy,
          its memoryview samples made bytes: litdata_shims.collate_bytes)
  batch   batch mode in one process (batches of 1024), A: samples/s against
          the one-memcpy floor (bench_loader.py)
  s3      cold epochs from a loopback s3rver, A and B, in order and
          shuffled: first sample, epoch and CPU seconds per GB downloaded,
          Sluice and Mosaic (cold_first_sample.py's child), LitData over
          its copy; references: one shard by `curl`, every shard by 4
          parallel `curl` transfers into /dev/null (the issue 41 target's
          reference; SigV4-signed). CPU per GB is
          cold_epoch.py's: user + system seconds of the epoch's process
          and its reaped children, from the dataset's construction on (for
          curl: its whole run), over the bytes that reached its cache; over
          --scale 0.01's 5 and 21 MB it is mostly each one's fixed start-up
          cost (Mosaic A: 72 s/GB there, 50 at --scale 0.1)
  http    the same from a loopback nginx: Sluice and WebDataset (Mosaic and
          LitData have no plain-HTTP remote). WebDataset reads the same
          samples written as tar shards of <= 64 MiB beside the MDS ones
          (webdataset_peer.py, kept under --work), in order and shuffled as
          cold_first_sample.py --webdataset does (its own idiom: shard order
          shuffled, then a 1,000-sample buffer), each child checking the
          ids and payload it read; its CPU per GB is over the tar bytes
          (it keeps no cache)
  proxy   the same through delay_proxy.py in front of nginx (15 ms to the
          first byte, 100 MB/s per connection), curl through it too

--sluice-keys JSON (repeatable) runs Sluice's cold children with these
engine keys (StreamingDataset._engine_keys, e.g. '{"serve_in_flight": true}'),
one variant per option, each interleaved with the others in every run; with
more than one, each cold row is given once per variant (its keys appended to
the row's name; the peers' and references' cells of a run are in each).
  resume  load_state_dict to the first batch, shuffled: A from the local
          folder, A and B from s3rver with a warm cache (resume_bench.py;
          LitData local only); the first batches are checked equal. The
          files read first in memory (each run reads them all before), and
          for the warm caches also with the page cache dropped before each
          run (root only), as a cache read back from disk after a restart
  image   with --images N: N synthetic JPEGs (image_bench.py, kept under
          --work) decoded in 2 DataLoader workers: images/s; reference: the
          ImageFolder-style dataset over the files

Each cell: median (min-max). Ratio columns: Sluice's speed over the best
peer's and over the reference's (> 1: Sluice faster; for seconds and CPU
seconds per GB, theirs over Sluice's). Sluice MB/s: the dataset's bytes
over Sluice's median epoch, or the sample size times its median samples/s.
Wall-clock on a shared machine: compare within one run only.
"""
import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bench_loader  # noqa: E402
import cold_epoch  # noqa: E402
import cold_first_sample  # noqa: E402
import image_bench  # noqa: E402
import registry_peers  # noqa: E402
import resume_bench  # noqa: E402
import webdataset_peer  # noqa: E402
from delay_proxy import DelayProxy  # noqa: E402

ROWS = ('loader', 'batch', 's3', 'http', 'proxy', 'resume')
PEERS = ('mosaic', 'litdata', 'webdataset')
COLUMNS = PEERS + ('sluice', 'reference')
WORKERS, BATCH, BIG_BATCH = 2, 16, 1024

# LitData's contender for the rows no other script runs it in, over its own
# optimize'd copy (resume_bench.prepare). argv: mode, litdata source, then
#   cold:   url, cache folder, shuffle (1/0), S3 endpoint; prints seconds to
#           the first sample and to the end of the epoch, the count and the
#           CPU seconds from the construction on (cold_epoch.cpu_seconds)
#   loader: folder; prints seconds of an in-order epoch through its
#           StreamingDataLoader, the count and the bytes of `data`
# (its iterator restarts when iterated again, hence the explicit next()).
LITDATA_CHILD = r'''
import os, sys, time
mode, src = sys.argv[1:3]
sys.path.insert(0, %(here)r)
from cold_epoch import cpu_seconds
from litdata_shims import collate_bytes, import_litdata
litdata = import_litdata(src)
c0, t0 = cpu_seconds(), time.perf_counter()
if mode == 'cold':
    url, cache, shuffle, endpoint = sys.argv[3:7]
    ds = litdata.StreamingDataset(url, cache_dir=cache, shuffle=shuffle == '1', seed=17,
                                  storage_options={'endpoint_url': endpoint})
    it = iter(ds)
    next(it)
    first, n = time.perf_counter() - t0, 1
    while True:
        try:
            next(it)
        except StopIteration:
            break
        n += 1
    print(first, time.perf_counter() - t0, n, cpu_seconds() - c0)
else:
    # prefetch_factor: torch 1.13 (Debian's) wants one (see resume_bench.py)
    loader = litdata.StreamingDataLoader(litdata.StreamingDataset(sys.argv[3]),
                                         batch_size=%(batch)d, num_workers=%(workers)d,
                                         prefetch_factor=2, collate_fn=collate_bytes)
    n = total = 0
    for b in loader:
        n += len(b['id'])
        total += sum(len(x) for x in b['data'])
    print(time.perf_counter() - t0, n, total)
os._exit(0)
''' % {'here': HERE, 'batch': BATCH, 'workers': WORKERS}


class Table:
    """Measurements by (row, column), in the order rows first appear."""

    def __init__(self):
        # row -> {'unit': 's' | 's/GB' | '/s', 'bytes': int | None, column: [values]};
        # 's' and 's/GB' (CPU seconds per GB): lower is better
        self.rows = {}

    def add(self, row, column, value, unit, nbytes=None):
        r = self.rows.setdefault(row, {'unit': unit, 'bytes': nbytes})
        r.setdefault(column, []).append(value)

    def print(self, runs):
        print(f'\nmedian (min-max) of {runs} run(s); ratios: Sluice\'s speed over the other\'s '
              f'(> 1: Sluice faster)')
        print('| row | Mosaic | LitData | WebDataset | Sluice | reference | Sluice / best peer | '
              'Sluice / reference | Sluice MB/s |')
        print('| --- | --- | --- | --- | --- | --- | --- | --- | --- |')
        for name, r in self.rows.items():
            unit = r['unit']
            med = {c: statistics.median(r[c]) for c in COLUMNS if c in r}
            cells = [cell(r[c], unit) if c in r else '-' for c in COLUMNS]
            peers = [med[c] for c in PEERS if c in med]
            ratios = []
            for others in (peers, [med['reference']] if 'reference' in med else []):
                if 'sluice' not in med or not others:
                    ratios.append('-')
                    continue
                lower = unit != '/s'
                best = min(others) if lower else max(others)
                speed = best / med['sluice'] if lower else med['sluice'] / best
                ratios.append(f'{speed:.2f}x')
            mbps = '-'
            if r['bytes'] and 'sluice' in med and unit != 's/GB':
                rate = r['bytes'] / med['sluice'] if unit == 's' else r['bytes'] * med['sluice']
                mbps = f'{rate / 1e6:,.0f}'
            print(f'| {name} | ' + ' | '.join(cells + ratios + [mbps]) + ' |', flush=True)


def cell(xs, unit):
    if unit == 's':
        fmt = (lambda x: f'{x * 1e3:.0f} ms') if max(xs) < 1 else (lambda x: f'{x:.2f} s')
    elif unit == 's/GB':
        fmt = lambda x: f'{x:.2f} s'  # noqa: E731
    else:
        fmt = (lambda x: f'{x / 1e3:.1f}k/s') if min(xs) >= 1e4 else (lambda x: f'{x:,.0f}/s')
    return f'{fmt(statistics.median(xs))} ({fmt(min(xs))}-{fmt(max(xs))})'


def shard_names(folder):
    return sorted(n for n in os.listdir(folder) if n.endswith('.mds'))


class Bench:
    def __init__(self, args, workloads):
        self.args, self.workloads, self.work = args, workloads, args.work
        self.table = Table()
        self.nginx = self.s3 = self.proxy = None
        self.notes = []

    def data(self, w):
        return resume_bench.data_dir(self.work, w)

    def samples(self, w):
        return resume_bench.WORKLOADS[w][0]

    def label(self, w):
        n, size = resume_bench.WORKLOADS[w]
        return f'{w} ({n:,} x {size >> 10} KiB)'

    # -- loader, batch: bench_loader.py's children over the same folders
    def loader(self, w):
        row = f'DataLoader {WORKERS} workers, batch {BATCH}, {self.label(w)}, in order: samples/s'
        kinds = {'mosaic': 'mosaic', 'sluice': 'sluice', 'reference': 'bare_tuned'}
        for column, kind in kinds.items():
            if kind == 'mosaic' and not self.args.mosaic_src:
                continue
            self.loader_run(row, column, kind, 'loader', w)
            if column == 'mosaic' and self.args.litdata_src:
                out = litdata_run('loader', self.args.litdata_src, self.data(w) + '-litdata',
                                  timeout=self.litdata_timeout())
                if out is None:
                    self.timed_out(row)
                    continue
                seconds, n, nbytes = out
                self.check_count(row, 'litdata', int(n), int(nbytes), w)
                self.table.add(row, 'litdata', n / seconds, '/s')

    def batch(self, w):
        row = f'batch mode, one process, batches of {BIG_BATCH}, {self.label(w)}: samples/s'
        for column, kind in (('sluice', 'sluice'), ('reference', 'bare')):
            self.loader_run(row, column, kind, 'batch', w)

    def loader_run(self, row, column, kind, mode, w):
        r = bench_loader.run(kind, mode, self.data(w), self.args.mosaic_src, WORKERS, BATCH,
                             BIG_BATCH)
        self.check_count(row, kind, r['n'], r['bytes'], w)
        self.table.add(row, column, r['n'] / r['s'], '/s', resume_bench.WORKLOADS[w][1])

    def check_count(self, row, kind, n, nbytes, w):
        want, size = resume_bench.WORKLOADS[w]
        if (n, nbytes) != (want, want * size):
            raise RuntimeError(f'{row}, {kind}: read {n} samples, {nbytes} B; '
                               f'expected {want}, {want * size}')

    # -- cold first sample and epoch: cold_first_sample.py's child and curl
    def cold(self, w, where):
        tag = resume_bench.tag(w)
        env, curl_args, mosaic = None, (), None
        if where == 's3':
            title = 'cold S3 (s3rver)'
            remote, base = f's3://{resume_bench.BUCKET}/{tag}', \
                f'{self.s3.endpoint}/{resume_bench.BUCKET}/{tag}'
            env = resume_bench.s3_env(self.s3.endpoint)
            curl_args = resume_bench.CURL_SIGV4_ARGS
            mosaic = self.args.mosaic_src
        else:
            port = self.nginx[1] if where == 'http' else self.proxy.port
            title = 'cold HTTP (nginx)' if where == 'http' else 'cold HTTP (nginx, delayed)'
            remote = base = f'http://127.0.0.1:{port}/{tag}'
        shards = shard_names(self.data(w))
        nbytes = cold_epoch.folder_bytes(self.data(w))
        one = cold_first_sample.curl_time(f'{base}/{shards[0]}', self.work, curl_args)
        every, curl_cpu, curl_bytes = cold_epoch.curl_epoch(
            [f'{base}/{n}' for n in shards], 4, self.work, curl_args, discard=True)
        for order, shuffle in (('in order', False), ('shuffled', True)):
            variants = {keys: [f'{title}, {self.label(w)}, {order}{suffix}: {what}'
                               for what in ('first sample, s', 'epoch, s',
                                            'CPU s per GB downloaded')]
                        for suffix, keys in self.variants()}
            cells = [('reference', (one, every, cold_epoch.cpu_per_gb(curl_cpu, curl_bytes)))]
            if mosaic:
                first, whole, cpu, cached, n = cold_first_sample.child_time(
                    remote, shuffle, self.work, epoch=True, env=env, mosaic_src=mosaic)
                self.check_epoch(f'{title}, {w}, {order}', 'mosaic', cached, nbytes, n, w)
                cells.append(('mosaic', (first, whole, cold_epoch.cpu_per_gb(cpu, cached))))
                if self.args.litdata_src:
                    cells += self.litdata_cold(w, shuffle, env)
            if where != 's3' and self.args.webdataset_site:
                cells.append(('webdataset', self.webdataset_cold(w, base, shuffle)))
            for keys, rows in variants.items():
                first, whole, cpu, cached, n = cold_first_sample.child_time(
                    remote, shuffle, self.work, epoch=True, env=env,
                    engine_keys=dict(keys) or None)
                if dict(keys).get('single_pass'):
                    # Nothing kept: CPU per GB is over the dataset's bytes.
                    self.check_single_pass(rows[1], cached, nbytes, n, w)
                    cached = nbytes
                else:
                    self.check_epoch(rows[1], 'sluice', cached, nbytes, n, w)
                for column, (first_s, whole_s, cpu_gb) in cells + [
                        ('sluice', (first, whole, cold_epoch.cpu_per_gb(cpu, cached)))]:
                    self.table.add(rows[0], column, first_s, 's')
                    self.table.add(rows[1], column, whole_s, 's', nbytes)
                    if cpu_gb is not None:
                        self.table.add(rows[2], column, cpu_gb, 's/GB')

    def variants(self):
        """(row suffix, engine keys as sorted (key, value) pairs) of each
        --sluice-keys option: one variant, unnamed, when fewer than two."""
        given = [json.loads(k) for k in self.args.sluice_keys] or [{}]
        return [((', ' + ', '.join(f'{k}={json.dumps(v)}' for k, v in sorted(keys.items())))
                 if len(given) > 1 else '', tuple(sorted(keys.items()))) for keys in given]

    def webdataset_cold(self, w, base, shuffle):
        """WebDataset's (first sample, epoch, CPU s per GB of tar) over the
        tar shards of workload w at `base` + '-wds'."""
        folder = self.data(w) + '-wds'
        urls = [f'{base}-wds/{n}' for n in sorted(os.listdir(folder))]
        n, size = resume_bench.WORKLOADS[w]
        first, whole, cpu = webdataset_peer.webdataset_time(
            self.args.webdataset_site, urls, shuffle, n, cold_first_sample.payload(size),
            epoch=True)
        return first, whole, cold_epoch.cpu_per_gb(cpu, cold_epoch.folder_bytes(folder))

    def check_epoch(self, row, column, cached, nbytes, n, w):
        """A cold epoch read each sample (the child's count) and cached the
        whole dataset."""
        if n != self.samples(w):
            raise RuntimeError(f'{row}, {column}: read {n} samples, expected {self.samples(w)}')
        self.check_cached(row, column, cached, nbytes)

    def check_single_pass(self, row, cached, nbytes, n, w):
        """A single pass read each sample and wrote no shard (its cache
        folder holds at most the index)."""
        if n != self.samples(w):
            raise RuntimeError(f'{row}, sluice: read {n} samples, expected {self.samples(w)}')
        if cached >= min(nbytes, 1 << 20):
            raise RuntimeError(f'{row}, sluice: a single pass left {cached} B in its cache folder')

    def check_cached(self, row, column, cached, nbytes):
        """CPU per GB divides by the bytes in the cache after the epoch: they
        must be the whole dataset (nothing evicted on the way)."""
        if cached < nbytes:
            raise RuntimeError(f'{row}, {column}: {cached} B in the cache after a cold epoch, '
                               f'fewer than the dataset\'s {nbytes} B')

    def litdata_cold(self, w, shuffle, env):
        """LitData's [('litdata', (first sample, epoch, CPU s per GB))] over
        its copy on s3rver, or [] when it timed out."""
        epoch_row = f'cold S3 (s3rver), {self.label(w)}, epoch'
        cache = tempfile.mkdtemp(dir=self.work)
        try:
            out = litdata_run(
                'cold', self.args.litdata_src,
                f's3://{resume_bench.BUCKET}/{resume_bench.tag(w)}-litdata', cache,
                '1' if shuffle else '0', self.s3.endpoint, env=env,
                timeout=self.litdata_timeout())
            cached = cold_epoch.folder_bytes(cache)
        finally:
            shutil.rmtree(cache)
        if out is None:
            self.timed_out(epoch_row)
            return []
        first, whole, n, cpu = out
        if int(n) != self.samples(w):
            raise RuntimeError(f'{epoch_row}, litdata: read {n} samples, expected '
                               f'{self.samples(w)}')
        self.check_cached(epoch_row, 'litdata', cached,
                          cold_epoch.folder_bytes(self.data(w) + '-litdata'))
        return [('litdata', (first, whole, cold_epoch.cpu_per_gb(cpu, cached)))]

    def litdata_timeout(self):
        return 120 + 1200 * self.args.scale

    def timed_out(self, row):
        self.notes.append(f'{row}: LitData did not finish within {self.litdata_timeout():.0f} s, '
                          f'left out of that run')

    # -- resume: resume_bench.py's contenders, iteration path
    def resume(self, w, source, page_cache='hot'):
        where = 'local' if source == 'local' else 's3, warm cache'
        files = {'hot': 'in memory', 'dropped': 'on disk, page cache dropped'}[page_cache]
        row = (f'resume ({where}, {files}), {self.label(w)}, shuffled: load_state_dict to '
               f'first batch, s')
        env = resume_bench.s3_env(self.s3.endpoint) if source == 's3' else dict(os.environ)
        ids = {}
        for column in self.resume_libs():
            r = resume_bench.resume_once(self.work, w, source, 'iter', column,
                                         self.args.mosaic_src or '', env, self.args.litdata_src,
                                         page_cache=page_cache)
            if r is None:
                continue
            ids[column] = (r['ids'], r.get('expected'))
            self.table.add(row, column, r['resume'], 's')
        want = ids['sluice'][0]
        for column, (got, expected) in ids.items():
            if got != (expected or want):
                raise RuntimeError(f'{row}: {column} resumed at {got}, expected '
                                   f'{expected or want}')

    def resume_libs(self):
        return [c for c in ('mosaic', 'litdata', 'sluice')
                if {'mosaic': self.args.mosaic_src, 'litdata': self.args.litdata_src}.get(c, True)]

    # -- image: image_bench.py's contenders
    def image(self, where):
        row = (f'image workload, {self.args.images:,} JPEGs, DataLoader {WORKERS} workers, '
               f'batch 32, shuffled: images/s')
        kinds = {'mosaic': (where['mds'], self.args.mosaic_src),
                 'litdata': (where['litdata'], self.args.litdata_src),
                 'sluice': (where['mds'], None), 'reference': (where['files'], None)}
        expected = (self.args.images,
                    sum(i % image_bench.CLASSES for i in range(self.args.images)))
        for column, (folder, src) in kinds.items():
            if column in PEERS and not src:
                continue
            kind = {'reference': 'imagefolder'}.get(column, column)
            seconds, _, n, labels = image_bench.run(kind, folder, WORKERS, 32, src)
            if (n, labels) != expected:
                raise RuntimeError(f'{row}, {kind}: {n} images with label sum {labels}, '
                                   f'expected {expected}')
            self.table.add(row, column, n / seconds, '/s')


def litdata_run(mode, src, *args, timeout, env=None):
    """LITDATA_CHILD's numbers in a fresh process, or None when it has not
    finished within `timeout` seconds (then the child and its workers are
    killed). A guard, not an expected outcome: the loader rows hung until it
    while LitData's memoryview samples went through torch's default_collate
    (see litdata_shims.collate_bytes)."""
    p = subprocess.Popen([sys.executable, '-c', LITDATA_CHILD, mode, src, *args],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        return None
    if p.returncode != 0:
        raise RuntimeError(f'litdata {mode} {args[0]} failed:\n{err[-3000:]}')
    return [float(x) for x in out.strip().splitlines()[-1].split()]


def write_tars(folder, samples, size):
    """Workload's samples as WebDataset tar shards in `folder`, unless kept."""
    if os.path.isdir(folder):
        return
    print(f'writing {os.path.basename(folder)} ...', flush=True)
    tmp = folder + '.partial'
    shutil.rmtree(tmp, ignore_errors=True)
    webdataset_peer.write_tars(tmp, samples, cold_first_sample.payload(size))
    os.rename(tmp, folder)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--work', required=True, help='folder kept between invocations')
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--scale', type=float, default=1.0,
                    help='multiplies both workloads\' sample counts (0.01: a quick check)')
    ap.add_argument('--rows', default=','.join(ROWS), help='some of ' + ','.join(ROWS))
    ap.add_argument('--workloads', default='A,B',
                    help='the workloads of the loader and cold rows (batch: A, resume: '
                    'its own), some of A,B')
    ap.add_argument('--images', type=int, default=0,
                    help='also the image workload with this many JPEGs (20000 in the issue)')
    ap.add_argument('--sluice-keys', action='append', default=[], metavar='JSON',
                    help='engine keys of Sluice\'s cold children, one variant per option '
                    '(e.g. \'{"serve_in_flight": true}\')')
    registry_peers.add_arguments(ap)
    args = ap.parse_args()
    rows = args.rows.split(',')
    unknown = set(rows) - set(ROWS)
    if unknown:
        ap.error(f'--rows: unknown {sorted(unknown)}; known: {",".join(ROWS)}')
    for keys in args.sluice_keys:
        if not isinstance(json.loads(keys), dict):
            ap.error(f'--sluice-keys {keys}: not a JSON object')
    os.makedirs(args.work, exist_ok=True)
    registry_peers.resolve(args)
    args.webdataset_site = None if args.no_registry else registry_peers.site_packages()
    resume_bench.scale_workloads(args.scale)
    workloads = args.workloads.split(',')
    if not workloads or set(workloads) - {'A', 'B'}:
        ap.error(f'--workloads {args.workloads}: some of A,B')
    # LitData's copy only for the rows that read it
    libs = ['sluice'] + (['litdata'] if args.litdata_src and {'loader', 's3', 'resume'} &
                         set(rows) else [])
    # batch and resume read A whatever --workloads says
    resume_bench.prepare(args.work, sorted(set(workloads) | ({'A'} if {'batch', 'resume'} &
                                                              set(rows) else set())),
                         libs, ['iter'], args.litdata_src)
    if args.webdataset_site and {'http', 'proxy'} & set(rows):
        for w in workloads:
            write_tars(resume_bench.data_dir(args.work, w) + '-wds', *resume_bench.WORKLOADS[w])
    bench = Bench(args, workloads)
    images = None
    if args.images:
        print(f'preparing {args.images} JPEGs ...', flush=True)
        files, mds, ld = image_bench.prepare(os.path.join(args.work, 'images', str(args.images)),
                                             args.images, args.litdata_src)
        images = {'files': files, 'mds': mds, 'litdata': ld}
    started = time.perf_counter()
    try:
        if {'http', 'proxy'} & set(rows):
            nginx_work = os.path.join(args.work, 'nginx')
            os.makedirs(nginx_work, exist_ok=True)
            bench.nginx = cold_first_sample.start_nginx(os.path.join(args.work, 'data'),
                                                        nginx_work)
        if 'proxy' in rows:
            bench.proxy = DelayProxy(bench.nginx[1])
        if {'s3', 'resume'} & set(rows):
            bench.s3 = resume_bench.S3rver(os.path.join(args.work, 's3rver'))
            kinds = [k for k in ('sluice', 'mosaic') if k != 'mosaic' or args.mosaic_src]
            resume_bench.warm(args.work, workloads, kinds, args.mosaic_src or '', bench.s3,
                              resume_bench.s3_env(bench.s3.endpoint))
            for w in workloads if args.litdata_src else ():
                resume_bench.upload(bench.data(w) + '-litdata', resume_bench.tag(w) + '-litdata',
                                    bench.s3.endpoint)
        for run in range(args.runs):
            print(f'run {run + 1} of {args.runs}, load average '
                  f'{" ".join(f"{x:.2f}" for x in os.getloadavg())} ...', flush=True)
            for row in rows:
                if row == 'resume':
                    bench.resume('A', 'local')
                    for w in workloads:
                        bench.resume(w, 's3')
                        if resume_bench.can_drop_page_cache():
                            bench.resume(w, 's3', 'dropped')
                elif row == 'batch':
                    bench.batch('A')
                elif row == 'loader':
                    for w in workloads:
                        bench.loader(w)
                else:
                    for w in workloads:
                        bench.cold(w, row)
            if images:
                bench.image(images)
    finally:
        if bench.proxy:
            bench.proxy.close()
        if bench.nginx:
            bench.nginx[0].terminate()
            bench.nginx[0].wait()
        if bench.s3:
            bench.s3.stop()
    bench.table.print(args.runs)
    for note in bench.notes:
        print(note)
    print(f'\n{args.runs} run(s) in {time.perf_counter() - started:.0f} s (scale {args.scale}); '
          f'load average at the end {" ".join(f"{x:.2f}" for x in os.getloadavg())}')


if __name__ == '__main__':
    main()
