#!/usr/bin/env python3
"""One process reads a whole epoch of a big MDS dataset through the engine:
time and peak resident memory of the pass (IterationCursor's whole plan
against its windows, DatasetOptions::pass_window_ids).

The dataset is written once (reused when present): N samples of one
`uint8` column (1 byte each, so the shards cost 5 bytes a sample) in
uncompressed MDS shards of S samples. The pass hands out ids only
(sluice_stream_next_ids): the shards are opened and walked as for reading,
no sample is copied, so what is measured is the plan and the cursor.

    SLUICE_LIBRARY=build/bindings/c/libsluice.so.4 python3 bench/python/windowed_pass.py \\
        DIR --samples 100000000 --samples-per-shard 1000000 [--shuffle] [--pass-window-ids N]

Prints one line: samples, seconds (IterBegin to the last id), peak RSS and
a checksum of the ids in order (sum of position x id, mod 2^64): the same
for the whole plan and its windows.
"""
import argparse
import ctypes
import json
import os
import resource
import time

import numpy as np


def write_dataset(out_dir, samples, per_shard):
    index = os.path.join(out_dir, "index.json")
    if os.path.exists(index):
        return
    os.makedirs(out_dir, exist_ok=True)
    shards = []
    for i, start in enumerate(range(0, samples, per_shard)):
        n = min(per_shard, samples - start)
        entry = {"column_encodings": ["uint8"], "column_names": ["b"], "column_sizes": [1],
                 "compression": None, "format": "mds", "hashes": [], "size_limit": 1 << 30, "version": 2}
        # An MDS shard: the sample count, the offsets, the shard's config
        # (JSON) and the samples.
        config = json.dumps(entry, sort_keys=True).encode()
        header = 4 + 4 * (n + 1) + len(config)
        offsets = header + np.arange(n + 1, dtype=np.uint64)
        data = (np.arange(start, start + n, dtype=np.uint64) % 251).astype(np.uint8)
        name = f"shard.{i:05d}.mds"
        with open(os.path.join(out_dir, name), "wb") as f:
            f.write(np.uint32(n).tobytes())
            f.write(offsets.astype(np.uint32).tobytes())
            f.write(config)
            f.write(data.tobytes())
        shards.append(dict(entry, raw_data={"basename": name, "bytes": header + n, "hashes": {}}, samples=n,
                           zip_data=None))
    with open(index + ".tmp", "w") as f:
        json.dump({"shards": shards, "version": 2}, f)
    os.replace(index + ".tmp", index)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dir")
    p.add_argument("--samples", type=int, required=True)
    p.add_argument("--samples-per-shard", type=int, required=True)
    p.add_argument("--shuffle", action="store_true", help="py1e, one canonical node (else in order)")
    p.add_argument("--pass-window-ids", type=int, help="the engine's default when not given")
    p.add_argument("--batch", type=int, default=1 << 16)
    a = p.parse_args()
    write_dataset(a.dir, a.samples, a.samples_per_shard)
    lib = ctypes.CDLL(os.environ["SLUICE_LIBRARY"])
    lib.sluice_last_error.restype = ctypes.c_char_p
    config = {"local": a.dir, "batch_size": 16, "shuffle": a.shuffle, "num_canonical_nodes": 1,
              "prefetch_next_epoch": False, "predownload": 64,
              "world": {"rank": 0, "world_size": 1, "local_rank": 0, "local_world_size": 1}}
    if a.pass_window_ids is not None:
        config["pass_window_ids"] = a.pass_window_ids
    s = ctypes.c_void_p()

    def check(rc):
        if rc != 0:
            raise SystemExit(f"sluice error {rc}: {lib.sluice_last_error().decode()}")

    check(lib.sluice_stream_open(json.dumps(config).encode(), ctypes.byref(s)))
    ids = (ctypes.c_int64 * a.batch)()
    count = ctypes.c_uint32()
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.monotonic()
    check(lib.sluice_stream_iter_begin(s, ctypes.c_uint64(0), ctypes.c_uint64(0), ctypes.c_uint32(0),
                                       ctypes.c_uint32(1)))
    total, checksum = 0, 0
    while True:
        check(lib.sluice_stream_next_ids(s, ctypes.c_uint32(a.batch), ids, ctypes.byref(count)))
        if count.value == 0:
            break
        got = np.frombuffer(ids, dtype=np.int64, count=count.value).astype(np.uint64)
        weights = np.arange(total + 1, total + 1 + count.value, dtype=np.uint64)
        checksum = (checksum + int((got * weights).sum(dtype=np.uint64))) % (1 << 64)
        total += count.value
    elapsed = time.monotonic() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    lib.sluice_stream_close(s)
    print(f"samples {total} shuffle {a.shuffle} pass_window_ids {a.pass_window_ids} seconds {elapsed:.2f} "
          f"peak_rss_mb {peak / 1024:.0f} (before the pass {rss_before / 1024:.0f}) order_checksum {checksum}")


if __name__ == "__main__":
    main()
