"""The DataLoader path against a bare map-style reference (issue 24, item 4).

Writes one MDS dataset per sample size (columns id:int, data:bytes, 64 MiB
shards), then times, each run in a fresh process, contenders interleaved,
medians of 3:
  sluice  sluice.StreamingDataset(local=...)
  bare    a map-style torch Dataset over the same shards: np.memmap of each
          shard, sample bytes sliced by the shard's offset table (the floor a
          streaming loader over MDS can reach under the same DataLoader)
  bare_tuned  bare, with glibc's malloc thresholds raised as Sluice's
          package raises them (sluice/malloc_tuning.py): the reference to
          hold Sluice to under the DataLoader (see below)
  mosaic  streaming.StreamingDataset, the registry's release (registry_peers.py)
          or a checkout (--mosaic-src); bench/compare/mosaic_stubs.py
  floor   under the DataLoader only: an IterableDataset that reads nothing and
          yields each worker's share of {'id': int, 'data': a fresh bytes of
          the sample size}, the batches the others send: what the DataLoader
          itself costs (collate, pickling, the worker queues, tensor sharing),
          which no reader can go below
in one process (`for sample in ds`) and under
DataLoader(num_workers=W, batch_size=16) with the default collate, in order;
and batch mode (no Python object per sample), in one process and under
DataLoader(batch_size=None, num_workers=W):
  sluice  ds.iter_batches(N) / ColumnBatches(ds, N): columns as numpy arrays
          (sluice.column_batches)
  bare    the floor: one memcpy of each batch's contiguous bytes in the
          memmapped shard (its fields' lengths read vectorized)

Large samples under the DataLoader: the main process unpickles every batch
(16 x 256 KiB) into fresh heap memory, about 8 MiB freed per batch, and
glibc's dynamic thresholds settle at a 4 MiB mmap threshold and an 8 MiB trim
threshold: at that edge, depending on what else the heap holds, every batch
is given back to the kernel and faulted in again or never is (gdb's `p mp_`
in both states; 20k against 280k-480k main-process page faults, 3,500
against 2,500-3,100 samples/s, from run to run, for either reader). Sluice's
package raises the thresholds (docs/configuration.rst), so `bare_tuned` is
the reference to hold it to; `bare` shows what an untuned process gets.

    SLUICE_LIBRARY=build/bindings/c/libsluice.so.4 PYTHONPATH=bindings/python \
        /usr/bin/python3 bench/python/bench_loader.py [--mosaic-src DIR] [--runs 3]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

import registry_peers

HERE = os.path.dirname(os.path.abspath(__file__))

CHILD = r'''
import json, os, sys, time
import numpy as np
import torch.utils.data as tud
kind, mode, folder, mosaic_src, workers, batch, big_batch = sys.argv[1:8]
workers, batch, big_batch = int(workers), int(batch), int(big_batch)


class Bare(tud.Dataset):
    """Map-style MDS reader: memmapped shards, offsets from each shard's header."""
    def __init__(self, folder):
        index = json.load(open(os.path.join(folder, 'index.json')))
        self.shards, self.starts, n = [], [], 0
        for s in index['shards']:
            self.shards.append((os.path.join(folder, s['raw_data']['basename']), s))
            self.starts.append(n)
            n += s['samples']
        self.n = n
        self.maps = {}

    def __len__(self):
        return self.n

    def _shard(self, k):
        m = self.maps.get(k)
        if m is None:  # opened lazily: in each worker, after the fork
            path, info = self.shards[k]
            data = np.memmap(path, np.uint8, 'r')
            count = int(data[:4].view(np.uint32)[0])
            offsets = data[4:4 + 4 * (count + 1)].view(np.uint32)
            m = self.maps[k] = (data, offsets, info)
        return m

    def __getitem__(self, i):
        k = np.searchsorted(self.starts, i, 'right') - 1
        data, offsets, info = self._shard(k)
        j = i - self.starts[k]
        raw = data[offsets[j]:offsets[j + 1]]
        sizes = info['column_sizes']
        var = [c for c, s in enumerate(sizes) if s is None]
        lens = raw[:4 * len(var)].view(np.uint32)
        pos, out = 4 * len(var), {}
        for c, (name, enc) in enumerate(zip(info['column_names'], info['column_encodings'])):
            size = sizes[c] if sizes[c] is not None else int(lens[var.index(c)])
            field = raw[pos:pos + size]
            pos += size
            out[name] = int(field.view(np.int64)[0]) if enc == 'int' else field.tobytes()
        return out


class BareBatches(tud.Dataset):
    """The batch-mode floor: batch i is one memcpy of its samples' contiguous
    bytes in the memmapped shard, their bytes column's lengths read
    vectorized (each sample starts with that uint32)."""
    def __init__(self, bare, size):
        self.bare = bare
        self.spans = [(k, j0, min(j0 + size, info['samples']))
                      for k, (_, info) in enumerate(bare.shards)
                      for j0 in range(0, info['samples'], size)]

    def __len__(self):
        return len(self.spans)

    def __getitem__(self, i):
        k, j0, j1 = self.spans[i]
        data, offsets, _ = self.bare._shard(k)
        raw = np.array(data[offsets[j0]:offsets[j1]])  # the copy
        lens = raw[(offsets[j0:j1] - offsets[j0])[:, None] + np.arange(4)].view('<u4')
        return {'raw': raw, 'samples': j1 - j0, 'bytes': int(lens.sum())}


class Floor(tud.IterableDataset):
    """Samples shaped as the dataset's, made without reading anything."""
    def __init__(self, samples, size):
        self.samples, self.payload = samples, bytes(size)

    def __iter__(self):
        info = tud.get_worker_info()  # None in the main process (--workers 0)
        worker, workers = (info.id, info.num_workers) if info else (0, 1)
        for i in range(worker, self.samples, workers):
            yield {'id': i, 'data': bytes(bytearray(self.payload))}  # a fresh object each


def usage():
    """(CPU seconds of this process's threads and its exited (joined)
    workers, of this process alone, this process's page faults)."""
    import resource
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    main = own.ru_utime + own.ru_stime
    return main + kids.ru_utime + kids.ru_stime, main, own.ru_minflt


t0 = time.perf_counter()
batched = mode in ('batch', 'loader_batch')
if kind == 'sluice':
    import sluice
    # Batch mode's batch is the device batch (it sizes the prefetch window).
    ds = sluice.StreamingDataset(local=folder, batch_size=big_batch if batched else batch)
elif kind == 'mosaic':
    sys.path.insert(0, sys.argv[8])
    from mosaic_stubs import import_streaming
    streaming, _ = import_streaming(mosaic_src or None)
    ds = streaming.StreamingDataset(local=folder, batch_size=batch)
else:
    ds = Bare(folder)
    if kind == 'bare_tuned':
        from sluice import malloc_tuning
        assert malloc_tuning.tune()
    if kind == 'floor':
        ds = Floor(len(ds), len(ds[0]['data']))
n = total = 0
u0 = usage()
t = time.perf_counter()
if batched and kind == 'sluice':
    from sluice.column_batches import ColumnBatches
    batches = ds.iter_batches(big_batch) if mode == 'batch' else \
        tud.DataLoader(ColumnBatches(ds, big_batch), batch_size=None, num_workers=workers)
    for b in batches:
        n += len(b['id'])
        total += int(b['data'].offsets[-1])
elif batched:
    batches = BareBatches(ds, big_batch)
    if mode == 'loader_batch':
        batches = tud.DataLoader(batches, batch_size=None, num_workers=workers)
    for b in batches:
        n += int(b['samples'])
        total += int(b['bytes'])
elif mode == 'direct':
    it = ds if not kind.startswith('bare') else (ds[i] for i in range(len(ds)))
    for s in it:
        n += 1
        total += len(s['data'])
else:
    for b in tud.DataLoader(ds, batch_size=batch, num_workers=workers):
        n += len(b['id'])
        total += sum(len(x) for x in b['data'])
dt = time.perf_counter() - t
u1 = usage()
print(json.dumps({'n': n, 'bytes': total, 's': dt, 'cpu': u1[0] - u0[0],
                  'main_cpu': u1[1] - u0[1], 'main_faults': u1[2] - u0[2]}))
'''


def write(folder, samples, size):
    import numpy as np
    import sluice
    payload = np.random.default_rng(0).integers(0, 256, size=size, dtype=np.uint8).tobytes()
    with sluice.MDSWriter(out=folder, columns={'id': 'int', 'data': 'bytes'},
                          size_limit=1 << 26) as w:
        for i in range(samples):
            w.write({'id': i, 'data': payload})


def run(kind, mode, folder, mosaic_src, workers, batch, big_batch):
    p = subprocess.run([sys.executable, '-c', CHILD, kind, mode, folder, mosaic_src or '',
                        str(workers), str(batch), str(big_batch),
                        os.path.join(HERE, '..', 'compare')],
                       capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError(f'{kind} {mode} over {folder} exited {p.returncode}:\n{p.stderr}')
    out = p.stdout
    import json
    return json.loads(out.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--workers', type=int, default=2)
    ap.add_argument('--batch', type=int, default=16)
    ap.add_argument('--mosaic-src', default=None, help='a mosaicml/streaming checkout instead '
                    'of the registry\'s release (peers.txt)')
    ap.add_argument('--sizes', default='1024:200000,262144:8000', help='BYTES:SAMPLES,...')
    ap.add_argument('--contenders', default='sluice,bare,bare_tuned,floor,mosaic')
    ap.add_argument('--modes', default='direct,loader,batch,loader_batch')
    ap.add_argument('--big-batch', type=int, default=1024, help='samples per batch, batch mode')
    args = ap.parse_args()
    kinds = args.contenders.split(',')
    if 'mosaic' in kinds and not args.mosaic_src:
        args.mosaic_src = registry_peers.site_packages()
    root = tempfile.mkdtemp(prefix='sluice_bench_loader_')
    try:
        # The machine may be shared: CPU seconds per sample (this process,
        # its threads and its DataLoader workers; each cell's "us CPU", the
        # median) compare when wall time is noisy; "main" is this process's
        # share, with its page faults (see the note on the heap above).
        refs = [k for k in ('bare', 'bare_tuned') if k in kinds and 'sluice' in kinds]
        print(f'| samples | mode | ' + ' | '.join(kinds) +
              ''.join(f' | sluice / {r} | {r} / sluice CPU per sample' for r in refs) + ' |')
        print('| --- | --- | ' + ' | '.join('---' for _ in kinds + refs + refs) + ' |')
        for spec in args.sizes.split(','):
            size, samples = (int(x) for x in spec.split(':'))
            folder = os.path.join(root, f'ds{size}')
            write(folder, samples, size)
            for mode in args.modes.split(','):
                modal = [k for k in kinds if ('batch' not in mode or k != 'mosaic') and
                         (mode == 'loader' or k != 'floor')]
                rates = {k: [] for k in modal}
                cpus = {k: [] for k in modal}
                main_cpus = {k: [] for k in modal}
                faults = {k: [] for k in modal}
                for _ in range(args.runs):
                    for k in modal:  # interleaved
                        r = run(k, mode, folder, args.mosaic_src, args.workers, args.batch,
                                args.big_batch)
                        assert r['n'] == samples and r['bytes'] == samples * size, (k, r)
                        rates[k].append(samples / r['s'])
                        cpus[k].append(r['cpu'])
                        main_cpus[k].append(r['main_cpu'])
                        faults[k].append(r['main_faults'])
                med = {k: statistics.median(v) for k, v in rates.items()}
                label = {'direct': 'one process',
                         'batch': f'batch mode, one process (batches of {args.big_batch})',
                         'loader_batch': f'batch mode, DataLoader({args.workers} workers, '
                                         f'batches of {args.big_batch})'}.get(
                    mode, f'DataLoader({args.workers} workers, batch {args.batch})')
                ratios = ''.join(
                    f" | {med['sluice'] / med[r]:.0%} | "
                    f"{statistics.median(cpus[r]) / statistics.median(cpus['sluice']):.0%}"
                    if r in med and 'sluice' in med else ' | - | -' for r in refs)
                cells = ' | '.join(f'{med[k]:,.0f}/s ({min(rates[k]):,.0f}-{max(rates[k]):,.0f}), '
                                   f'{statistics.median(cpus[k]) / samples * 1e6:.1f} us CPU '
                                   f'(main {statistics.median(main_cpus[k]) / samples * 1e6:.1f}), '
                                   f'{statistics.median(faults[k]) / 1e3:,.0f}k main faults '
                                   f'({min(faults[k]) / 1e3:,.0f}k-{max(faults[k]) / 1e3:,.0f}k)'
                                   if k in med else '-' for k in kinds)
                print(f'| {samples:,} x {size} B | {label} | {cells}{ratios} |',
                      flush=True)
    finally:
        shutil.rmtree(root)


if __name__ == '__main__':
    main()
