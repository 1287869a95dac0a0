"""The Python MDS writer on many small rows: seconds to write `--rows` rows
of {id: int, text: str, vec: ndarray (dtype and shape in each field), grid:
ndarray:uint8:4,4} through sluice.MDSWriter, and to decode every `vec`
field again through the column's encoding (the header each ndarray field
carries is the engine's to write and read). Prints the median of
`--repeats` runs of each.

    SLUICE_LIBRARY=build/bindings/c/libsluice.so PYTHONPATH=bindings/python \
        /usr/bin/python3 bench/python/writer_rows_bench.py [--rows N] [--repeats R]
"""
import argparse
import os
import shutil
import statistics
import tempfile
import time

import numpy as np

import sluice
from sluice.mds_encodings import get_coder


def rows(n):
    rng = np.random.default_rng(0)
    vecs = [rng.integers(0, 1000, size=1 + i % 7, dtype=np.int32) for i in range(64)]
    grid = np.arange(16, dtype=np.uint8).reshape(4, 4)
    return [{'id': i, 'text': f'sample {i}', 'vec': vecs[i % 64], 'grid': grid}
            for i in range(n)]


def write_once(folder, data):
    columns = {'id': 'int', 'text': 'str', 'vec': 'ndarray', 'grid': 'ndarray:uint8:4,4'}
    start = time.perf_counter()
    with sluice.MDSWriter(out=folder, columns=columns) as w:
        for row in data:
            w.write(row)
    return time.perf_counter() - start


def decode_once(fields):
    enc = get_coder('ndarray')
    start = time.perf_counter()
    for f in fields:
        enc.decode(f)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--rows', type=int, default=100_000)
    parser.add_argument('--repeats', type=int, default=3)
    args = parser.parse_args()
    data = rows(args.rows)
    enc = get_coder('ndarray')
    fields = [enc.encode(r['vec']) for r in data]
    root = tempfile.mkdtemp(prefix='sluice_writer_rows_')
    try:
        writes, decodes = [], []
        for i in range(args.repeats):
            writes.append(write_once(os.path.join(root, str(i)), data))
            decodes.append(decode_once(fields))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f'write {args.rows} rows: median {statistics.median(writes):.3f} s '
          f'(runs {", ".join(f"{t:.3f}" for t in writes)})')
    print(f'decode {args.rows} ndarray fields: median {statistics.median(decodes):.3f} s '
          f'(runs {", ".join(f"{t:.3f}" for t in decodes)})')


if __name__ == '__main__':
    main()
