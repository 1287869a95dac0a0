"""Time to the first sample of a cold epoch, in order and shuffled, from a
loopback nginx: each run is a fresh process with an empty cache folder.
The reference is one shard's download by `curl` from the same server (what
the first sample has to cost at least when shards are fetched whole).

    SLUICE_LIBRARY=build/bindings/c/libsluice.so PYTHONPATH=bindings/python \\
        /usr/bin/python3 bench/python/cold_first_sample.py [--samples N] [--size BYTES] [--runs R]
        [--epoch] [--proxy] [--s3rver] [--resume] [--webdataset]
        [--library NAME=PATH[,PYTHONPATH] ...]

Defaults: 8,000 samples of 256 KiB in 64 MiB uncompressed shards (the
speed issue's workload B). Prints the median, min and max of R runs, then
for each reader's rows the gap from the first byte of the request that
carried its first sample to the sample in hand (issue 41's target: one round
trip + 10 ms; first_sample_phases.sample_request picks the request out of
nginx's access log, whose arrival stands for the first byte), and the load
average. With
--epoch, each run also reads the whole epoch, timed against all shards
fetched by 4 parallel `curl` transfers into /dev/null. With --proxy, every row is also
measured through delay_proxy.py (15 ms to first byte, 100 MB/s per
connection). With --s3rver, every row is also measured from a loopback
s3rver (tests/servers; its node_modules from ./dev deps) holding the same
shards (and the tar shards), every request signed (WebDataset's through
`pipe:curl --aws-sigv4 ...`); s3rver keeps no log of when a request came,
so its rows have no first-byte gap. With --resume, each run also times a resumed cold iteration:
the child loads a state_dict at the middle of epoch 0 (load_state_dict,
as a restarted job would) and times its first sample, whose shard is not
in the cache. --library runs the children against other builds of
libsluice.so (e.g. before=/tmp/old.so after=build/...; with ,PYTHONPATH the
child imports that build's package too), interleaved, as in cold_epoch.py.

With --webdataset, the same samples (ids and payload bytes) are also
written as WebDataset tar shards of at most 64 MiB (www/wds/shard-000000.tar,
...; webdataset_peer.py: members %09d.id and %09d.data; tar's 512 B headers
and padding make them more bytes and, for small samples, more shards than
the MDS ones: the header line says how many) and read from the same nginx
by the registry package webdataset (pinned in peers.txt, in
registry_peers.py's venv, filled on first use: pip needs the network then), a
fresh process per run, interleaved with the other rows, imports excluded:
  webdataset, in order    WebDataset(urls, shardshuffle=False)
  webdataset, shuffled    WebDataset(urls, shardshuffle=100, seed=17)
                          .shuffle(1000, seed=17): its own idiom, shard
                          order shuffled (a 100-shard buffer, what this
                          version makes of shardshuffle=True: a whole
                          permutation up to 100 shards), then a 1,000-sample
                          buffer, whose first sample comes once 100 samples
                          (its `initial`) are in
timed from the pipeline's construction to the first sample (its `data` as
the raw bytes: nothing decodes) and, with --epoch, to the end of the
epoch. Each child checks what it read: the first sample's key, id (0 in
order) and payload bytes, and with --epoch every id once. WebDataset has no
resume: --resume adds no row for it. It reads the shards one after the
other, each by one GET of a `curl` process it starts, streaming the tar.
"""
import argparse
import json
import os
import shlex
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import sluice
from cold_epoch import curl_epoch, folder_bytes
from delay_proxy import DelayProxy
import registry_peers
import webdataset_peer

MOSAIC_STUBS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                            'compare')

# The child: open, iterate to the first sample, print seconds since the
# dataset was constructed (imports excluded: they are the same warm or cold),
# then (argv[4] == '1') to the end of the epoch, the CPU seconds spent
# from the construction on (cold_epoch.cpu_seconds), the wall clock
# (time.time()) when the first sample was in hand, and the samples read. argv[5] > 0: resume at
# that sample_in_epoch of epoch 0 first (Mosaic's state_dict keys, with 64
# canonical nodes: not py1e's default of one for one node, so the resumed
# pass reads another order than the unresumed one; what is timed is its
# first sample, whose shard is as cold either way). argv[6]: Sluice's engine
# keys as JSON (StreamingDataset._engine_keys, e.g. {"serve_in_flight": true};
# '{}': the engine's defaults). argv[7], when given, is a mosaicml-streaming
# source tree to read with instead (argv[8]: the folder of mosaic_stubs.py).
CHILD = r'''
import json, sys, time
sys.path.insert(0, %r)
from cold_epoch import cpu_seconds
if len(sys.argv) > 7:
    sys.path.insert(0, sys.argv[8])
    from mosaic_stubs import import_streaming
    Dataset = import_streaming(sys.argv[7])[0].StreamingDataset
    given = {}
else:
    import sluice
    keys = json.loads(sys.argv[6])
    # single_pass is an argument: the dataset gives every stream its own
    # (False unless asked), which an engine key of the dataset's would not
    # override.
    given = {'single_pass': keys.pop('single_pass')} if 'single_pass' in keys else {}
    class Dataset(sluice.StreamingDataset):
        _engine_keys = keys
c0, t0 = cpu_seconds(), time.perf_counter()
ds = Dataset(remote=sys.argv[1], local=sys.argv[2], shuffle=sys.argv[3] == '1',
             batch_size=16, shuffle_seed=17, **given)
if int(sys.argv[5]) > 0:
    ds.load_state_dict({'epoch': 0, 'sample_in_epoch': int(sys.argv[5]),
                        'num_canonical_nodes': 64, 'shuffle_seed': 17,
                        'initial_physical_nodes': 1})
it = iter(ds)
next(it)
first, at, n = time.perf_counter() - t0, time.time(), 1
if sys.argv[4] == '1':
    for _ in it:
        n += 1
print(first, time.perf_counter() - t0, cpu_seconds() - c0, at, n)
''' % os.path.dirname(os.path.abspath(__file__))


def payload(size):
    """The bytes every sample's `data` holds."""
    return np.random.default_rng(0).integers(0, 256, size=size, dtype=np.uint8).tobytes()


def write(folder, samples, size):
    data = payload(size)
    with sluice.MDSWriter(out=folder, columns={'id': 'int', 'data': 'bytes'},
                          size_limit=64 << 20) as w:
        for i in range(samples):
            w.write({'id': i, 'data': data})


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def start_nginx(root, work, access_log='access_log off;'):
    """nginx serving `root` on a free loopback port; `access_log` is its
    http-level logging directive(s)."""
    port = free_port()
    conf = os.path.join(work, 'nginx.conf')
    with open(conf, 'w') as f:
        f.write(f'''daemon off; master_process off; worker_processes 1;
pid {work}/nginx.pid; error_log {work}/error.log;
events {{ worker_connections 1024; }}
http {{ {access_log} sendfile on; keepalive_requests 100000;
  client_body_temp_path {work}/body; proxy_temp_path {work}/proxy;
  fastcgi_temp_path {work}/fastcgi; uwsgi_temp_path {work}/uwsgi; scgi_temp_path {work}/scgi;
  server {{ listen 127.0.0.1:{port}; root {root}; }} }}
''')
    proc = subprocess.Popen(['nginx', '-p', work, '-c', conf, '-e', f'{work}/error.log'])
    for _ in range(500):
        try:
            socket.create_connection(('127.0.0.1', port), timeout=0.1).close()
            return proc, port
        except OSError:
            time.sleep(0.01)
    proc.kill()
    raise RuntimeError('nginx did not start')


def child_time(url, shuffle, work, epoch=False, env=None, mosaic_src=None, resume=0, log=None,
               engine_keys=None):
    """Seconds to the first sample, with `env` (default: this process's), by
    Sluice (with `engine_keys`, a dict of engine options; None: the engine's
    defaults) or, given `mosaic_src`, by mosaicml-streaming from that source
    tree; with `resume` > 0, of an iteration resumed at that sample of epoch
    0. With `epoch`: (seconds to the first sample, to the end of the epoch,
    CPU seconds of the epoch, bytes in the cache after it, samples read). With `log`
    (nginx's access log, see first_byte_gap): (that, the first-byte gap)."""
    if log:
        open(log, 'w').close()
    cache = tempfile.mkdtemp(dir=work)
    try:
        mosaic = [mosaic_src, MOSAIC_STUBS] if mosaic_src else []
        out = subprocess.run([sys.executable, '-c', CHILD, url, cache, '1' if shuffle else '0',
                              '1' if epoch else '0', str(resume),
                              json.dumps(engine_keys or {})] + mosaic,
                             capture_output=True, text=True, env=env or os.environ)
        if out.returncode != 0:
            raise RuntimeError(out.stderr)
        first, whole, cpu, at, n = map(float, out.stdout.strip().splitlines()[-1].split())
        got = (first, whole, cpu, folder_bytes(cache), int(n)) if epoch else first
        return (got, first_byte_gap(log, at)) if log else got
    finally:
        shutil.rmtree(cache)


def first_byte_gap(log, at):
    """Seconds from the first byte of the request that carried the first
    sample (first_sample_phases.sample_request, from nginx's log `log`) to
    the sample in the child's hands at `at`; None if no request arrived."""
    time.sleep(0.05)  # nginx logs a request once answered
    import first_sample_phases
    request = first_sample_phases.sample_request(log, at)
    return None if request is None else at - request[0]


def curl_time(url, work, curl_args=()):
    """Seconds to download url by `curl` (`curl_args`: e.g. a signature's)."""
    t = time.perf_counter()
    subprocess.run(['curl', '-sf', *curl_args, '-o', os.path.join(work, 'one.bin'), url],
                   check=True)
    return time.perf_counter() - t


def curl_all_time(urls, work, curl_args=()):
    """Seconds for all shards by 4 parallel transfers on their own connections,
    into /dev/null (issue 41's reference)."""
    return curl_epoch(urls, 4, work, curl_args, discard=True)[0]


def s3rver_path(work, webdataset):
    """A loopback s3rver (resume_bench.S3rver) holding www/data (and www/wds,
    the tar shards, with `webdataset`), uploaded by signed `curl` PUTs (no
    boto3 needed), as one of main's paths; and the server to stop."""
    import resume_bench
    server = resume_bench.S3rver(os.path.join(work, 's3rver'))
    try:
        base = f'{server.endpoint}/{resume_bench.BUCKET}'
        for prefix in ['data'] + (['wds'] if webdataset else []):
            folder = os.path.join(work, 'www', prefix)
            for name in sorted(os.listdir(folder)):
                subprocess.run(['curl', '-sf', *resume_bench.CURL_SIGV4_ARGS, '-T',
                                os.path.join(folder, name), f'{base}/{prefix}/{name}'],
                               check=True, stdout=subprocess.DEVNULL)
    except BaseException:
        server.stop()
        raise
    return ('s3rver: ', base, f's3://{resume_bench.BUCKET}/data',
            resume_bench.s3_env(server.endpoint), resume_bench.CURL_SIGV4_ARGS, None), server


def summary(xs):
    return f'{statistics.median(xs) * 1e3:8.1f} ms (min {min(xs) * 1e3:.1f}, max {max(xs) * 1e3:.1f})'


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--samples', type=int, default=8000)
    ap.add_argument('--size', type=int, default=256 << 10)
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--epoch', action='store_true',
                    help='also time whole cold epochs against 4 parallel curl transfers')
    ap.add_argument('--resume', action='store_true',
                    help='also time the first sample of an iteration resumed mid-epoch')
    ap.add_argument('--proxy', action='store_true',
                    help='also measure through delay_proxy.py (15 ms, 100 MB/s per connection)')
    ap.add_argument('--webdataset', action='store_true',
                    help='also time WebDataset (peers.txt\'s, in registry_peers.py\'s venv) '
                    'over the same samples as tar shards')
    ap.add_argument('--s3rver', action='store_true',
                    help='also read from a loopback s3rver (cold_epoch.s3rver_path), signed')
    ap.add_argument('--library', action='append', default=[],
                    help='NAME=PATH[,PYTHONPATH] of a libsluice.so (and its package) to run '
                    '(default: $SLUICE_LIBRARY)')
    args = ap.parse_args()
    libraries = [('', {})]  # (name, what it sets in the child's environment)
    if args.library:
        libraries = []
        for spec in args.library:
            name, _, lib = spec.partition('=')
            path, _, pythonpath = lib.partition(',')
            libraries.append((name, dict(SLUICE_LIBRARY=path,
                                         **({'PYTHONPATH': pythonpath} if pythonpath else {}))))
    work = tempfile.mkdtemp(prefix='sluice-cold-')
    try:
        data = os.path.join(work, 'www', 'data')
        write(data, args.samples, args.size)
        shards = sorted(n for n in os.listdir(data) if n.endswith('.mds'))
        if args.webdataset:
            wds_site = registry_peers.site_packages()
            wds_payload = payload(args.size)
            tars = webdataset_peer.write_tars(os.path.join(work, 'www', 'wds'), args.samples,
                                              wds_payload)
            tar_bytes = folder_bytes(os.path.join(work, 'www', 'wds'))
        import first_sample_phases
        log = os.path.join(work, 'access.log')
        nginx, port = start_nginx(os.path.join(work, 'www'), work,
                                  f'log_format t {first_sample_phases.LOG_FORMAT}; '
                                  f'access_log {log} t;')
        proxy = DelayProxy(port) if args.proxy else None
        s3 = None
        try:
            # (label, base URL, Sluice's remote, the child's environment,
            # curl's arguments, nginx's log: None where it is not nginx's)
            paths = [('', f'http://127.0.0.1:{port}', None, None, (), log)]
            if proxy:
                paths.append(('proxy: ', f'http://127.0.0.1:{proxy.port}', None, None, (), log))
            if args.s3rver:
                s3 = s3rver_path(work, args.webdataset)
                paths.append(s3[0])
            rows, gaps = {}, {}
            for _ in range(args.runs):  # interleaved, so drift hits every row alike
                for path, base_url, remote, path_env, curl_args, path_log in paths:
                    url = f'{base_url}/data'
                    rows.setdefault(path + 'curl one shard', []).append(
                        curl_time(f'{url}/{shards[0]}', work, curl_args))
                    if args.epoch:
                        rows.setdefault(path + 'curl all, 4 parallel', []).append(
                            curl_all_time([f'{url}/{n}' for n in shards], work, curl_args))
                    for name, sets in libraries:
                        env = dict(path_env or os.environ, **sets)
                        label = path + (name + ', ' if name else '')
                        for order, shuffle in (('in order', False), ('shuffled', True)):
                            got = child_time(remote or url, shuffle, work, epoch=args.epoch,
                                             env=env, log=path_log)
                            got, gap = got if path_log else (got, None)
                            first, whole = got[:2] if args.epoch else (got, None)
                            rows.setdefault(label + order, []).append(first)
                            if gap is not None:
                                gaps.setdefault(label + order, []).append(gap)
                            if args.epoch:
                                rows.setdefault(label + 'epoch ' + order, []).append(whole)
                            if args.resume:
                                rows.setdefault(label + 'resumed ' + order, []).append(
                                    child_time(remote or url, shuffle, work, env=env,
                                               resume=args.samples // 2))
                    if args.webdataset:
                        # Signed as Sluice's requests are (WebDataset's own http: is
                        # `curl -s -L` too).
                        pipe = 'pipe:' + shlex.join(['curl', '-s', '-f', '-L', *curl_args]) + ' '
                        wds_urls = [(pipe if curl_args else '') + f'{base_url}/wds/{n}'
                                    for n in tars]
                        for order, shuffle in (('in order', False), ('shuffled', True)):
                            if path_log:
                                open(path_log, 'w').close()
                            got, at = webdataset_peer.webdataset_time(
                                wds_site, wds_urls, shuffle,
                                args.samples, wds_payload, epoch=args.epoch, at=True)
                            first, whole = got[:2] if args.epoch else (got, None)
                            rows.setdefault(f'{path}webdataset, {order}', []).append(first)
                            gap = first_byte_gap(path_log, at) if path_log else None
                            if gap is not None:
                                gaps.setdefault(f'{path}webdataset, {order}', []).append(gap)
                            if args.epoch:
                                rows.setdefault(f'{path}webdataset, epoch {order}',
                                                []).append(whole)
        finally:
            if s3 is not None:
                s3[1].stop()
            if proxy is not None:
                proxy.close()
            nginx.terminate()
            nginx.wait()
        print(f'{args.samples} samples x {args.size} B, {len(shards)} shards, '
              f'medians of {args.runs} fresh processes, cold cache, loopback nginx'
              + (' (and through the delaying proxy)' if proxy else '')
              + (' (and from a loopback s3rver)' if s3 else ''))
        if args.webdataset:
            print(f'webdataset: {registry_peers.pins()["webdataset"]}, the same samples in '
                  f'{len(tars)} tar shards '
                  f'({tar_bytes} B; MDS: {folder_bytes(data)} B); shuffled = shardshuffle='
                  f'{webdataset_peer.SHARD_SHUFFLE} + .shuffle({webdataset_peer.SHUFFLE_BUFFER}), '
                  f'seed {webdataset_peer.SEED}')
        for name, xs in rows.items():
            print(f'  {name:34s} {summary(xs)}')
        print('from the first byte of the request that carried the first sample (nginx\'s log: '
              'its arrival; through the proxy, before its delay) to the sample in hand')
        for name, xs in gaps.items():
            print(f'  {name:34s} {summary(xs)}')
        print(f'load average {" ".join(f"{x:.2f}" for x in os.getloadavg())}')
    finally:
        shutil.rmtree(work)


if __name__ == '__main__':
    main()
