"""Parquet decoding throughput, one core, warm page cache (issue 34, Benchmark).

The same rows read five ways:
  sluice-parquet  Sluice's Parquet reader (DatasetReader over the file:
                  every row group decoded, every field of every row read)
  sluice-mds      Sluice's MDS path over the same rows (`sluice convert`)
  pyarrow-table   pyarrow.parquet.read_table(path, use_threads=False)
  pyarrow-batches ParquetFile(path).iter_batches(use_threads=False)
  duckdb          SELECT * FROM read_parquet(path), fetched as Arrow (to_arrow_table), threads=1

Datasets (written once by pyarrow with its defaults: snappy, dictionary on):
  binary_1k       1 KiB random binary rows
  binary_256k     256 KiB random binary rows
  text_tokens     a string `text` and a list<int32> `input_ids` per row

Every run is pinned to one core (taskset -c CPU). Rows/s and MB/s (of the
rows' field bytes, the same number for every reader) are medians of 3 timed
passes after one untimed pass.

Usage, with a Python that has pyarrow and duckdb (e.g. the venv that
tests/data/parquet/make_fixtures.py builds from its pinned requirements):
  VENV/bin/python bench/python/parquet_read_bench.py \
      --build build [--dir /tmp/sluice-parquet-bench] [--scale 1.0] [--cpu 0]
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time


def write_datasets(root, scale):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = random.Random(34)
    specs = {
        "binary_1k": (int(100_000 * scale), lambda i: {"data": rng.randbytes(1024)}),
        "binary_256k": (int(400 * scale), lambda i: {"data": rng.randbytes(256 * 1024)}),
        "text_tokens": (
            int(50_000 * scale),
            lambda i: {
                "text": " ".join(rng.choice(("alpha", "beta", "gamma", "delta", "token", "word"))
                                 for _ in range(rng.randint(20, 200))),
                "input_ids": [rng.randrange(50_000) for _ in range(rng.randint(8, 512))],
            },
        ),
    }
    paths = {}
    for name, (rows, make) in specs.items():
        folder = os.path.join(root, name)
        path = os.path.join(folder, "data.parquet")
        paths[name] = path
        if os.path.exists(path):
            continue
        os.makedirs(folder, exist_ok=True)
        records = [make(i) for i in range(rows)]
        if name == "text_tokens":
            schema = pa.schema([("text", pa.string()), ("input_ids", pa.list_(pa.int32()))])
        else:
            schema = pa.schema([("data", pa.binary())])
        table = pa.Table.from_pylist(records, schema=schema)
        pq.write_table(table, path + ".tmp")
        os.rename(path + ".tmp", path)
    return paths


def timed(fn, passes=3):
    fn()  # warm: page cache, imports
    seconds = []
    for _ in range(passes):
        start = time.perf_counter()
        fn()
        seconds.append(time.perf_counter() - start)
    return seconds


def pyarrow_table(path):
    import pyarrow.parquet as pq
    return lambda: pq.read_table(path, use_threads=False)


def pyarrow_batches(path):
    import pyarrow.parquet as pq

    def run():
        for _ in pq.ParquetFile(path).iter_batches(use_threads=False):
            pass
    return run


def duckdb_scan(path):
    import duckdb
    con = duckdb.connect()
    con.execute("SET threads=1")
    return lambda: con.execute("SELECT * FROM read_parquet(?)", [path]).to_arrow_table()


def sluice_run(bench, path, cpu):
    out = subprocess.run(["taskset", "-c", str(cpu), bench, path, "--passes=3"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--dir", default="/tmp/sluice-parquet-bench")
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--cpu", type=int, default=0)
    args = ap.parse_args()
    os.sched_setaffinity(0, {args.cpu})
    import pyarrow as pa
    pa.set_cpu_count(1)
    pa.set_io_thread_count(1)

    bench = os.path.join(args.build, "bench/parquet/parquet_read_bench")
    sluice = os.path.join(args.build, "bindings/cli/sluice")
    paths = write_datasets(args.dir, args.scale)
    rows_out = []
    for name, path in paths.items():
        mds = os.path.join(os.path.dirname(path), "mds")
        if not os.path.exists(os.path.join(mds, "index.json")):
            subprocess.run([sluice, "convert", path, mds], check=True, capture_output=True)
        pq_run = sluice_run(bench, path, args.cpu)
        mds_run = sluice_run(bench, mds, args.cpu)
        rows, nbytes = pq_run["rows"], pq_run["bytes"]
        results = {
            "sluice-parquet": pq_run["seconds"],
            "sluice-mds": mds_run["seconds"],
            "pyarrow-table": timed(pyarrow_table(path)),
            "pyarrow-batches": timed(pyarrow_batches(path)),
            "duckdb": timed(duckdb_scan(path)),
        }
        for reader, seconds in results.items():
            s = statistics.median(seconds)
            rows_out.append((name, reader, rows, nbytes, s))
    print(f"{'dataset':<12} {'reader':<16} {'rows':>8} {'MB':>8} {'rows/s':>12} {'MB/s':>9}")
    for name, reader, rows, nbytes, s in rows_out:
        print(f"{name:<12} {reader:<16} {rows:>8} {nbytes / 1e6:>8.1f} {rows / s:>12.0f} "
              f"{nbytes / 1e6 / s:>9.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
