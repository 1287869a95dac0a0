"""A `perf record` of a DataLoader pass split by process and thread: where a
pass's CPU goes when the threads have no names (the engine's open threads,
the workers' queue feeder threads and every main thread are all `python`).

    perf record -F 499 -e cpu-clock -g -o pass.data -- PYTHON parquet_loader_cpu.py ...
    perf script -i pass.data -F comm,pid,tid,ip,sym,dso > pass.txt
    python3 bench/python/perf_thread_split.py pass.txt

Prints, per process (most samples first) and per thread of it with at least
0.5% of all samples: its samples, the share of them whose leaf (the
sampled function) falls in each category below, and its top leaves. A
category is the first whose pattern matches the leaf's symbol or library;
Python's own frames have no symbols here, so they are `python` (the
interpreter) or their extension's library.
"""
import collections
import re
import sys

CATEGORIES = [
    ('parquet decode', r'sluice::parquet::|SnappyPieces|snappy::|libsnappy'),
    ('kernel page zeroing', r'clear_page'),
    ('other libsluice', r'libsluice'),
    ('memcpy', r'memmove|memcpy'),
    ('numpy', r'numpy|_multiarray'),
    ('ctypes', r'_ctypes|libffi'),
    ('python', r'python3'),
    ('kernel', r'kernel'),
]


def samples(lines):
    """(header line, frames) of each sample: frames leaf first."""
    head, frames = None, []
    for line in lines:
        line = line.rstrip('\n')
        if not line.strip():
            if head:
                yield head, frames
            head, frames = None, []
        elif not line[0].isspace():
            head, frames = line, []
        else:
            frames.append(line.strip().split(None, 1)[-1])
    if head:
        yield head, frames


def category(leaf):
    for name, pattern in CATEGORIES:
        if re.search(pattern, leaf):
            return name
    return 'other'


def main(path):
    per_thread = collections.Counter()
    process_of = {}
    leaves = collections.defaultdict(collections.Counter)
    with open(path, errors='replace') as f:
        for head, frames in samples(f):
            m = re.match(r'\s*\S+\s+(\d+)/(\d+)', head)
            if not m:
                continue
            pid, tid = int(m.group(1)), int(m.group(2))
            per_thread[tid] += 1
            process_of[tid] = pid
            leaf = re.sub(r'\+0x[0-9a-f]+', '', frames[0]) if frames else '?'
            leaves[tid][leaf] += 1
    total = sum(per_thread.values())
    per_process = collections.Counter()
    for tid, n in per_thread.items():
        per_process[process_of[tid]] += n
    print(f'{total} samples')
    for pid, n in per_process.most_common():
        print(f'process {pid}: {n} ({n / total:.1%})')
        threads = sorted((t for t in per_thread if process_of[t] == pid),
                         key=lambda t: -per_thread[t])
        for tid in threads:
            m = per_thread[tid]
            if m < total * 0.005:
                continue
            shares = collections.Counter()
            for leaf, k in leaves[tid].items():
                shares[category(leaf)] += k
            main_thread = ' (main thread)' if tid == pid else ''
            print(f'  thread {tid}{main_thread}: {m}')
            print('    ' + ', '.join(f'{c} {k / m:.0%}' for c, k in shares.most_common()))
            print('    top: ' + '; '.join(f'{leaf[:70]} {k}'
                                          for leaf, k in leaves[tid].most_common(5)))


if __name__ == '__main__':
    main(sys.argv[1])
