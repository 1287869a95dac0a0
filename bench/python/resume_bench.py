"""Resumption: load_state_dict to the first batch, in a fresh process, for
Sluice, mosaicml-streaming and LitData (local only): the registry's releases
pinned in peers.txt (registry_peers.py), or checkouts given with
--mosaic-src/--litdata-src.

    SLUICE_LIBRARY=build/bindings/c/libsluice.so PYTHONPATH=bindings/python \\
        /usr/bin/python3 bench/python/resume_bench.py [--work DIR] [--runs 3] \\
        [--workloads A,B] [--sources local,s3] [--paths iter,dl0,dl2]

Workloads (the speed issue's): A = 500,000 x 1 KiB, B = 8,000 x 256 KiB, MDS
in 64 MiB shards, shuffled (py1e, seed 17), batch 16, resumed from the middle
of epoch 0. Sources: `local` reads the folder in place; `s3` streams from a
loopback s3rver into a cache folder that an earlier process of the same
library filled (warm). Paths: plain iteration (`iter`) and a torch
DataLoader with 0 or 2 workers (`dl0`, `dl2`). Each run is a fresh process
that times constructing the dataset, then load_state_dict to the first
batch of 16; libraries interleave; medians of --runs with min and max.
Every contender's first batch must hold the same sample ids (the same
order), which the script checks; LitData has its own shuffle, so its state
is its own StreamingDataLoader's, saved once half-way through its epoch
with the same batch and workers, and its first batch is checked against
the ids that loader yielded next.

--work keeps the datasets, the s3rver folder and the warm caches between
invocations (they take minutes to make); a fresh temporary folder otherwise.
--sluice NAME=LIBSLUICE (repeatable) runs each given libsluice.so as its own
contender `sluice:NAME` in the same interleaved runs, e.g. a build before
and after a change (they share Sluice's warm cache).
"""
import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import registry_peers

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SERVERS = os.path.join(ROOT, 'tests', 'servers')
KEY_ID, SECRET, BUCKET = 'RESUMEBENCHKEY', 'resume-bench-secret', 'bench'
BATCH = 16
SEED = 17
WORKLOADS = {'A': (500_000, 1 << 10), 'B': (8_000, 256 << 10)}

# The contender: argv = library, remote ('' = none), local, path, state JSON,
# mosaic source. Prints one JSON line: seconds to construct, seconds from
# load_state_dict to the first batch, and the first batch's sample ids.
CHILD = r'''
import json, os, sys, time
lib, remote, local, path, state, src = sys.argv[1:7]
state = json.loads(state)
if lib == 'mosaic':
    sys.path.insert(0, os.path.join(%(root)r, 'bench', 'compare'))
    from mosaic_stubs import import_streaming
    streaming, _ = import_streaming(src)
    Dataset = streaming.StreamingDataset
else:
    import sluice
    Dataset = sluice.StreamingDataset
import torch.utils.data
t0 = time.perf_counter()
ds = Dataset(remote=remote or None, local=local, shuffle=True, shuffle_seed=%(seed)d,
             batch_size=%(batch)d, num_canonical_nodes=1)
t1 = time.perf_counter()
ds.load_state_dict(state)
if path == 'iter':
    it = iter(ds)
    batch = [next(it) for _ in range(%(batch)d)]
    ids = [int(s['id']) for s in batch]
else:
    loader = torch.utils.data.DataLoader(ds, batch_size=%(batch)d, num_workers=int(path[2:]))
    batch = next(iter(loader))
    ids = [int(x) for x in batch['id']]
t2 = time.perf_counter()
print(json.dumps({'construct': t1 - t0, 'resume': t2 - t1, 'ids': ids}))
os._exit(0)  # leave the loader's workers and threads without a teardown to time
''' % {'root': ROOT, 'seed': SEED, 'batch': BATCH}


# LitData's contender: argv = local, path, state file, litdata source.
# Same output as CHILD's. `iter` resumes the dataset alone with the state of
# the no-worker loader, as LitData's StreamingDataset.load_state_dict takes.
LITDATA_CHILD = r'''
import json, os, sys, time
local, path, state_file, src = sys.argv[1:5]
sys.path.insert(0, %(here)r)
from litdata_shims import collate_bytes, import_litdata
litdata = import_litdata(src)
with open(state_file) as f:
    saved = json.load(f)
t0 = time.perf_counter()
ds = litdata.StreamingDataset(local, shuffle=True, seed=%(seed)d)
t1 = time.perf_counter()
if path == 'iter':
    ds.load_state_dict(saved['state']['dataset'])
    it = iter(ds)
    ids = [int(next(it)['id']) for _ in range(%(batch)d)]
else:
    # prefetch_factor=2: what torch 1.13 (Debian's) demands at 0 workers,
    # where LitData passes None; it means nothing there. collate_bytes: see
    # litdata_shims.py (default_collate makes a tensor of every byte).
    loader = litdata.StreamingDataLoader(ds, batch_size=%(batch)d, num_workers=int(path[2:]),
                                         prefetch_factor=2, collate_fn=collate_bytes)
    loader.load_state_dict(saved['state'])
    ids = [int(x) for x in next(iter(loader))['id']]
t2 = time.perf_counter()
print(json.dumps({'construct': t1 - t0, 'resume': t2 - t1, 'ids': ids, 'expected': saved['next']}))
os._exit(0)
''' % {'here': HERE, 'seed': SEED, 'batch': BATCH}

# Half an epoch through LitData's loader with `workers`, then its state and
# the ids of the batch it yields next, as JSON on stdout.
LITDATA_STATE = r'''
import json, sys
local, workers, samples, src = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
sys.path.insert(0, %(here)r)
from litdata_shims import collate_bytes, import_litdata
litdata = import_litdata(src)
ds = litdata.StreamingDataset(local, shuffle=True, seed=%(seed)d)
loader = litdata.StreamingDataLoader(ds, batch_size=%(batch)d, num_workers=workers,
                                     prefetch_factor=2,  # as in LITDATA_CHILD
                                     collate_fn=collate_bytes)
seen = 0
it = iter(loader)
while seen < samples // 2:
    seen += len(next(it)['id'])
state = loader.state_dict()
print(json.dumps({'state': state, 'next': [int(x) for x in next(it)['id']]}))
''' % {'here': HERE, 'seed': SEED, 'batch': BATCH}


_PAYLOAD = {}  # size -> the payload write_dataset writes (made in each process)


def litdata_item(i, size):
    """Sample i of a LitData copy of a workload: the same columns and bytes."""
    if size not in _PAYLOAD:
        import numpy as np
        _PAYLOAD[size] = np.random.default_rng(0).integers(0, 256, size=size,
                                                           dtype=np.uint8).tobytes()
    return {'id': i, 'data': _PAYLOAD[size]}


def write_litdata(folder, samples, size, src):
    """The workload as LitData's own `optimize` writes it (64 MB chunks)."""
    import functools
    sys.path.insert(0, HERE)
    from litdata_shims import import_litdata
    litdata = import_litdata(src)
    tmp = folder + '.partial'
    shutil.rmtree(tmp, ignore_errors=True)
    litdata.optimize(fn=functools.partial(litdata_item, size=size), inputs=list(range(samples)),
                     output_dir=tmp, chunk_bytes='64MB', num_workers=1)
    os.rename(tmp, folder)


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def write_dataset(folder, samples, size):
    import numpy as np
    import sluice
    rng = np.random.default_rng(0)
    payload = rng.integers(0, 256, size=size, dtype=np.uint8).tobytes()
    tmp = folder + '.partial'
    shutil.rmtree(tmp, ignore_errors=True)
    with sluice.MDSWriter(out=tmp, columns={'id': 'int', 'data': 'bytes'},
                          size_limit=64 << 20) as w:
        for i in range(samples):
            w.write({'id': i, 'data': payload})
    os.rename(tmp, folder)


class S3rver:
    """A loopback s3rver over `folder` (kept between invocations)."""

    def __init__(self, folder):
        self.port = free_port()
        os.makedirs(folder, exist_ok=True)
        self.log = open(os.path.join(folder, '..', 's3rver.log'), 'w')
        self.proc = subprocess.Popen(['node', os.path.join(SERVERS, 's3rver_launch.js'),
                                      str(self.port), folder, KEY_ID, SECRET, BUCKET],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        for _ in range(200):
            try:
                socket.create_connection(('127.0.0.1', self.port), timeout=0.1).close()
                return
            except OSError:
                if self.proc.poll() is not None:
                    break
                time.sleep(0.05)
        self.stop()
        raise RuntimeError('s3rver did not start (see s3rver.log in the work folder)')

    @property
    def endpoint(self):
        return f'http://127.0.0.1:{self.port}'

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


def s3_env(endpoint):
    env = dict(os.environ, AWS_ACCESS_KEY_ID=KEY_ID, AWS_SECRET_ACCESS_KEY=SECRET,
               S3_ENDPOINT_URL=endpoint, AWS_DEFAULT_REGION='us-east-1')
    for name in ('AWS_PROFILE', 'AWS_SESSION_TOKEN', 'AWS_ENDPOINT_URL', 'S3_UNSIGNED'):
        env.pop(name, None)
    return env


# curl's arguments to sign its requests to the S3rver as s3_env's
# credentials do (curl 7.88 signs without x-amz-content-sha256, which S3
# requires).
CURL_SIGV4_ARGS = ('--aws-sigv4', 'aws:amz:us-east-1:s3', '--user', f'{KEY_ID}:{SECRET}',
                   '-H', 'x-amz-content-sha256: UNSIGNED-PAYLOAD')


def upload(folder, prefix, endpoint):
    """The dataset's files under s3://bench/<prefix>/ unless already there."""
    import boto3
    s3 = boto3.client('s3', endpoint_url=endpoint, aws_access_key_id=KEY_ID,
                      aws_secret_access_key=SECRET, region_name='us-east-1')
    have = {o['Key'] for page in s3.get_paginator('list_objects_v2').paginate(
        Bucket=BUCKET, Prefix=prefix + '/') for o in page.get('Contents', [])}
    for name in sorted(os.listdir(folder)):
        if f'{prefix}/{name}' not in have:
            s3.upload_file(os.path.join(folder, name), BUCKET, f'{prefix}/{name}')


# Fills a cache folder the way the library itself does: one sample of
# every shard read through random access (which fetches the shard).
WARM = r'''
import json, os, sys
lib, remote, local, src = sys.argv[1:5]
if lib == 'mosaic':
    sys.path.insert(0, os.path.join(%(root)r, 'bench', 'compare'))
    from mosaic_stubs import import_streaming
    streaming, _ = import_streaming(src)
    ds = streaming.StreamingDataset(remote=remote, local=local, batch_size=16)
else:
    import sluice
    ds = sluice.StreamingDataset(remote=remote, local=local, batch_size=16)
with open(os.path.join(local, 'index.json')) as f:
    counts = [s['samples'] for s in json.load(f)['shards']]
first = 0
for n in counts:
    ds[first]
    first += n
''' % {'root': ROOT}


def run_child(lib, remote, local, path, state, src, env):
    out = subprocess.run([sys.executable, '-c', CHILD, lib, remote, local, path,
                          json.dumps(state), src], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise RuntimeError(f'{lib} {remote or local} {path} failed:\n{out.stderr[-3000:]}')
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_litdata(local, path, state_file, src):
    out = subprocess.run([sys.executable, '-c', LITDATA_CHILD, local, path, state_file, src],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f'litdata {local} {path} failed:\n{out.stderr[-3000:]}')
    return json.loads(out.stdout.strip().splitlines()[-1])


def tag(w):
    """Workload w's name in the work folder and the bucket: with its sample
    count, which --scale changes."""
    return f'{w}-{WORKLOADS[w][0]}'


def data_dir(work, w):
    return os.path.join(work, 'data', tag(w))


def kind(lib):
    """'sluice' for every sluice:NAME contender."""
    return lib.split(':')[0]


def spread(xs):
    return (f'{statistics.median(xs) * 1e3:7.1f} ms '
            f'({min(xs) * 1e3:.1f}-{max(xs) * 1e3:.1f})')


def prepare(work, workloads, libs, paths, litdata_src):
    """Each workload's MDS folder and, with LitData among `libs`, its own
    optimize'd copy and its loader's half-way state per path, unless kept."""
    for w in workloads:
        folder = data_dir(work, w)
        if not os.path.isdir(folder):
            print(f'writing {w} ...', flush=True)
            write_dataset(folder, *WORKLOADS[w])
        if 'litdata' in libs and not os.path.isdir(folder + '-litdata'):
            print(f'writing {w} with litdata.optimize ...', flush=True)
            write_litdata(folder + '-litdata', *WORKLOADS[w], litdata_src)
        for path in paths if 'litdata' in libs else ():
            state_file = litdata_state_file(work, w, path)
            if not os.path.isfile(state_file):
                workers = 0 if path == 'iter' else int(path[2:])
                out = subprocess.run([sys.executable, '-c', LITDATA_STATE, folder + '-litdata',
                                      str(workers), str(WORKLOADS[w][0]), litdata_src],
                                     capture_output=True, text=True, check=True)
                with open(state_file, 'w') as f:
                    f.write(out.stdout.strip().splitlines()[-1])


def litdata_state_file(work, w, path):
    return os.path.join(work, f'litdata-state-{tag(w)}-{path}.json')


def warm(work, workloads, kinds, src, server, env):
    """Each workload uploaded to `server` and each library's cache of it
    filled (kept between invocations)."""
    for w in workloads:
        upload(data_dir(work, w), tag(w), server.endpoint)
        for lib in kinds:
            cache = os.path.join(work, 'cache', lib, tag(w))
            if not os.path.isfile(os.path.join(cache, '.warm')):
                print(f'warming {lib} cache of {w} ...', flush=True)
                shutil.rmtree(cache, ignore_errors=True)
                subprocess.run([sys.executable, '-c', WARM, lib, f's3://{BUCKET}/{tag(w)}',
                                cache, src], check=True, env=env)
                open(os.path.join(cache, '.warm'), 'w').close()


def set_page_cache(folder, state):
    """`state` 'hot': every file under `folder` read, so it is in the page
    cache; 'dropped': the whole page cache dropped (root only: a warm cache
    read back from disk, as after a restart); None: as it is."""
    if state == 'hot':
        for root, _, names in os.walk(folder):
            for name in names:
                with open(os.path.join(root, name), 'rb') as f:
                    while f.read(1 << 24):
                        pass
    elif state == 'dropped':
        os.sync()
        with open('/proc/sys/vm/drop_caches', 'w') as f:
            f.write('3\n')


def can_drop_page_cache():
    return os.access('/proc/sys/vm/drop_caches', os.W_OK)


def resume_once(work, w, source, path, lib, src, env, litdata_src, library=None,
                page_cache=None):
    """One fresh process of `lib` resuming workload w half-way from `source`
    ('local' or 's3', warmed by warm()): its JSON line ('resume', 'construct',
    'ids' and, for LitData, 'expected'), or None where the library has no
    such row (LitData reads local only). `library`: a libsluice.so to use;
    `page_cache`: the state of the files it reads (set_page_cache)."""
    if lib == 'litdata':
        if source != 'local':
            return None
        return run_litdata(data_dir(work, w) + '-litdata', path,
                           litdata_state_file(work, w, path), litdata_src)
    samples = WORKLOADS[w][0]
    state = {'epoch': 0, 'sample_in_epoch': samples // 2, 'num_canonical_nodes': 1,
             'shuffle_seed': SEED, 'initial_physical_nodes': 1}
    if source == 'local':
        remote, local = '', data_dir(work, w)
    else:
        remote = f's3://{BUCKET}/{tag(w)}'
        local = os.path.join(work, 'cache', kind(lib), tag(w))
    if library:
        env = dict(env, SLUICE_LIBRARY=library)
    set_page_cache(local, page_cache)
    return run_child(kind(lib), remote, local, path, state, src, env)


def scale_workloads(scale):
    for w in list(WORKLOADS):
        WORKLOADS[w] = (max(1, int(WORKLOADS[w][0] * scale)), WORKLOADS[w][1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--work', help='folder kept between invocations (default: a temporary one)')
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--scale', type=float, default=1.0,
                    help='multiplies the workloads\' sample counts (e.g. 0.05 for a quick check)')
    ap.add_argument('--workloads', default='A,B')
    ap.add_argument('--sources', default='local,s3')
    ap.add_argument('--paths', default='iter,dl0,dl2')
    ap.add_argument('--page-cache', choices=('hot', 'dropped'),
                    help='before each run: read the files it reads into the page cache (hot), '
                         'or drop the page cache (dropped, root only); default: as it is')
    ap.add_argument('--libraries', default='sluice,mosaic,litdata')
    registry_peers.add_arguments(ap)
    ap.add_argument('--sluice', action='append', default=[], metavar='NAME=LIBSLUICE',
                    help='a libsluice.so to run as contender sluice:NAME (repeatable)')
    args = ap.parse_args()
    work = args.work or tempfile.mkdtemp(prefix='sluice-resume-')
    os.makedirs(work, exist_ok=True)
    workloads = args.workloads.split(',')
    scale_workloads(args.scale)
    sources = args.sources.split(',')
    paths = args.paths.split(',')
    libs = args.libraries.split(',')
    builds = dict(b.split('=', 1) for b in args.sluice)  # sluice:NAME -> library
    if builds and 'sluice' in libs:
        at = libs.index('sluice')
        libs[at:at + 1] = [f'sluice:{name}' for name in builds]
    registry_peers.resolve(args)
    src = args.mosaic_src or ''
    for lib, given in (('mosaic', args.mosaic_src), ('litdata', args.litdata_src)):
        if lib in libs and not given:
            libs.remove(lib)
    prepare(work, workloads, libs, paths, args.litdata_src)
    server = S3rver(os.path.join(work, 's3rver')) if 's3' in sources else None
    env = s3_env(server.endpoint) if server else dict(os.environ)
    try:
        if server:
            warm(work, workloads, dict.fromkeys(kind(x) for x in libs), src, server, env)
        results = {}
        for _ in range(args.runs):
            for w in workloads:
                for source in sources:
                    for path in paths:
                        for lib in libs:
                            r = resume_once(work, w, source, path, lib, src, env,
                                            args.litdata_src,
                                            builds[lib[7:]] if lib.startswith('sluice:') else None,
                                            page_cache=args.page_cache)
                            if r is not None:
                                results.setdefault((w, source, path, lib), []).append(r)
        print(f'\nload_state_dict to the first batch of {BATCH} (construct in brackets), '
              f'shuffled py1e, resumed at sample_in_epoch = half the dataset; '
              f'median (min-max) of {args.runs} fresh processes')
        print(f'{"workload":9} {"source":6} {"path":5} {"library":14} {"resume":26} '
              f'{"construct":24}')
        bad = []
        for (w, source, path, lib), rs in results.items():
            print(f'{w:9} {source:6} {path:5} {lib:14} {spread([r["resume"] for r in rs]):26} '
                  f'{spread([r["construct"] for r in rs]):24}')
            first = results[(w, source, path, libs[0])][0]['ids']
            if any(r['ids'] != r.get('expected', first) for r in rs):
                bad.append((w, source, path, lib))
        if bad:
            print('FIRST BATCHES DIFFER from', libs[0], '(LitData: from its own next batch) for',
                  bad)
            return 1
        print('every first batch equal across libraries and runs (LitData: to the batch its '
              'loader yielded after the state was taken)')
    finally:
        if server:
            server.stop()
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
