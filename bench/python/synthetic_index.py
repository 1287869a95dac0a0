#!/usr/bin/env python3
"""Writes a pretraining-size Mosaic MDS index.json with no shard files.

The planner, `sluice inspect` and `sluice bench --plan-only` read only the
index, so an index alone measures opening and planning at a size no disk
here could hold: `--shards 1000000 --samples-per-shard 4000` is 4B samples
in a 434 MB index (issue 38's table). Every shard is a zstd MDS shard of two
columns (`tokens` ndarray:int32, `id` int64), as a tokenised pretraining set
is; the byte counts are plausible, not checked by anything that reads only
the index.

    python3 bench/python/synthetic_index.py OUT_DIR --shards N --samples-per-shard S
"""
import argparse
import json
import os


def shard_entry(i, samples, raw_bytes, zip_bytes):
    return {
        "column_encodings": ["ndarray:int32", "int64"],
        "column_names": ["tokens", "id"],
        "column_sizes": [None, 8],
        "compression": "zstd",
        "format": "mds",
        "hashes": [],
        "raw_data": {"basename": f"shard.{i:07d}.mds", "bytes": raw_bytes, "hashes": {}},
        "samples": samples,
        "size_limit": 67108864,
        "version": 2,
        "zip_data": {"basename": f"shard.{i:07d}.mds.zstd", "bytes": zip_bytes, "hashes": {}},
    }


def write_index(out_dir, shards, samples_per_shard):
    os.makedirs(out_dir, exist_ok=True)
    raw = min(67108864, 16384 * samples_per_shard)
    path = os.path.join(out_dir, "index.json")
    # Streamed shard by shard: a million entries as one Python list would
    # cost gigabytes before the first byte is written.
    with open(path + ".tmp", "w") as f:
        f.write('{"shards": [')
        for i in range(shards):
            if i:
                f.write(", ")
            f.write(json.dumps(shard_entry(i, samples_per_shard, raw, raw // 3)))
        f.write('], "version": 2}')
    os.replace(path + ".tmp", path)
    return path


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out_dir")
    p.add_argument("--shards", type=int, required=True)
    p.add_argument("--samples-per-shard", type=int, required=True)
    a = p.parse_args()
    if a.shards < 1 or a.samples_per_shard < 1:
        p.error("--shards and --samples-per-shard must be at least 1")
    path = write_index(a.out_dir, a.shards, a.samples_per_shard)
    print(f"{path}: {a.shards} shards x {a.samples_per_shard} samples = "
          f"{a.shards * a.samples_per_shard} samples, {os.path.getsize(path)} bytes")


if __name__ == "__main__":
    main()
