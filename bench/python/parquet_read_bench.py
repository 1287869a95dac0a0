"""Parquet decoding throughput, one core, warm page cache (issue 34, Benchmark).

The same rows read these ways:
  sluice-parquet  Sluice's Parquet reader (DatasetReader over the file:
                  every row group decoded, every field of every row read)
  sluice-parquet-pieces  the same, a large value that straddles snappy
                  literals read from its pieces (a copying consumer's read)
  sluice-batch-pieces    the engine's batch path over the file's folder
                  (stream_batch_bench --pieces: next_batch, then each
                  column copied once into a batch buffer, as Python's batch
                  mode does)
  sluice-mds      Sluice's MDS path over the same rows (`sluice convert`)
  pyarrow-table   pyarrow.parquet.read_table(path, use_threads=False)
  pyarrow-batches ParquetFile(path).iter_batches(use_threads=False)
  duckdb          SELECT * FROM read_parquet(path), fetched as Arrow (to_arrow_table), threads=1

Datasets, each written once by pyarrow in two forms (--compression):
  binary_1k       1 KiB random binary rows
  binary_256k     256 KiB random binary rows
  text_tokens     a string `text` and a list<int32> `input_ids` per row
  snappy          pyarrow's defaults: snappy, dictionary on (folder NAME)
  none            uncompressed, PLAIN values, no dictionary (folder NAME_plain):
                  the like-for-like comparison with uncompressed MDS, where
                  Sluice hands out rows as views of the file's pages

Every run is pinned to one core (taskset -c CPU). Rows/s and MB/s (of the
rows' field bytes, the same number for every reader) are medians of 3 timed
passes after one untimed pass, the readers' passes taken in turn (round r
runs every reader's pass r: a swing in the machine's load falls on all of
them); "vs MDS" is a reader's rows/s over sluice-mds's on the same rows.

Usage, with a Python that has pyarrow and duckdb (e.g. the venv that
tests/data/parquet/make_fixtures.py builds from its pinned requirements):
  VENV/bin/python bench/python/parquet_read_bench.py \
      --build build [--dir /tmp/sluice-parquet-bench] [--scale 1.0] [--cpu 0]
      [--compression snappy,none] [--datasets binary_1k,binary_256k] [--cpu-time]

Before the readers run, every file they read (the Parquet file, the MDS
shards) is dropped from the page cache and read back (cache_alike).
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time


# Folder suffix and pq.write_table arguments of each --compression form.
FORMS = {
    "snappy": ("", {}),
    "none": ("_plain", {"compression": "NONE", "use_dictionary": False}),
}


def write_datasets(root, scale, forms):
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
        table = None  # the same rows for every form
        for form in forms:
            suffix, write_args = FORMS[form]
            folder = os.path.join(root, name + suffix)
            path = os.path.join(folder, "data.parquet")
            paths[name + suffix] = path
            if os.path.exists(path):
                continue
            os.makedirs(folder, exist_ok=True)
            if table is None:
                rng.seed(f"34/{name}")  # the same rows whichever forms exist already
                records = [make(i) for i in range(rows)]
                if name == "text_tokens":
                    schema = pa.schema([("text", pa.string()), ("input_ids", pa.list_(pa.int32()))])
                else:
                    schema = pa.schema([("data", pa.binary())])
                table = pa.Table.from_pylist(records, schema=schema)
            pq.write_table(table, path + ".tmp", **write_args)
            os.rename(path + ".tmp", path)
    return paths


def cache_alike(paths):
    """Puts each file into the page cache the same way: written back, dropped,
    and read again with 1 MiB read()s, as a file read from disk arrives.

    How a file entered the cache decides the size of its folios there: one
    written in large writes (`sluice convert`'s 64 MiB shards) is mapped 2 MiB
    at a time (MADV_HUGEPAGE), one written in pyarrow's small writes 64 KiB at
    a time, and the page faults of a pass differ tenfold (binary_1k: ~100
    against ~1,000), which is the readers' files, not their decoding.
    """
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            while os.read(fd, 1 << 20):
                pass
        finally:
            os.close(fd)


def timed(fn, passes=3, warm=True, clock=time.perf_counter):
    if warm:
        fn()  # warm: page cache, imports
    seconds = []
    for _ in range(passes):
        start = clock()
        fn()
        seconds.append(clock() - start)
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
    quoted = path.replace("'", "''")
    # con.sql(...).to_arrow_table(): no extra copy of the rows (the DB-API
    # result's would make one).
    return lambda: con.sql(f"SELECT * FROM read_parquet('{quoted}')").to_arrow_table()


def sluice_run(bench, path, cpu, *flags, cpu_time=False):
    out = subprocess.run(["taskset", "-c", str(cpu), bench, path, "--passes=1", *flags],
                         check=True, capture_output=True, text=True).stdout
    run = json.loads(out)
    if cpu_time:
        run["seconds"] = run["cpu_seconds"]
    return run


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--dir", default="/tmp/sluice-parquet-bench")
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--cpu", type=int, default=0)
    ap.add_argument("--compression", default="snappy,none",
                    help="the forms of the files, comma-separated: snappy (pyarrow's defaults), "
                         "none (uncompressed PLAIN, no dictionary)")
    ap.add_argument("--datasets", default="",
                    help="only these datasets, comma-separated (e.g. binary_1k,binary_256k); "
                         "default every one")
    ap.add_argument("--cpu-time", action="store_true",
                    help="time every reader by its process's CPU time (user and system, "
                         "time.process_time; the Sluice programs' cpu_seconds) instead of "
                         "wall-clock: steadier on a machine that other work keeps busy")
    args = ap.parse_args()
    forms = [f for f in args.compression.split(",") if f]
    for f in forms:
        if f not in FORMS:
            ap.error(f"--compression: unknown form {f!r} (known: {', '.join(FORMS)})")
    os.sched_setaffinity(0, {args.cpu})
    import pyarrow as pa
    pa.set_cpu_count(1)
    pa.set_io_thread_count(1)

    bench = os.path.join(args.build, "bench/parquet/parquet_read_bench")
    batch_bench = os.path.join(args.build, "bench/parquet/stream_batch_bench")
    sluice = os.path.join(args.build, "bindings/cli/sluice")
    paths = write_datasets(args.dir, args.scale, forms)
    rows_out = []
    only = {d for d in args.datasets.split(",") if d}
    for name, path in paths.items():
        if only and name not in only:
            continue
        mds = os.path.join(os.path.dirname(path), "mds")
        if not os.path.exists(os.path.join(mds, "index.json")):
            subprocess.run([sluice, "convert", path, mds], check=True, capture_output=True)
        cache_alike([path] + [os.path.join(mds, f) for f in sorted(os.listdir(mds))])
        # Each timed pass of every reader in turn (round r: every reader's
        # pass r), so that a swing in the machine's load falls on all of
        # them rather than on whichever ran then. A Sluice pass is a run of
        # the program (its own untimed warm-up pass, then one timed).
        others = {
            "pyarrow-table": pyarrow_table(path),
            "pyarrow-batches": pyarrow_batches(path),
            "duckdb": duckdb_scan(path),
        }
        for fn in others.values():
            fn()  # warm: page cache, imports
        # sluice-parquet-pieces: a large value that straddles snappy
        # literals read from its pieces, as a consumer that copies each value
        # (LocalDataset) reads it; sluice-parquet copies it into a scratch.
        results = {r: [] for r in ["sluice-parquet", "sluice-parquet-pieces",
                                   "sluice-batch-pieces", "sluice-mds", *others]}
        for _ in range(3):
            cpu_time = args.cpu_time
            pq_run = sluice_run(bench, path, args.cpu, cpu_time=cpu_time)
            results["sluice-parquet"] += pq_run["seconds"]
            results["sluice-parquet-pieces"] += sluice_run(bench, path, args.cpu, "--pieces",
                                                           cpu_time=cpu_time)["seconds"]
            results["sluice-batch-pieces"] += sluice_run(batch_bench, os.path.dirname(path),
                                                         args.cpu, "--pieces",
                                                         cpu_time=cpu_time)["seconds"]
            results["sluice-mds"] += sluice_run(bench, mds, args.cpu, cpu_time=cpu_time)["seconds"]
            clock = time.process_time if cpu_time else time.perf_counter
            for reader, fn in others.items():
                results[reader] += timed(fn, passes=1, warm=False, clock=clock)
        rows, nbytes = pq_run["rows"], pq_run["bytes"]
        for reader, seconds in results.items():
            s = statistics.median(seconds)
            rows_out.append((name, reader, rows, nbytes, s))
    # vs MDS: the reader's rows/s as a share of Sluice's MDS path's on the
    # same rows (issue 34's target for sluice-parquet: 80% on binary rows).
    mds_seconds = {name: s for name, reader, _, _, s in rows_out if reader == "sluice-mds"}
    print(f"{'dataset':<18} {'reader':<21} {'rows':>8} {'MB':>8} {'rows/s':>12} {'MB/s':>9} "
          f"{'vs MDS':>7}")
    for name, reader, rows, nbytes, s in rows_out:
        print(f"{name:<18} {reader:<21} {rows:>8} {nbytes / 1e6:>8.1f} {rows / s:>12.0f} "
              f"{nbytes / 1e6 / s:>9.1f} {mds_seconds[name] / s:>6.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
