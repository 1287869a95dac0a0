"""Packed token throughput: tokens/s into numpy rows of `seq_len` from a
local text + token-ids MDS dataset, through sluice.StreamingDataset(pack=...)
(the engine packs), beside the same dataset unpacked (samples' token arrays
only) and beside LLM Foundry-style packing in Python over Sluice's samples
(ConcatTokensDataset's rule: a list buffer extended per document, rows cut
off its front). One process, then a torch DataLoader with workers. Prints
the median of `--repeats` runs of each (rows one by one, and as whole
batches through iter_batches / ColumnBatches), and bin packing's padding
against concat's.

    SLUICE_LIBRARY=build/bindings/c/libsluice.so PYTHONPATH=bindings/python \
        /usr/bin/python3 bench/python/pack_bench.py [--docs N] [--seq-len L] [--workers W]
"""
import argparse
import os
import shutil
import statistics
import tempfile
import time

import numpy as np

import sluice

EOS = 0


def write(folder, docs, mean_len):
    rng = np.random.default_rng(0)
    lengths = np.clip(rng.lognormal(np.log(mean_len), 0.8, size=docs), 1, 16 * mean_len)
    with sluice.MDSWriter(out=folder, columns={'text': 'str', 'tokens': 'ndarray:int32'}) as w:
        for n in lengths.astype(np.int64):
            toks = rng.integers(1, 50000, size=int(n), dtype=np.int32)
            w.write({'text': 'x' * (4 * int(n)), 'tokens': toks})
    return int(lengths.astype(np.int64).sum())


def foundry_rows(samples, seq_len):
    """LLM Foundry's ConcatTokensDataset loop over Sluice samples."""
    buffer = []
    for sample in samples:
        buffer = buffer + sample['tokens'].tolist() + [EOS]
        while len(buffer) >= seq_len:
            yield {'tokens': np.asarray(buffer[:seq_len], dtype=np.int64)}
            buffer = buffer[seq_len:]


def foundry_packed(folder, seq_len):
    """An IterableDataset packing a Sluice dataset's samples in Python."""
    from torch.utils.data import IterableDataset

    class FoundryPacked(IterableDataset):
        def __iter__(self):
            return foundry_rows(sluice.StreamingDataset(local=folder, batch_size=8), seq_len)
    return FoundryPacked()


def timed(make_iter, count):
    t = time.perf_counter()
    tokens = 0
    for item in make_iter():
        tokens += count(item)
    return tokens, time.perf_counter() - t


def row_tokens(row):
    return row['tokens'].size


def batch_tokens(batch):
    return batch['tokens'].numel() if hasattr(batch['tokens'], 'numel') else batch['tokens'].size


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--docs', type=int, default=20000)
    ap.add_argument('--mean-len', type=int, default=400)
    ap.add_argument('--seq-len', type=int, default=2048)
    ap.add_argument('--window', type=int, default=256)
    ap.add_argument('--workers', type=int, default=2)
    ap.add_argument('--repeats', type=int, default=3)
    args = ap.parse_args()
    root = tempfile.mkdtemp(prefix='sluice_pack_bench_')
    try:
        folder = os.path.join(root, 'mds')
        total = write(folder, args.docs, args.mean_len)
        print(f'dataset: {args.docs} documents, {total} tokens (+{args.docs} eos), '
              f'text + tokens (ndarray:int32); seq_len {args.seq_len}')
        spec = dict(column='tokens', seq_len=args.seq_len, eos_id=EOS)

        def packed(method):
            return lambda: sluice.StreamingDataset(local=folder, batch_size=64,
                                                   pack=dict(spec, method=method,
                                                             bin_window=args.window))

        def unpacked():
            return sluice.StreamingDataset(local=folder, batch_size=64)

        cases = [
            ('sluice pack=concat', lambda: iter(packed('concat')()), row_tokens),
            ('sluice pack=concat, iter_batches(64)',
             lambda: packed('concat')().iter_batches(64), batch_tokens),
            ('sluice pack=bin (tokens without padding)', lambda: iter(packed('bin')()),
             lambda r: int(np.count_nonzero(r['segment_ids']))),
            ('sluice unpacked (samples)', lambda: iter(unpacked()),
             lambda s: s['tokens'].size),
            ('foundry-style Python packer', lambda: foundry_rows(unpacked(), args.seq_len),
             row_tokens),
        ]
        if args.workers:
            from torch.utils.data import DataLoader

            def loader(ds):
                return lambda: iter(DataLoader(ds, batch_size=8, num_workers=args.workers))
            def column_batches(ds):
                from sluice.column_batches import ColumnBatches
                return lambda: iter(DataLoader(ColumnBatches(ds), batch_size=None,
                                               num_workers=args.workers))
            cases += [
                (f'DataLoader({args.workers} workers) sluice pack=concat',
                 lambda: loader(sluice.StreamingDataset(local=folder, batch_size=8,
                                                        pack=spec))(), batch_tokens),
                (f'DataLoader({args.workers} workers) ColumnBatches pack=concat',
                 lambda: column_batches(sluice.StreamingDataset(local=folder, batch_size=8,
                                                                pack=spec))(), batch_tokens),
                (f'DataLoader({args.workers} workers) foundry-style packer',
                 lambda: loader(foundry_packed(folder, args.seq_len))(), batch_tokens),
            ]
        for name, make, count in cases:
            runs = [timed(make, count) for _ in range(args.repeats)]
            tokens = runs[0][0]
            med = statistics.median(t for _, t in runs)
            print(f'{name:45s} {tokens / med / 1e6:8.1f} M tokens/s  '
                  f'({tokens} tokens, median {med:.3f} s of {args.repeats})')
        # Resume at half the epoch: time to the first row after
        # load_state_dict, beside reading that half.
        for method in ('concat', 'bin'):
            rows = sum(1 for _ in packed(method)())
            half = rows // 2
            ds = packed(method)()
            it = iter(ds)
            t = time.perf_counter()
            for _ in range(half):
                next(it)
            read_half = time.perf_counter() - t
            state = ds.state_dict(half, False)
            resumes = []
            for _ in range(args.repeats):
                again = packed(method)()
                again.load_state_dict(state)
                t = time.perf_counter()
                next(iter(again))
                resumes.append(time.perf_counter() - t)
            print(f'{method:6s} resume at row {half} of {rows}: first row after '
                  f'{statistics.median(resumes) * 1e3:.1f} ms (median of {args.repeats}); '
                  f'reading those rows took {read_half * 1e3:.1f} ms')
        # Padding: bin against concat (whose rows have none but the dropped tail).
        for method in ('concat', 'bin'):
            ds = packed(method)()
            rows = list(ds)
            pad = sum(int((r['segment_ids'] == 0).sum()) for r in rows) if method == 'bin' else 0
            print(f'{method:6s} rows {len(rows):7d}  padding {pad} tokens '
                  f'({100.0 * pad / (len(rows) * args.seq_len):.2f}% of row tokens), '
                  f'dropped tail {total + args.docs - len(rows) * args.seq_len + pad} tokens')
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == '__main__':
    main()
