"""Fixtures written by Spark's Parquet writer (parquet-java), pyspark in local mode.

Each write leaves a folder as Spark does: part files, `_SUCCESS`, and Hadoop's `.crc` side files.
Part-file names carry a random job UUID, so their expected files are named by part number
(`part-00000.expected.json`) and name the real file inside.
"""
import datetime
import decimal
import glob
import os
import random


def _rows(n=45, seed=8):
    rng = random.Random(seed)
    utc = datetime.timezone.utc
    rows = []
    for i in range(n):
        micros = rng.randint(-10**15, 4 * 10**15)
        rows.append((
            i,
            None if i % 10 == 7 else rng.randint(-2**31, 2**31 - 1),
            None if i % 6 == 1 else "spark row %d %s" % (i, "é" * (i % 4)),
            None if i % 11 == 5 else rng.uniform(-1e9, 1e9),
            None if i % 9 == 8 else datetime.datetime(1970, 1, 1, tzinfo=utc) + datetime.timedelta(microseconds=micros),
            datetime.date(2001, 1, 1) + datetime.timedelta(days=rng.randint(-5000, 5000)),
            None if i % 8 == 2 else decimal.Decimal(rng.randint(-10**9 + 1, 10**9 - 1)).scaleb(-2),
            decimal.Decimal(rng.randint(-10**17 + 1, 10**17 - 1)).scaleb(-4),
            decimal.Decimal(rng.randint(-10**38 + 1, 10**38 - 1)).scaleb(-12),
            None if i % 7 == 3 else [] if i % 7 == 4 else [None if j == 1 else rng.randint(0, 50000)
                                                          for j in range(i % 6 + 1)],
            None if i % 5 == 0 else ["w%d" % (i * j) for j in range(i % 4)],
            [rng.randint(-128, 127) / 16 for _ in range(4)],
        ))
    return rows


SCHEMA = ("id LONG, int32 INT, text STRING, score DOUBLE, ts TIMESTAMP, day DATE, dec_9_2 DECIMAL(9,2), "
          "dec_17_4 DECIMAL(17,4), dec_38_12 DECIMAL(38,12), token_ids ARRAY<INT>, words ARRAY<STRING>, "
          "embedding ARRAY<DOUBLE>")


def _session():
    from pyspark.sql import SparkSession
    return (SparkSession.builder.master("local[2]").appName("sluice-parquet-fixtures")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.driver.extraJavaOptions", "-Duser.timezone=UTC")
            .config("spark.sql.shuffle.partitions", "3")
            .getOrCreate())


def write_all(out, manifest):
    import pyspark
    spark = _session()
    spark.sparkContext.setLogLevel("ERROR")
    df = spark.createDataFrame(_rows(), SCHEMA)
    # Hash partitioning on id is deterministic; sorting within partitions fixes each file's row order.
    parted = df.repartition(3, "id").sortWithinPartitions("id")
    writes = [
        ("spark_out", parted, {}, "defaults: snappy, INT96 timestamps, 3 partitions"),
        ("spark_legacy_zstd", df.coalesce(1),
         {"compression": "zstd"}, "writeLegacyFormat=true (lists as bag/array, decimals as FIXED_LEN_BYTE_ARRAY), "
                                  "TIMESTAMP_MILLIS"),
        ("spark_v2_pages", df.coalesce(1), {"parquet.writer.version": "v2", "compression": "gzip"},
         "parquet.writer.version=v2: data page v2 and its DELTA encodings, TIMESTAMP_MICROS"),
        ("spark_lz4_hadoop", df.coalesce(1), {"compression": "lz4"},
         "codec LZ4 (5), the Hadoop-framed LZ4 of parquet-java, not LZ4_RAW"),
    ]
    for folder, frame, options, what in writes:
        conf = {"spark_legacy_zstd": {"spark.sql.parquet.writeLegacyFormat": "true",
                                      "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MILLIS"},
                "spark_v2_pages": {"spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS"}}.get(folder, {})
        for k, v in conf.items():
            spark.conf.set(k, v)
        writer = frame.write.mode("overwrite")
        for k, v in options.items():
            writer = writer.option(k, v)
        writer.parquet(os.path.join(out, folder))
        for k in conf:
            spark.conf.unset(k)
        settings = ", ".join("%s=%s" % kv for kv in list(conf.items()) + list(options.items())) or "defaults"
        for part in sorted(glob.glob(os.path.join(out, folder, "part-*.parquet"))):
            rel = os.path.relpath(part, out)
            number = os.path.basename(part).split("-")[1]
            manifest[rel] = {"writer": "pyspark %s local[2] DataFrame.write.parquet (%s): %s" % (
                pyspark.__version__, settings, what), "expected": "%s/part-%s" % (folder, number)}
    spark.stop()
