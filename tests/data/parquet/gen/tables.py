"""The fixtures' contents: deterministic Arrow tables, the same for the same arguments under every pyarrow.

Values come from Python's own `random.Random` with fixed seeds (not numpy), so the old and the new
pyarrow venvs build identical tables. Edge values (type limits, NaN, -0.0, empty and non-BMP
strings) are placed at fixed rows so the expected files show them.
"""
import decimal
import random

import pyarrow as pa

PA_MAJOR = int(pa.__version__.split(".")[0])


def _nulls_at(values, rows):
    return [None if i in rows else v for i, v in enumerate(values)]


def _ints(rng, n, lo, hi):
    edges = [lo, hi, 0, -1 if lo < 0 else 1]
    return edges + [rng.randint(lo, hi) for _ in range(n - len(edges))]


def _floats(rng, n, with_specials=True):
    specials = [float("nan"), float("inf"), float("-inf"), -0.0, 0.0, 1.5] if with_specials else []
    return specials + [round(rng.uniform(-1e6, 1e6), 3) for _ in range(n - len(specials))]


def _text(rng, lo, hi):
    words = ["alpha", "beta", "gamma", "δέλτα", "数据", "emoji😀", "", "tab\tsep", "x" * 40]
    return " ".join(rng.choice(words) for _ in range(rng.randint(lo, hi)))


def _bytes(rng, lo, hi):
    return bytes(rng.getrandbits(8) for _ in range(rng.randint(lo, hi)))


def scalar_types_table(n=48, seed=1, float16=True, sub_microsecond_ns=True):
    """Every physical type and the logical types a training set uses; some nulls in each column.

    Without sub_microsecond_ns the ns columns hold whole microseconds: pyarrow 12's default format
    2.4 stores ns as microseconds and refuses to drop digits."""
    rng = random.Random(seed)
    null_rows = {3, 17, n - 1}
    base_ms = 1_700_000_000_000
    cols = {}
    cols["bool"] = [i % 3 == 0 for i in range(n)]
    for name, lo, hi in [("int8", -128, 127), ("int16", -32768, 32767), ("int32", -2**31, 2**31 - 1),
                         ("int64", -2**63, 2**63 - 1), ("uint8", 0, 255), ("uint16", 0, 65535),
                         ("uint32", 0, 2**32 - 1), ("uint64", 0, 2**64 - 1)]:
        cols[name] = pa.array(_nulls_at(_ints(rng, n, lo, hi), null_rows), type=getattr(pa, name)())
    if float16:
        halfs = [float("nan"), float("inf"), -0.0, 65504.0, 6.103515625e-05, 5.960464477539063e-08] + \
                [rng.randint(-2048, 2048) / 16 for _ in range(n - 6)]
        cols["float16"] = pa.array(_nulls_at(halfs, null_rows), type=pa.float16()) if PA_MAJOR >= 15 else None
    # Float32 values are chosen exactly representable so pyarrow and DuckDB print them alike.
    f32 = [float("nan"), float("-inf"), -0.0, 3.4028234663852886e+38, 1.401298464324817e-45] + \
          [rng.randint(-10**6, 10**6) / 64 for _ in range(n - 5)]
    cols["float32"] = pa.array(_nulls_at(f32, null_rows), type=pa.float32())
    cols["float64"] = pa.array(_nulls_at(_floats(rng, n), null_rows), type=pa.float64())
    strings = ["", "a", "😀 non-BMP", "\x00nul inside"] + [_text(rng, 0, 6) for _ in range(n - 4)]
    cols["string"] = pa.array(_nulls_at(strings, null_rows), type=pa.string())
    cols["large_string"] = pa.array(_nulls_at(list(reversed(strings)), null_rows), type=pa.large_string())
    blobs = [b"", b"\x00", b"\xff" * 3] + [_bytes(rng, 0, 24) for _ in range(n - 3)]
    cols["binary"] = pa.array(_nulls_at(blobs, null_rows), type=pa.binary())
    cols["large_binary"] = pa.array(_nulls_at(list(reversed(blobs)), null_rows), type=pa.large_binary())
    cols["fixed_size_binary"] = pa.array(_nulls_at([_bytes(rng, 16, 16) for _ in range(n)], null_rows),
                                         type=pa.binary(16))
    # Timestamps are whole microseconds where a reader could keep only microseconds (ms columns
    # whole milliseconds); the ns columns carry sub-microsecond digits on purpose.
    ms = [base_ms + rng.randint(-10**11, 10**11) for _ in range(n)]
    ms[0], ms[1] = 0, -1  # the epoch and just before it
    us = [v * 1000 + rng.randint(0, 999) for v in ms]
    ns = [v * 1000 + rng.randint(0, 999) for v in us]
    if not sub_microsecond_ns:
        ns = [v // 1000 * 1000 for v in ns]
    for unit, vals in [("ms", ms), ("us", us), ("ns", ns)]:
        cols["ts_" + unit] = pa.array(_nulls_at(vals, null_rows), type=pa.timestamp(unit))
        cols["ts_" + unit + "_utc"] = pa.array(_nulls_at(vals, null_rows), type=pa.timestamp(unit, tz="UTC"))
    cols["ts_us_tz_ny"] = pa.array(_nulls_at(us, null_rows), type=pa.timestamp("us", tz="America/New_York"))
    days = [0, -1, 19000, -719162] + [rng.randint(-30000, 30000) for _ in range(n - 4)]
    cols["date32"] = pa.array(_nulls_at(days, null_rows), type=pa.date32())
    d9 = [decimal.Decimal(rng.randint(-10**9 + 1, 10**9 - 1)).scaleb(-2) for _ in range(n)]
    d9[0] = decimal.Decimal("9999999.99")
    d9[1] = decimal.Decimal("-0.01")
    cols["decimal_9_2"] = pa.array(_nulls_at(d9, null_rows), type=pa.decimal128(9, 2))
    d18 = [decimal.Decimal(rng.randint(-10**18 + 1, 10**18 - 1)).scaleb(-6) for _ in range(n)]
    cols["decimal_18_6"] = pa.array(_nulls_at(d18, null_rows), type=pa.decimal128(18, 6))
    d38 = [decimal.Decimal(rng.randint(-10**38 + 1, 10**38 - 1)).scaleb(-10) for _ in range(n)]
    d38[0] = decimal.Decimal("9" * 28 + "." + "9" * 10)
    d38[1] = decimal.Decimal("-" + "9" * 28 + "." + "9" * 10)
    cols["decimal_38_10"] = pa.array(_nulls_at(d38, null_rows), type=pa.decimal128(38, 10))
    return pa.table({k: v for k, v in cols.items() if v is not None})


def nulls_table(n=40):
    """Nullable columns with nulls at the start, the middle, the end, everywhere and nowhere,
    beside required (non-nullable) columns."""
    ints = list(range(n))
    schema = pa.schema([
        pa.field("required_int32", pa.int32(), nullable=False),
        pa.field("required_string", pa.string(), nullable=False),
        pa.field("nulls_at_start", pa.int64()),
        pa.field("nulls_in_middle", pa.float64()),
        pa.field("nulls_at_end", pa.string()),
        pa.field("all_null_int32", pa.int32()),
        pa.field("all_null_string", pa.string()),
        pa.field("no_nulls_nullable", pa.int32()),
        pa.field("alternating_bool", pa.bool_()),
    ])
    data = [
        ints,
        ["r%d" % i for i in ints],
        [None if i < 7 else i * 1000 for i in ints],
        [None if 15 <= i < 25 else i / 4 for i in ints],
        [None if i >= n - 9 else "v%d" % i for i in ints],
        [None] * n,
        [None] * n,
        [i - 20 for i in ints],
        [None if i % 2 else i % 4 == 0 for i in ints],
    ]
    return pa.table([pa.array(d, type=f.type) for d, f in zip(data, schema)], schema=schema)


def lists_table(n=40, seed=2, null_embedding=True):
    """List shapes: null lists, empty lists, null elements, large_list, fixed_size_list, nesting.

    pyarrow 12 cannot write a null fixed_size_list (null_embedding=False for it)."""
    rng = random.Random(seed)

    def int_list(i):
        if i % 7 == 3:
            return None
        if i % 5 == 1:
            return []
        return [None if (i + j) % 6 == 0 else rng.randint(-1000, 1000) for j in range(rng.randint(1, 6))]

    def str_list(i):
        if i % 9 == 4:
            return None
        if i % 4 == 2:
            return []
        return [None if (i + j) % 5 == 0 else _text(rng, 0, 2) for j in range(rng.randint(1, 4))]

    def nested(i):
        if i % 8 == 5:
            return None
        return [None if k == 1 and i % 3 == 0 else [rng.randint(0, 99) for _ in range(rng.randint(0, 3))]
                for k in range(rng.randint(0, 3))]

    embeddings = [None if i == 11 and null_embedding else [rng.randint(-512, 512) / 256 for _ in range(8)] for i in range(n)]
    schema = pa.schema([
        pa.field("id", pa.int32(), nullable=False),
        pa.field("int_list", pa.list_(pa.int32())),
        pa.field("string_list", pa.list_(pa.string())),
        pa.field("large_int64_list", pa.large_list(pa.int64())),
        pa.field("embedding", pa.list_(pa.float32(), 8)),
        pa.field("nested_int_list", pa.list_(pa.list_(pa.int32()))),
        pa.field("required_elements", pa.list_(pa.field("element", pa.float64(), nullable=False))),
    ])
    data = [
        list(range(n)),
        [int_list(i) for i in range(n)],
        [str_list(i) for i in range(n)],
        [None if i == 0 else [2**40 + i * k for k in range(i % 4)] for i in range(n)],
        embeddings,
        [nested(i) for i in range(n)],
        [None if i % 10 == 9 else [i + k / 8 for k in range(i % 3)] for i in range(n)],
    ]
    return pa.table([pa.array(d, type=f.type) for d, f in zip(data, schema)], schema=schema)


def timestamp_lists_table(n=24, seed=6):
    """Lists of ns timestamps, written as INT96 (Spark's lists of timestamps): null and empty lists,
    one row with a null element, and a list of lists. Whole microseconds so that DuckDB agrees."""
    rng = random.Random(seed)

    def stamp():
        return rng.randint(-2**40, 2**50) * 1000

    def flat(i):
        if i % 7 == 2:
            return None
        if i % 5 == 4:
            return []
        return [None if i == 13 and j == 1 else stamp() for j in range(rng.randint(1, 4))]

    def nested(i):
        if i % 6 == 5:
            return None
        return [[stamp() for _ in range(rng.randint(0, 2))] for _ in range(rng.randint(0, 3))]

    schema = pa.schema([
        pa.field("id", pa.int32(), nullable=False),
        pa.field("ts_list", pa.list_(pa.timestamp("ns"))),
        pa.field("ts_utc_list", pa.list_(pa.timestamp("ns", tz="UTC"))),
        pa.field("nested_ts_list", pa.list_(pa.list_(pa.timestamp("ns")))),
    ])
    data = [list(range(n)), [flat(i) for i in range(n)], [flat(i + 1) for i in range(n)],
            [nested(i) for i in range(n)]]
    return pa.table([pa.array(d, type=f.type) for d, f in zip(data, schema)], schema=schema)


def null_elements_table(n=36, seed=7):
    """Lists of every fixed-width kind whose elements are null in some rows: a null element first,
    last, alone, all of a list's elements null; beside null lists, empty lists and rows without a
    null element. Nested lists and a fixed_size_list with null elements too."""
    rng = random.Random(seed)

    def shaped(i, value):
        if i % 9 == 4:
            return None
        if i % 7 == 5:
            return []
        size = 1 + (i * 5) % 6
        if i % 4 == 1:  # a row without a null element
            return [value() for _ in range(size)]
        if i % 11 == 6:  # every element null
            return [None] * size
        nulls = {0} if i % 3 == 0 else {size - 1} if i % 3 == 1 else {j for j in range(size) if j % 2}
        return [None if j in nulls else value() for j in range(size)]

    def nested(i):
        if i % 8 == 3:
            return None
        return [None if k == 1 and i % 3 == 0 else
                [None if (i + j) % 4 == 0 else rng.randint(-99, 99) for j in range(rng.randint(0, 3))]
                for k in range(rng.randint(0, 3))]

    schema = pa.schema([
        pa.field("id", pa.int32(), nullable=False),
        pa.field("int32_list", pa.list_(pa.int32())),
        pa.field("int64_list", pa.large_list(pa.int64())),
        pa.field("uint8_list", pa.list_(pa.uint8())),
        pa.field("float32_list", pa.list_(pa.float32())),
        pa.field("float64_list", pa.list_(pa.float64())),
        pa.field("bool_list", pa.list_(pa.bool_())),
        pa.field("ts_us_utc_list", pa.list_(pa.timestamp("us", tz="UTC"))),
        pa.field("date_list", pa.list_(pa.date32())),
        pa.field("embedding", pa.list_(pa.float32(), 4)),
        pa.field("nested_int32_list", pa.list_(pa.list_(pa.int32()))),
    ])
    day = __import__("datetime").date
    data = [
        list(range(n)),
        [shaped(i, lambda: rng.randint(-2**31, 2**31 - 1)) for i in range(n)],
        [shaped(i + 1, lambda: rng.randint(-2**63, 2**63 - 1)) for i in range(n)],
        [shaped(i + 2, lambda: rng.randint(0, 255)) for i in range(n)],
        [shaped(i + 3, lambda: rng.randint(-4096, 4096) / 64) for i in range(n)],
        [shaped(i + 4, lambda: rng.randint(-10**9, 10**9) / 1024) for i in range(n)],
        [shaped(i + 5, lambda: rng.random() < 0.5) for i in range(n)],
        [shaped(i + 6, lambda: rng.randint(-2**40, 2**50)) for i in range(n)],
        [shaped(i + 7, lambda: day.fromordinal(rng.randint(1, 800000))) for i in range(n)],
        [None if i % 10 == 7 else [None if (i + j) % 5 == 0 else rng.randint(-512, 512) / 256
                                   for j in range(4)] for i in range(n)],
        [nested(i) for i in range(n)],
    ]
    return pa.table([pa.array(d, type=f.type) for d, f in zip(data, schema)], schema=schema)


def small_mixed_table(n=60, seed=3):
    """A few common columns, for the compression and page-checksum files."""
    rng = random.Random(seed)
    return pa.table({
        "id": pa.array(range(n), type=pa.int64()),
        "label": pa.array([rng.choice(["cat", "dog", "bird", None]) for _ in range(n)], type=pa.string()),
        "score": pa.array([None if i % 13 == 0 else rng.randint(-10**6, 10**6) / 1024 for i in range(n)],
                          type=pa.float64()),
        "text": pa.array([_text(rng, 1, 12) for _ in range(n)], type=pa.string()),
        "tokens": pa.array([[rng.randint(0, 50000) for _ in range(rng.randint(0, 9))] for _ in range(n)],
                           type=pa.list_(pa.int32())),
    })


def encodings_table(n=300, seed=4):
    """Columns for the DELTA and BYTE_STREAM_SPLIT files: sorted and random ints (with wrap-around
    deltas between the type's limits), strings sharing prefixes, floats."""
    rng = random.Random(seed)
    i32 = [rng.randint(-2**31, 2**31 - 1) for _ in range(n)]
    i32[5], i32[6], i32[7] = -2**31, 2**31 - 1, -2**31  # deltas that overflow 32 bits
    i64 = [rng.randint(-2**63, 2**63 - 1) for _ in range(n)]
    i64[5], i64[6], i64[7] = -2**63, 2**63 - 1, -2**63
    sorted64 = sorted(rng.randint(0, 10**12) for _ in range(n))
    urls = ["https://example.org/datasets/shard-%05d/part-%03d.parquet" % (i // 7, i % 7) for i in range(n)]
    words = [_text(rng, 0, 4) for _ in range(n)]
    return pa.table({
        "int32_random": pa.array(_nulls_at(i32, {0, 100, n - 1}), type=pa.int32()),
        "int32_constant": pa.array([7] * n, type=pa.int32()),
        "int64_random": pa.array(_nulls_at(i64, {50}), type=pa.int64()),
        "int64_sorted": pa.array(sorted64, type=pa.int64()),
        "string_prefixed": pa.array(_nulls_at(urls, {9, 200}), type=pa.string()),
        "string_words": pa.array(words, type=pa.string()),
        "binary_prefixed": pa.array([u.encode()[:20 + i % 30] for i, u in enumerate(urls)], type=pa.binary()),
        "float32": pa.array(_nulls_at([rng.randint(-2**20, 2**20) / 8 for _ in range(n)], {3}),
                            type=pa.float32()),
        "float64": pa.array(_nulls_at(_floats(rng, n), {4}), type=pa.float64()),
        "fixed_size_binary": pa.array([_bytes(rng, 6, 6) for _ in range(n)], type=pa.binary(6)),
    })


def hf_text_table(n=64, seed=5):
    """Shaped like a tokenized Hugging Face text dataset: `text` and its `input_ids`."""
    rng = random.Random(seed)
    texts = [_text(rng, 5, 60) for _ in range(n)]
    ids = [[rng.randint(0, 50256) for _ in range(rng.randint(8, 200))] for _ in range(n)]
    return pa.table({"text": pa.array(texts, type=pa.string()),
                     "input_ids": pa.array(ids, type=pa.list_(pa.int32()))})
