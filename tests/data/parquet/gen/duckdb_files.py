"""Fixtures written by DuckDB's own Parquet writer (COPY ... TO ... (FORMAT parquet))."""
import os

# Values from arithmetic on the row number, so DuckDB builds them without any input file.
SELECT = r"""
SELECT
  i::INTEGER AS id,
  CASE WHEN i % 11 = 3 THEN NULL ELSE (i * 37 % 256 - 128)::TINYINT END AS int8,
  (i * 1237 % 65536 - 32768)::SMALLINT AS int16,
  CASE WHEN i = 0 THEN -2147483648 WHEN i = 1 THEN 2147483647 ELSE (i * 104729)::INTEGER END AS int32,
  CASE WHEN i = 0 THEN -9223372036854775808 WHEN i = 1 THEN 9223372036854775807
       ELSE i * 1000000007 * 31 END::BIGINT AS int64,
  (i * 7 % 256)::UTINYINT AS uint8,
  (i * 3001 % 65536)::USMALLINT AS uint16,
  (4294967295 - i * 999)::UINTEGER AS uint32,
  (18446744073709551615 - i * 123456789)::UBIGINT AS uint64,
  (i % 3 = 0) AS flag,
  CASE WHEN i % 9 = 0 THEN NULL ELSE (i / 8)::FLOAT END AS float32,
  CASE WHEN i = 2 THEN 'nan'::DOUBLE WHEN i = 4 THEN '-inf'::DOUBLE ELSE i / 7 END::DOUBLE AS float64,
  CASE WHEN i % 5 = 0 THEN NULL ELSE 'row ' || i || repeat('·', i % 4) END AS text,
  CASE WHEN i % 4 = 0 THEN ''::BLOB ELSE ('\x00\xFF' || i)::BLOB END AS blob,
  DATE '2020-02-29' + (i * 17 - 400)::INTEGER AS day,
  TIMESTAMP '2024-01-01 00:00:00' + to_microseconds(i * 3600123456) AS ts_us,
  (TIMESTAMP '1969-12-31 23:59:59' + to_milliseconds(i * 86400001))::TIMESTAMP_MS AS ts_ms,
  ('2024-06-01 12:00:00'::TIMESTAMP_NS + to_microseconds(i * 1000001))::TIMESTAMP_NS AS ts_ns,
  TIMESTAMPTZ '2024-03-10 01:30:00+00' + to_microseconds(i * 59999999) AS ts_tz,
  (i * 12345.67 - 100000)::DECIMAL(9, 2) AS dec_9_2,
  (i * 123456789.123 - 5e9)::DECIMAL(18, 3) AS dec_18_3,
  ('12345678901234567890.' || lpad((i * 7919)::VARCHAR, 10, '0'))::DECIMAL(38, 10) * (CASE WHEN i % 2 = 0 THEN 1 ELSE -1 END) AS dec_38_10,
  CASE WHEN i % 6 = 0 THEN NULL WHEN i % 6 = 1 THEN []::INTEGER[]
       ELSE [i, NULL, i * 2, -i]::INTEGER[] END AS int_list,
  CASE WHEN i % 7 = 2 THEN NULL ELSE ['s' || i, NULL, '', 'tail' || (i % 3)] END AS string_list,
  [i / 2, i / 4, i / 8, i / 16]::FLOAT[4] AS embedding,
  CASE WHEN i % 5 = 1 THEN NULL ELSE [[i], [], NULL, [i, i + 1]]::INTEGER[][] END AS nested_list
FROM range(0, 60) t(i)
ORDER BY i
"""


def write_all(out, manifest):
    import duckdb
    con = duckdb.connect()
    con.execute("SET threads = 1")  # one writer thread: rows and row groups in a fixed order
    con.execute("SET TimeZone = 'UTC'")
    for name, options in [
        ("duckdb_default", "FORMAT parquet"),
        ("duckdb_v2_zstd", "FORMAT parquet, COMPRESSION zstd, PARQUET_VERSION v2, ROW_GROUP_SIZE 25"),
        ("duckdb_uncompressed", "FORMAT parquet, COMPRESSION uncompressed, ROW_GROUP_SIZE 20"),
    ]:
        path = os.path.join(out, name + ".parquet")
        con.execute("COPY (%s) TO '%s' (%s)" % (SELECT, path, options))
        manifest[name + ".parquet"] = {"writer": "duckdb %s COPY ... TO (%s)" % (duckdb.__version__, options)}
