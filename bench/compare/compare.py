#!/usr/bin/env python3
"""Sluice side by side with the alternatives; writes BENCHMARKS.md and its plots.

    ninja -C build && /usr/bin/python3 bench/compare/compare.py

One synthetic MDS dataset (--samples x --size bytes, written by sluice's
MDSWriter) is read for one epoch, every contender in a fresh process with a
fresh cache folder, runs interleaved so that drift hits every contender alike.
Every consumer reads every byte of every sample. Workloads:
  cold-folder  the remote is a local folder (shards copied into the cache):
               `sluice bench` (C++), sluice.StreamingDataset (Python),
               mosaicml-streaming's StreamingDataset when importable; the
               reference is `cp` of the shard files (page cache to page cache).
  cold-http    the remote is a loopback nginx: sluice C++ and Python; the
               reference is `curl` fetching every shard, 4 transfers at a time.
  warm-local   the data is on local disk and in the page cache: sluice C++
               (a warm cache folder), sluice Python and mosaic reading the
               folder in place, a plain PyTorch Dataset over one file per sample
               through a DataLoader; the reference is `cat` of the shard files.
Figures are medians with min and max over --runs; ratios are per-run
contender time / Sluice C++ time of the same run (> 1: slower than Sluice C++).
"""
import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, 'bench', 'python'))
sys.path.insert(0, os.path.join(ROOT, 'bindings', 'python'))
import registry_peers  # noqa: E402

BATCH = 256

# A Python contender in its own process: prints seconds from constructing the
# dataset to the end of the epoch, then the sample count and byte sum.
CHILD = r'''
import os, sys, time
import numpy as np
kind, remote, local, mosaic_src = sys.argv[1:5]
if kind == 'mosaic':
    sys.path.insert(0, sys.argv[5])
    from mosaic_stubs import import_streaming
    streaming, _ = import_streaming(mosaic_src or None)
elif kind == 'files':
    import torch.utils.data as tud
else:
    import sluice
t0 = time.perf_counter()
if kind == 'sluice':
    ds = sluice.StreamingDataset(remote=remote or None, local=local, batch_size=%(batch)d)
elif kind == 'mosaic':
    ds = streaming.StreamingDataset(remote=remote or None, local=local, batch_size=%(batch)d)
else:
    class Files(tud.Dataset):
        def __init__(self, folder):
            self.paths = sorted(os.path.join(folder, n) for n in os.listdir(folder))
        def __len__(self):
            return len(self.paths)
        def __getitem__(self, i):
            with open(self.paths[i], 'rb') as f:
                return {'data': f.read()}
    ds = tud.DataLoader(Files(local), batch_size=None, num_workers=0)
n = total = 0
for sample in ds:
    total += int(np.frombuffer(sample['data'], np.uint8).sum(dtype=np.uint64))
    n += 1
print(time.perf_counter() - t0, n, total)
''' % {'batch': BATCH}


def run(cmd, env=None):
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise RuntimeError(f'{" ".join(cmd)} failed:\n{out.stdout}{out.stderr}')
    return out.stdout


def write_dataset(folder, files_folder, samples, size, shard_bytes):
    """The MDS dataset, and (unless files_folder is None) one file per sample."""
    import numpy as np
    import sluice
    rng = np.random.default_rng(0)
    if files_folder:
        os.makedirs(files_folder)
    with sluice.MDSWriter(out=folder, columns={'id': 'int', 'data': 'bytes'},
                          size_limit=shard_bytes) as w:
        for i in range(samples):
            payload = rng.integers(0, 256, size=size, dtype=np.uint8).tobytes()
            w.write({'id': i, 'data': payload})
            if files_folder:
                with open(os.path.join(files_folder, f'{i:09d}.bin'), 'wb') as f:
                    f.write(payload)
    return sorted(n for n in os.listdir(folder) if n.endswith('.mds'))


def plan_against_runs(sluice_bin, work, env):
    """--plan-only beside real runs for a job whose cache holds half the
    shards: shuffled in small blocks, and with Mosaic's default block (every
    prefetch window then spans every shard). Rows of (block, predicted
    egress, real egress medians of 3 runs, ratio)."""
    folder = os.path.join(work, 'plan-ds')
    shards = write_dataset(folder, None, 2000, 4096, 400 << 10)
    limit = sum(os.path.getsize(os.path.join(folder, s)) for s in shards) // 2
    rows = []
    for block in (200, 262144):
        job = ['--batch-size', '32', '--workers', '2', '--shuffle', '--shuffle-block-size', str(block),
               '--cache-limit', str(limit), '--json']
        egress = lambda extra: json.loads(run([sluice_bin, 'bench', folder] + job + extra, env))['cache']['bytes_downloaded']
        predicted = egress(['--plan-only'])
        real = statistics.median(egress([]) for _ in range(3))
        rows.append((block, predicted, real, real / predicted))
    return len(shards), limit, rows


class Contenders:
    def __init__(self, args, work, env):
        self.args, self.work, self.env = args, work, env
        self.sluice = os.path.join(args.build, 'bindings', 'cli', 'sluice')
        self.mosaic_src = ''

    def fresh(self):
        return tempfile.mkdtemp(dir=self.work, prefix='cache-')

    def cpp(self, remote, cache=None):
        keep = cache is not None
        cache = cache or self.fresh()
        try:
            r = json.loads(run([self.sluice, 'bench', remote, '--cache', cache, '--batch-size', str(BATCH),
                                '--interval', '0.05', '--json'], self.env))
            assert r['throughput']['samples'] == self.args.samples, r['throughput']
            return r['throughput']['wall_s']
        finally:
            if not keep:
                shutil.rmtree(cache)

    def python(self, kind, remote, local=None):
        cache = local or self.fresh()
        try:
            out = run([sys.executable, '-c', CHILD, kind, remote, cache, self.mosaic_src, HERE], self.env)
            secs, n, _ = out.strip().splitlines()[-1].split()
            assert int(n) == self.args.samples, out
            return float(secs)
        finally:
            if local is None:
                shutil.rmtree(cache)


def timed(cmd):
    t = time.perf_counter()
    subprocess.run(cmd, check=True, shell=isinstance(cmd, str))
    return time.perf_counter() - t


def mosaic_source():
    """The directory to import `streaming` from: the registry's release
    pinned in bench/python/peers.txt (registry_peers.py), or None when its
    venv cannot be made (no network, no pip cache)."""
    try:
        return registry_peers.site_packages()
    except (OSError, subprocess.CalledProcessError) as e:
        print(f'mosaicml-streaming: no registry venv ({e}), left out', file=sys.stderr)
        return None


def machine():
    def sh(cmd):
        try:
            return subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout.strip()
        except OSError:
            return '?'
    import numpy
    try:
        import torch
        torch_version = torch.__version__
    except ImportError:
        torch_version = 'not installed'
    cpu = sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2").strip()
    mem = sh("awk '/MemTotal/ {printf \"%.1f GiB\", $2/1048576}' /proc/meminfo")
    return [('CPU', f'{cpu}, {os.cpu_count()} logical cores visible'),
            ('memory', mem),
            ('kernel', platform.release()),
            ('OS', sh('. /etc/os-release && echo $PRETTY_NAME')),
            ('Python / numpy / torch', f'{platform.python_version()} / {numpy.__version__} / {torch_version}'),
            ('nginx / curl', f'{sh("nginx -v 2>&1").replace("nginx version: ", "")} / '
                             f'{sh("curl --version | head -1").split(" (")[0]}'),
            ('sluice', sh(f'git -C {ROOT} rev-parse --short HEAD') + ' (meson build dir ' +
             os.path.relpath(os.path.abspath(os.path.join(ROOT, 'build')), ROOT) + ')')]


def spread(xs, fmt):
    return f'{fmt(statistics.median(xs))} ({fmt(min(xs))} - {fmt(max(xs))})'


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--samples', type=int, default=20000)
    ap.add_argument('--size', type=int, default=8192, help='bytes per sample')
    ap.add_argument('--shard-bytes', type=int, default=8 << 20)
    ap.add_argument('--runs', type=int, default=5)
    ap.add_argument('--build', default=os.path.join(ROOT, 'build'))
    ap.add_argument('--out', default=os.path.join(ROOT, 'BENCHMARKS.md'))
    ap.add_argument('--plots', default=os.path.join(ROOT, 'bench', 'compare', 'results'))
    args = ap.parse_args()
    lib = os.path.join(args.build, 'bindings', 'c', 'libsluice.so')
    if not os.path.exists(lib):
        sys.exit(f'compare.py: {lib} not found: build first (ninja -C {args.build})')
    env = dict(os.environ, SLUICE_LIBRARY=lib,
               PYTHONPATH=os.pathsep.join([os.path.join(ROOT, 'bindings', 'python'), HERE]))
    os.environ.update(env)
    # After SLUICE_LIBRARY is set: it imports sluice. One nginx set-up, one curl reference.
    from cold_first_sample import curl_all_time, start_nginx
    work = tempfile.mkdtemp(prefix='sluice-compare-')
    nginx = None
    try:
        www = os.path.join(work, 'www')
        data, files = os.path.join(www, 'data'), os.path.join(work, 'files')
        print(f'writing {args.samples} samples x {args.size} B ...', file=sys.stderr)
        shards = write_dataset(data, files, args.samples, args.size, args.shard_bytes)
        sizes = [os.path.getsize(os.path.join(data, s)) for s in shards]
        stored = sum(sizes)
        nginx, port = start_nginx(www, work)
        url = f'http://127.0.0.1:{port}/data'
        c = Contenders(args, work, env)
        src = mosaic_source()
        mosaic_note = 'not importable: left out'
        if src is not None:
            c.mosaic_src = src
            try:
                c.python('mosaic', data)
                mosaic_note = (f'{registry_peers.pins()["mosaicml-streaming"]} from the '
                               f'package registry (bench/python/peers.txt)')
            except RuntimeError as e:
                print(f'mosaicml-streaming failed, left out: {e}', file=sys.stderr)
                src = None
        warm_cache = c.fresh()
        c.cpp(data, warm_cache)  # fills it
        page = ' '.join(os.path.join(data, s) for s in shards)
        plan = {
            'cold-folder': [('Sluice C++ (sluice bench)', lambda: c.cpp(data)),
                            ('Sluice Python', lambda: c.python('sluice', data)),
                            ('mosaicml-streaming', lambda: c.python('mosaic', data)) if src is not None else None,
                            ('reference: cp of the shards', lambda: (lambda d: (timed(f'cp {page} {d}'), shutil.rmtree(d))[0])(c.fresh()))],
            'cold-http': [('Sluice C++ (sluice bench)', lambda: c.cpp(url)),
                          ('Sluice Python', lambda: c.python('sluice', url)),
                          ('reference: curl, 4 parallel', lambda: curl_all_time([f'{url}/{s}' for s in shards], work))],
            'warm-local': [('Sluice C++ (sluice bench)', lambda: c.cpp(data, warm_cache)),
                           ('Sluice Python', lambda: c.python('sluice', '', data)),
                           ('mosaicml-streaming', lambda: c.python('mosaic', '', data)) if src is not None else None,
                           ('PyTorch Dataset over files', lambda: c.python('files', '', files)),
                           ('reference: cat of the shards', lambda: timed(f'cat {page} > /dev/null'))],
        }
        times = {w: {name: [] for name, _ in filter(None, rows)} for w, rows in plan.items()}
        for r in range(args.runs):
            print(f'run {r + 1} of {args.runs}', file=sys.stderr)
            for w, rows in plan.items():
                for name, fn in filter(None, rows):
                    times[w][name].append(fn())
        report_json, timeseries_png = None, None
        os.makedirs(args.plots, exist_ok=True)
        # One `sluice bench` run with its plot: 2 workers, shuffled in blocks
        # of about 2 shards, a cache half the dataset's size (at least 3
        # shards: one per reader and one to spare), so the cache occupancy
        # curve says something. (With Mosaic's default block of 262,144
        # samples every prefetch window spans every shard and a cache of half
        # the dataset thrashes: `--plan-only` predicts that before it happens.)
        timeseries_png = os.path.join(args.plots, 'bench_timeseries.png')
        block = 2 * max(1, args.samples * max(sizes) // max(1, stored))  # samples in ~2 shards
        job = ['--batch-size', str(BATCH), '--workers', '2', '--shuffle', '--shuffle-block-size', str(block),
               '--cache-limit', str(max(stored // 2, 3 * max(sizes)))]
        bench_table = run([c.sluice, 'bench', url] + job + ['--interval', '0.02', '--plot', timeseries_png], env)
        plan_table = run([c.sluice, 'bench', url, '--plan-only'] + job, env)
        bench_cmd = f'sluice bench URL {" ".join(job)}'
        plan_rows = plan_against_runs(c.sluice, work, env)
    finally:
        if nginx is not None:
            nginx.terminate()
            nginx.wait()
        shutil.rmtree(work)
    compare_png = os.path.join(args.plots, 'compare.png')
    plotted = plot(times, args, compare_png)
    write_markdown(args, times, stored, len(shards), mosaic_note, plotted, compare_png, timeseries_png,
                   bench_table, plan_table, bench_cmd, plan_rows)
    print(f'wrote {args.out}', file=sys.stderr)


def plot(times, args, png):
    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError:
        print('matplotlib is not installed (Debian: python3-matplotlib): no compare.png', file=sys.stderr)
        return False
    gb = args.samples * args.size / 1e9
    fig, axes = plt.subplots(1, len(times), figsize=(4 * len(times), 4.2))
    for ax, (w, rows) in zip(axes, times.items()):
        names = list(rows)
        med = [gb / statistics.median(rows[n]) for n in names]
        lo = [m - gb / max(rows[n]) for m, n in zip(med, names)]
        hi = [gb / min(rows[n]) - m for m, n in zip(med, names)]
        ax.bar(range(len(names)), med, yerr=[lo, hi], capsize=3,
               color=['tab:blue' if 'Sluice' in n else 'tab:gray' if 'reference' in n else 'tab:orange' for n in names])
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels([n.replace(' (sluice bench)', '').replace('reference: ', 'ref: ') for n in names],
                           rotation=30, ha='right', fontsize=8)
        ax.set_title(w)
        ax.set_ylabel('GB/s of sample bytes (median, min-max)')
    fig.tight_layout()
    fig.savefig(png, dpi=70)
    return True


def write_markdown(args, times, stored, nshards, mosaic_note, plotted, compare_png, timeseries_png,
                   bench_table, plan_table, bench_cmd, plan_rows):
    gb = args.samples * args.size / 1e9
    rel = lambda p: os.path.relpath(p, os.path.dirname(os.path.abspath(args.out)))
    L = ['# Benchmarks', '',
         'Generated by `/usr/bin/python3 bench/compare/compare.py` (after `ninja -C build`); '
         'do not edit by hand. Options used: '
         f'`--samples {args.samples} --size {args.size} --shard-bytes {args.shard_bytes} --runs {args.runs}`.', '',
         '## Method', '',
         f'One MDS dataset of {args.samples:,} samples x {args.size:,} B (columns `id: int`, `data: bytes`, '
         f'uncompressed, no hashes) in {nshards} shards, {stored / 1e6:.1f} MB stored, written by '
         "sluice's MDSWriter, plus the same payloads as one file per sample. Every contender reads one "
         'epoch (in order, batch_size 256) in a fresh process and, for the cold workloads, into a fresh '
         'cache folder; each consumer reads every byte of every sample (the C++ rig sums them, the Python '
         'consumers sum them with numpy). Times run from constructing the dataset (after imports) to the '
         'last sample; for Sluice C++ they are `sluice bench`\'s `wall_s`, from forking its one worker '
         f'process (which opens the dataset) to its last sample. The {args.runs} runs are interleaved: run i of every contender, then run i + 1. '
         'The ratio column divides each contender\'s time by Sluice C++\'s time in the same run, '
         'then takes the median, min and max of those ratios (> 1: slower than Sluice C++).', '',
         '- **cold-folder**: the remote is a local folder, copied shard by shard into the cache. '
         'Reference: `cp` of the shard files into an empty folder.',
         '- **cold-http**: the remote is nginx on 127.0.0.1. Reference: `curl` fetching every shard, '
         '4 transfers at a time (bench/python/cold_first_sample.py\'s `curl_all_time`).',
         '- **warm-local**: everything in the page cache. Sluice C++ reads its warm cache folder; '
         'Sluice Python and mosaicml-streaming read the folder in place (`local=` only); the plain '
         'PyTorch baseline is a `torch.utils.data.Dataset` opening one file per sample through a '
         '`DataLoader` (no workers). Reference: `cat` of the shard files to /dev/null.',
         f'- mosaicml-streaming: {mosaic_note}. It runs with Debian\'s numpy and torch; `transformers`, '
         'which `streaming.base.dataloader` imports but nothing here calls, is a stub that raises if '
         'called (bench/compare/mosaic_stubs.py). Mosaic has no `http://` remote, so it is not in cold-http.',
         '', '## Machine', '', '| | |', '| --- | --- |']
    L += [f'| {k} | {v} |' for k, v in machine()]
    L += ['', 'The machine is shared (2 cores, other builds running), so absolute figures are noisy; '
          'the ratios within a run are the steadier numbers.', '', '## Results', '']
    for w, rows in times.items():
        base = rows['Sluice C++ (sluice bench)']
        L += [f'### {w}', '', '| contender | samples/s, median (min - max) | GB/s, median | '
              'time / Sluice C++ time, median (min - max) |', '| --- | --- | --- | --- |']
        for name, xs in rows.items():
            ratios = [x / b for x, b in zip(xs, base)]
            L.append(f'| {name} | {spread([args.samples / x for x in xs], lambda v: f"{v:,.0f}")} | '
                     f'{gb / statistics.median(xs):.3f} | {spread(ratios, lambda v: f"{v:.2f}")} |')
        L.append('')
    if plotted:
        L += [f'![GB/s per contender]({rel(compare_png)})', '']
    L += ['## One `sluice bench` run and its prediction', '',
          f'`{bench_cmd}` against the same nginx (cache_limit half the stored dataset), and '
          '`--plan-only` for the same job (bindings/cli/bench/bench_plan.h states its model: exact egress '
          'without cache_limit, an estimate with one).', '', '```', bench_table.rstrip(), '```', '',
          '```', plan_table.rstrip(), '```', '']
    if plotted and timeseries_png and os.path.exists(timeseries_png):
        L += [f'![sluice bench time series]({rel(timeseries_png)})', '']
    nplan, limit, rows = plan_rows
    L += ['## Sizing a job with `--plan-only`', '',
          f'A dataset of 2,000 samples x 4 KiB in {nplan} shards read from a local folder by '
          f'`sluice bench DIR --batch-size 32 --workers 2 --shuffle --shuffle-block-size BLOCK '
          f'--cache-limit {limit}` (half the dataset): egress predicted by `--plan-only` against the '
          'median of 3 runs. With Mosaic\'s default block of 262,144 samples every prefetch window '
          'spans every shard and the cache thrashes; the prediction says so before anything is downloaded.',
          '', '| shuffle block | predicted egress | run egress (median of 3) | run / predicted |',
          '| --- | --- | --- | --- |']
    L += [f'| {b:,} | {p / 1e6:.1f} MB | {r / 1e6:.1f} MB | {x:.2f} |' for b, p, r, x in rows]
    L.append('')
    with open(args.out, 'w') as f:
        f.write('\n'.join(L))


if __name__ == '__main__':
    main()
