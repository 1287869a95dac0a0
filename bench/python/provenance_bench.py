"""What provenance costs the batch path: samples/s iterating one epoch of a
local MDS dataset (an int and a 64-byte bytes column) with iter_batches,
with provenance not asked (with_ids=False) and asked (with_ids=True, each
batch's 'sample_id', what sample_origins reads), interleaved in one
process. Prints each mode's median of `--repeats` runs and every run, per
wall-clock second and per CPU second of the process (all its threads:
steadier than the wall clock on a loaded machine).

    SLUICE_LIBRARY=build/bindings/c/libsluice.so.4 PYTHONPATH=bindings/python \\
        /usr/bin/python3 bench/python/provenance_bench.py [--samples N] [--repeats 3]

Run it against another build (SLUICE_LIBRARY and PYTHONPATH of that tree)
to compare the path with provenance never asked between builds.
"""
import argparse
import os
import shutil
import statistics
import tempfile
import time

import sluice


def write(folder, n):
    with sluice.MDSWriter(out=folder, columns={'value': 'int', 'payload': 'bytes'}) as w:
        for v in range(n):
            w.write({'value': v, 'payload': v.to_bytes(8, 'little') * 8})


def rate(folder, with_ids):
    ds = sluice.StreamingDataset(local=folder, batch_size=256, shuffle=True, shuffle_seed=17,
                                 num_canonical_nodes=1)
    t, cpu = time.perf_counter(), time.process_time()
    n = 0
    for batch in ds.iter_batches(with_ids=with_ids):
        n += len(batch['value'])
    return n / (time.perf_counter() - t), n / (time.process_time() - cpu), n


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--samples', type=int, default=1_000_000)
    parser.add_argument('--repeats', type=int, default=3)
    args = parser.parse_args()
    root = tempfile.mkdtemp(prefix='provenance_bench_')
    try:
        folder = os.path.join(root, 'data')
        write(folder, args.samples)
        rate(folder, False)  # warm the page cache and the library
        runs = {False: [], True: []}
        for _ in range(args.repeats):
            for with_ids in (False, True):
                wall, cpu, n = rate(folder, with_ids)
                assert n == args.samples, n
                runs[with_ids].append((wall, cpu))
        for with_ids, name in ((False, 'not asked'), (True, 'asked')):
            for k, unit in ((0, 'wall'), (1, 'CPU')):
                rs = [r[k] for r in runs[with_ids]]
                print(f'provenance {name:9}: median {statistics.median(rs) / 1e6:.3f} M samples per {unit} '
                      f'second (runs: {", ".join(f"{r / 1e6:.3f}" for r in rs)})')
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == '__main__':
    main()
