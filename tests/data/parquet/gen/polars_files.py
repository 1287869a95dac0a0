"""Fixtures written by Polars' own Parquet writer (not pyarrow's: use_pyarrow stays False)."""
import datetime
import decimal
import os
import random


def _frame(pl, n=50, seed=7):
    rng = random.Random(seed)
    epoch = datetime.datetime(1970, 1, 1)
    utc = datetime.timezone.utc
    stamps = [epoch + datetime.timedelta(microseconds=rng.randint(-10**15, 4 * 10**15)) for _ in range(n)]
    return pl.DataFrame({
        "id": pl.Series(range(n), dtype=pl.Int64),
        "int8": pl.Series([None if i % 10 == 4 else rng.randint(-128, 127) for i in range(n)], dtype=pl.Int8),
        "int16": pl.Series([rng.randint(-32768, 32767) for _ in range(n)], dtype=pl.Int16),
        "int32": pl.Series([rng.randint(-2**31, 2**31 - 1) for _ in range(n)], dtype=pl.Int32),
        "uint8": pl.Series([rng.randint(0, 255) for _ in range(n)], dtype=pl.UInt8),
        "uint16": pl.Series([rng.randint(0, 65535) for _ in range(n)], dtype=pl.UInt16),
        "uint32": pl.Series([rng.randint(0, 2**32 - 1) for _ in range(n)], dtype=pl.UInt32),
        "uint64": pl.Series([rng.randint(0, 2**64 - 1) for _ in range(n)], dtype=pl.UInt64),
        "flag": pl.Series([None if i % 7 == 0 else i % 2 == 0 for i in range(n)], dtype=pl.Boolean),
        "float32": pl.Series([rng.randint(-4096, 4096) / 32 for _ in range(n)], dtype=pl.Float32),
        "float64": pl.Series([None if i == n - 1 else rng.uniform(-1, 1) for i in range(n)], dtype=pl.Float64),
        "text": pl.Series([None if i % 6 == 5 else "polars row %d %s" % (i, "ü" * (i % 3)) for i in range(n)],
                          dtype=pl.String),
        "category_like": pl.Series([["train", "test", "validation"][i % 3] for i in range(n)], dtype=pl.String),
        "blob": pl.Series([bytes(rng.getrandbits(8) for _ in range(i % 9)) for i in range(n)], dtype=pl.Binary),
        "day": pl.Series([datetime.date(2000, 1, 1) + datetime.timedelta(days=rng.randint(-9000, 9000))
                          for _ in range(n)], dtype=pl.Date),
        "ts_ms": pl.Series([s.replace(microsecond=s.microsecond // 1000 * 1000) for s in stamps],
                           dtype=pl.Datetime("ms")),
        "ts_us": pl.Series(stamps, dtype=pl.Datetime("us")),
        "ts_ns_utc": pl.Series([s.replace(tzinfo=utc) for s in stamps], dtype=pl.Datetime("ns", "UTC")),
        "dec_10_3": pl.Series([decimal.Decimal(rng.randint(-10**10 + 1, 10**10 - 1)).scaleb(-3) for _ in range(n)],
                              dtype=pl.Decimal(10, 3)),
        "dec_38_8": pl.Series([decimal.Decimal(rng.randint(-10**38 + 1, 10**38 - 1)).scaleb(-8) for _ in range(n)],
                              dtype=pl.Decimal(38, 8)),
        "int_list": pl.Series([None if i % 8 == 3 else [] if i % 8 == 4 else
                               [None if j == 2 else rng.randint(0, 1000) for j in range(i % 5 + 1)]
                               for i in range(n)], dtype=pl.List(pl.Int32)),
        "string_list": pl.Series([None if i % 9 == 0 else ["a%d" % i, None, ""][: i % 4] for i in range(n)],
                                 dtype=pl.List(pl.String)),
        "embedding": pl.Series([[rng.randint(-64, 64) / 16 for _ in range(4)] for _ in range(n)],
                               dtype=pl.Array(pl.Float32, 4)),
        "nested_list": pl.Series([None if i % 5 == 2 else [[i], [], [i, -i]] for i in range(n)],
                                 dtype=pl.List(pl.List(pl.Int32))),
    })


def write_all(out, manifest):
    import polars as pl
    df = _frame(pl)
    for name, kwargs in [
        ("polars_default", {}),
        ("polars_lz4_row_groups", {"compression": "lz4", "row_group_size": 16, "data_page_size": 256,
                                   "statistics": False}),
        ("polars_uncompressed", {"compression": "uncompressed"}),
    ]:
        df.write_parquet(os.path.join(out, name + ".parquet"), **kwargs)
        shown = ", ".join("%s=%r" % kv for kv in sorted(kwargs.items()))
        manifest[name + ".parquet"] = {"writer": "polars %s DataFrame.write_parquet(%s)" % (pl.__version__, shown)}
