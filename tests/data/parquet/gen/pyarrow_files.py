"""Fixtures written by pyarrow's own writer (run once in each pyarrow venv).

The file-name prefix is `pa<major>_`, so the two versions' defaults sit side by side
(pyarrow 12: format 2.4, non-compliant list naming `list.item`; newer: format 2.6, compliant
`list.element`, ns timestamps kept as ns).
"""
import io
import os
import random

import pyarrow as pa
import pyarrow.parquet as pq

from . import tables

MAJOR = tables.PA_MAJOR
CODECS = ["NONE", "SNAPPY", "GZIP", "ZSTD", "BROTLI", "LZ4"]  # pyarrow's "LZ4" writes LZ4_RAW


def _call(kwargs):
    shown = ", ".join("%s=%r" % kv for kv in sorted(kwargs.items()))
    return "pyarrow %s pq.write_table(%s)" % (pa.__version__, shown)


def _write(out, manifest, name, table, **kwargs):
    path = os.path.join(out, name + ".parquet")
    pq.write_table(table, path, **kwargs)
    manifest[name + ".parquet"] = {"writer": _call(kwargs)}


def _int_and_flba_bss_supported():
    # BYTE_STREAM_SPLIT for INT32/INT64/FIXED_LEN_BYTE_ARRAY came with pyarrow 16 (format 2.11).
    return MAJOR >= 16


def write_all(out, manifest):
    p = "pa%d_" % MAJOR
    new = MAJOR >= 15
    types = tables.scalar_types_table(float16=new, sub_microsecond_ns=new)
    _write(out, manifest, p + "types_v1_snappy", types, row_group_size=30)
    _write(out, manifest, p + "types_v2_zstd", types, row_group_size=30, data_page_version="2.0",
           compression="zstd")
    _write(out, manifest, p + "types_plain_uncompressed", types, use_dictionary=False, compression="NONE")

    nulls = tables.nulls_table()
    _write(out, manifest, p + "nulls_v1", nulls, row_group_size=25)
    _write(out, manifest, p + "nulls_v2", nulls, row_group_size=25, data_page_version="2.0")

    lists = tables.lists_table(null_embedding=new)
    _write(out, manifest, p + "lists_v1", lists, row_group_size=16)
    # Small pages so that lists cross page boundaries (v2 pages start at a row boundary).
    _write(out, manifest, p + "lists_v2_small_pages", lists, data_page_version="2.0", data_page_size=64,
           write_batch_size=8, compression="GZIP", use_dictionary=False)

    mixed = tables.small_mixed_table()
    if new:
        for codec in CODECS:
            _write(out, manifest, p + "codec_" + ("lz4_raw" if codec == "LZ4" else codec.lower()), mixed,
                   compression=codec)
        # One codec per column, on data page v2.
        per_column = dict(zip(mixed.column_names, ["BROTLI", "LZ4", "GZIP", "ZSTD", "SNAPPY"]))
        _write(out, manifest, p + "codecs_per_column_v2", mixed, compression=per_column, data_page_version="2.0")
        _write(out, manifest, p + "page_crc_v1", mixed, write_page_checksum=True, row_group_size=25)
        _write(out, manifest, p + "page_crc_v2", mixed, write_page_checksum=True, data_page_version="2.0",
               compression="ZSTD", use_dictionary=False)
        _write(out, manifest, p + "many_row_groups", mixed, row_group_size=7, data_page_size=128,
               write_batch_size=4, write_page_index=True)
        # A dictionary that outgrows its limit: the chunk falls back to PLAIN pages after the first.
        _write(out, manifest, p + "dictionary_fallback", tables.encodings_table(),
               dictionary_pagesize_limit=256, data_page_size=512, write_batch_size=16)
        _write(out, manifest, p + "decimal_as_integer", types.select(["decimal_9_2", "decimal_18_6"]),
               store_decimal_as_integer=True)

    enc = tables.encodings_table()
    if new:
        # PLAIN pages stored uncompressed, several to a chunk and nulls among their values: what
        # the reader hands out as views into the file's bytes (v1 and v2 pages).
        for version in ("1.0", "2.0"):
            _write(out, manifest, p + "plain_pages_v" + version[0], enc, use_dictionary=False,
                   compression="NONE", data_page_version=version, data_page_size=256,
                   write_batch_size=16)
    delta = {"int32_random": "DELTA_BINARY_PACKED", "int32_constant": "DELTA_BINARY_PACKED",
             "int64_random": "DELTA_BINARY_PACKED", "int64_sorted": "DELTA_BINARY_PACKED",
             "string_prefixed": "DELTA_BYTE_ARRAY", "string_words": "DELTA_LENGTH_BYTE_ARRAY",
             "binary_prefixed": "DELTA_BYTE_ARRAY"}
    if MAJOR >= 13:  # pyarrow 12 writes no DELTA_BYTE_ARRAY
        delta["fixed_size_binary"] = "DELTA_BYTE_ARRAY"
    else:
        for name in ("string_prefixed", "binary_prefixed"):
            delta[name] = "DELTA_LENGTH_BYTE_ARRAY"
    delta_cols = list(delta)
    _write(out, manifest, p + "delta_v1", enc.select(delta_cols), use_dictionary=False,
           column_encoding=delta, data_page_size=1024, write_batch_size=64)
    _write(out, manifest, p + "delta_v2", enc.select(delta_cols), use_dictionary=False,
           column_encoding=delta, data_page_version="2.0", compression="ZSTD", data_page_size=1024,
           write_batch_size=64)
    if new:  # stored uncompressed: DELTA_LENGTH_BYTE_ARRAY values are views, the others copies
        _write(out, manifest, p + "delta_uncompressed_v2", enc.select(delta_cols), use_dictionary=False,
               column_encoding=delta, data_page_version="2.0", compression="NONE", data_page_size=1024,
               write_batch_size=64)

    _write(out, manifest, p + "byte_stream_split_float", enc.select(["float32", "float64"]),
           use_dictionary=False, use_byte_stream_split=True)
    if _int_and_flba_bss_supported():
        bss_cols = ["float32", "float64", "int32_random", "int64_random", "fixed_size_binary"]
        bss = enc.select(bss_cols).append_column("float16", types.column("float16").take(
            [i % types.num_rows for i in range(enc.num_rows)]))
        _write(out, manifest, p + "byte_stream_split_all", bss, use_dictionary=False,
               column_encoding={c: "BYTE_STREAM_SPLIT" for c in bss.column_names}, data_page_version="2.0",
               compression="LZ4")

    # INT96 timestamps, as Spark and Impala wrote them; whole microseconds so that DuckDB agrees.
    int96 = types.select(["ts_us", "ts_us_utc", "ts_ms"]).cast(pa.schema([
        pa.field("ts_us", pa.timestamp("ns")), pa.field("ts_us_utc", pa.timestamp("ns", tz="UTC")),
        pa.field("ts_ms", pa.timestamp("ns"))]))
    _write(out, manifest, p + "int96_timestamps", int96, use_deprecated_int96_timestamps=True)
    if new:
        # Null elements in packed lists (list<int32> etc.): dictionary pages and v1, then PLAIN on
        # v2 pages of 64 bytes, where lists cross pages.
        null_elements = tables.null_elements_table()
        _write(out, manifest, p + "null_elements_v1", null_elements, row_group_size=20)
        _write(out, manifest, p + "null_elements_v2_small_pages", null_elements, data_page_version="2.0",
               data_page_size=64, write_batch_size=8, use_dictionary=False, compression="ZSTD")
    if new:
        _write(out, manifest, p + "int96_lists", tables.timestamp_lists_table(),
               use_deprecated_int96_timestamps=True)


def write_hf_text(out, manifest):
    """Like a Hugging Face text dataset: dictionary on, snappy, one row group, page index and
    content-defined chunking as recent `datasets` uploads have them."""
    kwargs = dict(compression="snappy", use_dictionary=True, write_page_index=True,
                  use_content_defined_chunking=True)
    _write(out, manifest, "hf_text", tables.hf_text_table(), **kwargs)


def _jpeg(rng, size, noisy, quality):
    from PIL import Image
    w, h = size
    if noisy:
        pixels = bytes(rng.getrandbits(8) for _ in range(w * h * 3))
    else:
        c = [rng.randint(0, 255) for _ in range(3)]
        pixels = bytes(((c[k] + (x * 3 + y) // 4) % 256) for y in range(h) for x in range(w) for k in range(3))
    buf = io.BytesIO()
    Image.frombytes("RGB", size, pixels).save(buf, format="JPEG", quality=quality)
    return buf.getvalue()


def write_hf_image(out, manifest):
    """Like a Hugging Face image dataset: real JPEGs in a binary `image`, a string `label`;
    three of about 110 KB (noise), the rest small gradients."""
    rng = random.Random(6)
    images, labels = [], []
    for i in range(16):
        big = i in (2, 9, 14)
        images.append(_jpeg(rng, (304, 300) if big else (32, 24), big, 95 if big else 75))
        labels.append(["cat", "dog", "truck", "ship"][i % 4])
    table = pa.table({"image": pa.array(images, type=pa.binary()), "label": pa.array(labels, type=pa.string())})
    _write(out, manifest, "hf_image", table, compression="snappy", row_group_size=8)


def write_snappy_random_pages(out, manifest):
    """Snappy pages of incompressible byte arrays (random bytes, as JPEGs nearly are), PLAIN with
    no dictionary, v1 and v2, nulls among them: pages of ~70 KB, so that snappy's 64 KiB blocks of
    literals, and the copies it finds in the values' lengths, cut through some values. The
    reader hands most values out as views of the stored pages."""
    rng = random.Random(35)
    rows = 100
    blob = [None if i % 9 == 4 else rng.randbytes(rng.randint(900, 1100)) for i in range(rows)]
    required = [rng.randbytes(rng.randint(900, 1100)) for _ in range(rows)]
    table = pa.table({"blob": pa.array(blob, type=pa.binary()),
                      "blob_required": pa.array(required, type=pa.binary())},
                     schema=pa.schema([pa.field("blob", pa.binary()),
                                       pa.field("blob_required", pa.binary(), nullable=False)]))
    for version in ("1.0", "2.0"):
        kept = table if version == "1.0" else table.select(["blob"])
        _write(out, manifest, "pa%d_snappy_random_v%s" % (MAJOR, version[0]), kept,
               compression="snappy", use_dictionary=False, data_page_version=version,
               data_page_size=70000)
