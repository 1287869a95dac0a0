"""Raw files through StreamingFileDataset from a loopback nginx, cold (empty
cache) and warm (cache full), beside `curl` fetching the same files with the
same concurrency and a plain PyTorch map-style dataset that opens each local
file (the ImageFolder pattern), in files/s and MB/s.

    SLUICE_LIBRARY=build/bindings/c/libsluice.so PYTHONPATH=bindings/python \\
        /usr/bin/python3 bench/python/file_dataset_bench.py [--files N] [--size BYTES] \\
        [--runs R] [--workers W]

Defaults: 10,000 files of 100 KiB (the raw-files issue's workload), 3 runs,
6 DataLoader workers (file_dataloader's default) and 6 parallel curl
transfers. Each run is a fresh process; prints the median, min and max.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from cold_first_sample import start_nginx

# The child: one whole epoch through file_dataloader (or in one process
# with workers 0), bytes per file, timed from construction.
CHILD = r'''
import sys, time
from sluice.file_dataset import StreamingFileDataset, file_dataloader
url, cache, workers = sys.argv[1], sys.argv[2], int(sys.argv[3])
t0 = time.perf_counter()
ds = StreamingFileDataset(remote=url, local=cache, manifest='files.txt', output='bytes',
                          batch_size=32, shuffle=True, shuffle_seed=1)
n = total = 0
if workers:
    for batch in file_dataloader(ds, num_workers=workers):
        n += len(batch)
        total += sum(map(len, batch))
else:
    for b in ds:
        n += 1
        total += len(b)
print(n, total, time.perf_counter() - t0)
'''

# The reference: a map-style dataset over the local files, read by a
# DataLoader with the same workers (page cache warm).
IMAGEFOLDER = r'''
import os, sys, time
import torch.utils.data as tud
root, workers = sys.argv[1], int(sys.argv[2])
class Files(tud.Dataset):
    def __init__(self, root):
        self.paths = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs
                            if f.endswith('.bin'))
    def __len__(self):
        return len(self.paths)
    def __getitem__(self, i):
        with open(self.paths[i], 'rb') as f:
            return f.read()
t0 = time.perf_counter()
ds = Files(root)
extra = {'prefetch_factor': 4} if workers else {}
loader = tud.DataLoader(ds, batch_size=32, shuffle=True, num_workers=workers,
                        collate_fn=lambda b: b, **extra)
n = total = 0
for batch in loader:
    n += len(batch)
    total += sum(map(len, batch))
print(n, total, time.perf_counter() - t0)
'''


def write_files(root, files, size):
    payload = os.urandom(size)
    lines = []
    for i in range(files):
        rel = f'part{i % 16:02d}/f{i:06d}.bin'
        os.makedirs(os.path.join(root, os.path.dirname(rel)), exist_ok=True)
        with open(os.path.join(root, rel), 'wb') as f:
            f.write(payload[i % 97:] + payload[:i % 97])
        lines.append(f'{{"path": "{rel}", "size": {size}}}')
    with open(os.path.join(root, 'files.txt'), 'w') as f:
        f.write('\n'.join(lines) + '\n')
    return [line.split('"')[3] for line in lines]


def run_child(code, *args):
    out = subprocess.run([sys.executable, '-c', code, *map(str, args)], capture_output=True,
                         text=True, env=os.environ)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    n, total, seconds = out.stdout.strip().splitlines()[-1].split()
    return int(n), int(total), float(seconds)


def curl_time(base, rels, work, parallel):
    """Every file by `parallel` concurrent curl transfers (connections reused)."""
    cfg = os.path.join(work, 'curl.cfg')
    out = os.path.join(work, 'curl-out')
    os.makedirs(out, exist_ok=True)
    with open(cfg, 'w') as f:
        for i, rel in enumerate(rels):
            f.write(f'url = "{base}/{rel}"\noutput = "{out}/{i}.bin"\n')
    t = time.perf_counter()
    subprocess.run(['curl', '-sf', '--no-progress-meter', '-Z', '--parallel-max', str(parallel),
                    '-K', cfg], check=True)
    dt = time.perf_counter() - t
    shutil.rmtree(out)
    return dt


def line(name, seconds, files, size):
    med = statistics.median(seconds)
    return (f'{name:<44} {files / med:9.0f} files/s {files * size / med / 1e6:8.1f} MB/s   '
            f'(median {med:.2f} s, min {min(seconds):.2f}, max {max(seconds):.2f})')


def measure(args, base, rels, www, work, rows):
    """Interleaves the contenders run by run, each a fresh process; appends
    seconds to rows[name]."""
    for _ in range(args.runs):
        for workers in (0, args.workers):
            cache = tempfile.mkdtemp(dir=work)
            n, total, cold = run_child(CHILD, base, cache, workers)
            assert n == args.files and total == args.files * args.size, (n, total)
            _, _, warm = run_child(CHILD, base, cache, workers)
            shutil.rmtree(cache)
            rows.setdefault(f'sluice cold, {workers} workers', []).append(cold)
            rows.setdefault(f'sluice warm, {workers} workers', []).append(warm)
        rows.setdefault(f'curl, {args.workers} parallel transfers', []).append(
            curl_time(base, rels, work, args.workers))
        for workers in (0, args.workers):
            n, _, t = run_child(IMAGEFOLDER, os.path.join(www, 'ds'), workers)
            assert n == args.files
            rows.setdefault(f'torch map-style over local files, {workers} workers',
                            []).append(t)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--files', type=int, default=10000)
    ap.add_argument('--size', type=int, default=100 << 10)
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--workers', type=int, default=6)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix='sluice-files-')
    try:
        www = os.path.join(work, 'www')
        rels = write_files(os.path.join(www, 'ds'), args.files, args.size)
        proc, port = start_nginx(www, work)
        base = f'http://127.0.0.1:{port}/ds'
        rows = {}
        try:
            measure(args, base, rels, www, work, rows)
        finally:
            proc.kill()
            proc.wait()
        print(f'{args.files} files of {args.size} bytes from loopback nginx, '
              f'{args.runs} runs, {os.cpu_count()} cores')
        for name, seconds in rows.items():
            print(line(name, seconds, args.files, args.size))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    main()
