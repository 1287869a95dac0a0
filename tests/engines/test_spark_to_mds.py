"""Spark -> MDS as the Databricks guide does it, with the real engine: a
pyspark local[4] DataFrame of several partitions holding every Spark type
in Mosaic's SPARK_TO_MDS table goes through sluice.dataframe_to_mds and
through mosaicml-streaming's own dataframe_to_mds (from the registry) with
the same arguments; every file both write is byte-identical, and the
dataset streams under sluice.StreamingDataset in the order Mosaic's
StreamingDataset gives, with the DataFrame's values."""
import os
from decimal import Decimal

import numpy as np
import pytest
from pyspark.sql import types as T

import sluice
from sluice.dataframe import SPARK_TO_MDS as SLUICE_SPARK_TO_MDS
from sluice.remote import remote_list, remote_read

import streaming
from streaming.base.converters import SPARK_TO_MDS as MOSAIC_SPARK_TO_MDS
from streaming.base.converters import dataframe_to_mds as mosaic_dataframe_to_mds

ROWS = 61
PARTITIONS = 4

# Every Spark type Mosaic's SPARK_TO_MDS gives an encoding, and a second
# decimal precision (every DecimalType is 'str_decimal').
SCHEMA = T.StructType([
    T.StructField('byte', T.ByteType()),
    T.StructField('short', T.ShortType()),
    T.StructField('int', T.IntegerType()),
    T.StructField('long', T.LongType()),
    T.StructField('float', T.FloatType()),
    T.StructField('double', T.DoubleType()),
    T.StructField('decimal', T.DecimalType()),
    T.StructField('decimal_12_3', T.DecimalType(12, 3)),
    T.StructField('string', T.StringType()),
    T.StructField('binary', T.BinaryType()),
    T.StructField('ints', T.ArrayType(T.IntegerType())),
    T.StructField('shorts', T.ArrayType(T.ShortType())),
    T.StructField('longs', T.ArrayType(T.LongType())),
    T.StructField('floats', T.ArrayType(T.FloatType())),
    T.StructField('doubles', T.ArrayType(T.DoubleType())),
])

ENCODINGS = {
    'byte': 'uint8', 'short': 'uint16', 'int': 'int32', 'long': 'int64', 'float': 'float32',
    'double': 'float64', 'decimal': 'str_decimal', 'decimal_12_3': 'str_decimal',
    'string': 'str', 'binary': 'bytes', 'ints': 'ndarray:int32', 'shorts': 'ndarray:int16',
    'longs': 'ndarray:int64', 'floats': 'ndarray:float32', 'doubles': 'ndarray:float64',
}


def row(i):
    # ByteType and ShortType are signed in Spark but 'uint8'/'uint16' in
    # Mosaic's table: their values here are the ones both can store. Arrays
    # are never empty (Mosaic refuses to encode an empty ndarray).
    return (i % 128, (i * 499) % 32768, i * 1000003 - 30000000, i * 10**12 - 7, i / 7.0,
            -i / 3.0, Decimal(i * 13 - 100), Decimal(f'{i - 30}.{(i * 37) % 1000:03d}'),
            f'row {i} é ☃' * (i % 3), bytes([i % 256]) * (i % 5),
            [i, -i, 2**31 - 1][:1 + i % 3], [i, -i, -32768][:1 + i % 3],
            [i * 2**40, -1][:1 + i % 2], [i / 3.0, -0.5][:1 + i % 2],
            [i / 7.0, 1e300, -0.0][:1 + i % 3])


def expected_sample(i):
    """Row i as the MDS encodings decode it."""
    r = dict(zip(SCHEMA.names, row(i)))
    return {
        'byte': np.uint8(r['byte']), 'short': np.uint16(r['short']), 'int': np.int32(r['int']),
        'long': np.int64(r['long']), 'float': np.float32(r['float']),
        'double': np.float64(r['double']), 'decimal': r['decimal'],
        'decimal_12_3': r['decimal_12_3'], 'string': r['string'], 'binary': r['binary'],
        'ints': np.array(r['ints'], np.int32), 'shorts': np.array(r['shorts'], np.int16),
        'longs': np.array(r['longs'], np.int64), 'floats': np.array(r['floats'], np.float32),
        'doubles': np.array(r['doubles'], np.float64),
    }


def frame(spark):
    rdd = spark.sparkContext.parallelize([row(i) for i in range(ROWS)], PARTITIONS)
    return spark.createDataFrame(rdd, SCHEMA)


def files_under(root):
    out = {}
    for dirpath, _, names in os.walk(root):
        for n in names:
            path = os.path.join(dirpath, n)
            out[os.path.relpath(path, root)] = open(path, 'rb').read()
    return out


def remote_files(url):
    return {k: remote_read(url, k) for k in remote_list(url)}


def assert_same_sample(got, want, where):
    assert sorted(got) == sorted(want), where
    for name, w in want.items():
        g = got[name]
        if isinstance(w, np.ndarray):
            assert isinstance(g, np.ndarray) and g.dtype == w.dtype, (where, name, g)
            assert g.tobytes() == w.tobytes(), (where, name, g, w)
        else:
            assert type(g) is type(w) and g == w, (where, name, g, w)


def write_both(spark_sessions, out_mosaic, out_sluice, udf_iterable=None, udf_kwargs=None,
               **kwargs):
    """Each writer from a fresh SparkContext running the same jobs, so that
    the task attempt ids (the partitions' folder names) agree."""
    a = mosaic_dataframe_to_mds(frame(spark_sessions.fresh()), merge_index=True,
                                mds_kwargs=dict(kwargs, out=out_mosaic),
                                udf_iterable=udf_iterable, udf_kwargs=udf_kwargs)
    b = sluice.dataframe_to_mds(frame(spark_sessions.fresh()), merge_index=True,
                                mds_kwargs=dict(kwargs, out=out_sluice),
                                udf_iterable=udf_iterable, udf_kwargs=udf_kwargs)
    return a, b


def assert_same_files(want, got):
    """Mosaic's files (`want`: {relative path: bytes}) and Sluice's are the
    same, every byte; a partition folder per partition, several shards in each."""
    assert sorted(got) == sorted(want)
    assert len([k for k in want if k.endswith('/index.json')]) == PARTITIONS
    assert 'index.json' in want
    assert len([k for k in want if '/shard.' in k]) > 2 * PARTITIONS
    for name in want:
        assert got[name] == want[name], name


STREAM_ARGS = dict(shuffle=True, shuffle_seed=1234, batch_size=4, num_canonical_nodes=2,
                   shuffle_algo='py1e', shuffle_block_size=16)


def all_rows():
    return {int(expected_sample(i)['long']): expected_sample(i) for i in range(ROWS)}


def assert_streams_as_mosaic(mosaic_args, sluice_args, rows):
    """Mosaic's StreamingDataset over Mosaic's output and Sluice's over
    Sluice's give the same samples in the same order, and these are `rows`
    ({'long' value: sample}) each once, one repeated (2 canonical nodes pad
    the epoch to an even length)."""
    want = list(streaming.StreamingDataset(**mosaic_args, **STREAM_ARGS))
    got = list(sluice.StreamingDataset(**sluice_args, **STREAM_ARGS))
    assert len(got) == len(want) == ROWS + 1
    for k, (g, w) in enumerate(zip(got, want)):
        assert_same_sample(g, w, f'sample {k}')
    assert sorted(rows) == sorted(set(int(s['long']) for s in got))
    for s in got:
        assert_same_sample(s, rows[int(s['long'])], f"row long={s['long']}")
    streaming.base.util.clean_stale_shared_memory()


def test_sluice_table_is_mosaics():
    assert SLUICE_SPARK_TO_MDS == MOSAIC_SPARK_TO_MDS


def test_local_folder_is_byte_identical_and_streams(spark_sessions, tmp_path):
    kwargs = dict(compression='zstd', hashes=['sha1', 'xxh64'], size_limit=1 << 10)
    a, b = write_both(spark_sessions, str(tmp_path / 'mosaic'), str(tmp_path / 'sluice'),
                      **kwargs)
    assert (a, b) == ((str(tmp_path / 'mosaic'), ''), (str(tmp_path / 'sluice'), ''))
    assert_same_files(files_under(tmp_path / 'mosaic'), files_under(tmp_path / 'sluice'))
    index = sluice.LocalDataset(str(tmp_path / 'sluice'))
    assert dict(zip(index.column_names, index.column_encodings)) == ENCODINGS
    assert_streams_as_mosaic(dict(local=str(tmp_path / 'mosaic')),
                             dict(local=str(tmp_path / 'sluice')), all_rows())


def test_volumes_path_uncompressed_is_byte_identical_and_streams(spark_sessions, tmp_path):
    # As the Databricks guide advises: a local scratch folder and a FUSE
    # mounted Unity Catalog volume as the remote, here both local folders.
    def out(who):
        return (str(tmp_path / 'local_disk0' / who),
                str(tmp_path / 'Volumes' / 'main' / 'default' / 'vol' / who))
    kwargs = dict(compression=None, hashes=['md5', 'xxh3_64'], size_limit=1 << 10)
    assert write_both(spark_sessions, out('mosaic'), out('sluice'), **kwargs) == \
        (out('mosaic'), out('sluice'))
    want = files_under(out('mosaic')[1])
    assert_same_files(want, files_under(out('sluice')[1]))
    assert files_under(out('sluice')[0]) == files_under(out('mosaic')[0])
    assert_streams_as_mosaic(dict(remote=out('mosaic')[1], local=str(tmp_path / 'cache_m')),
                             dict(remote=out('sluice')[1], local=str(tmp_path / 'cache_s')),
                             all_rows())


def test_s3_is_byte_identical_and_streams(spark_sessions, s3, tmp_path):
    kwargs = dict(compression='zstd', hashes=['sha256'], size_limit=1 << 10)
    a, b = write_both(spark_sessions, f'{s3}/spark/mosaic', f'{s3}/spark/sluice', **kwargs)
    assert (a[1], b[1]) == (f'{s3}/spark/mosaic', f'{s3}/spark/sluice')
    want = remote_files(f'{s3}/spark/mosaic')
    assert_same_files(want, remote_files(f'{s3}/spark/sluice'))
    assert_streams_as_mosaic(dict(remote=f'{s3}/spark/mosaic', local=str(tmp_path / 'cache_m')),
                             dict(remote=f'{s3}/spark/sluice', local=str(tmp_path / 'cache_s')),
                             all_rows())


def tokens(pdf, scale):
    """A udf_iterable: Mosaic calls it once per Arrow batch of a partition."""
    for long, text, ints in zip(pdf['long'], pdf['string'], pdf['ints']):
        yield {'long': int(long), 'text': f'{text}|{len(pdf)}',
               'tokens': (ints * scale).astype(np.int32)}


def test_udf_iterable_is_byte_identical_and_streams(spark_sessions, tmp_path):
    columns = {'long': 'int64', 'text': 'str', 'tokens': 'ndarray:int32'}
    kwargs = dict(columns=columns, size_limit=1 << 9)
    write_both(spark_sessions, str(tmp_path / 'mosaic'), str(tmp_path / 'sluice'),
               udf_iterable=tokens, udf_kwargs={'scale': 3}, **kwargs)
    assert_same_files(files_under(tmp_path / 'mosaic'), files_under(tmp_path / 'sluice'))
    # Each partition (15 or 16 rows) arrives as Arrow batches of at most 7.
    batch = {}
    for p in range(PARTITIONS):
        first, last = p * ROWS // PARTITIONS, (p + 1) * ROWS // PARTITIONS
        for i in range(first, last):
            rest = last - first - (i - first) // 7 * 7
            batch[i] = min(7, rest)
    rows = {}
    for i in range(ROWS):
        r = dict(zip(SCHEMA.names, row(i)))
        rows[r['long']] = {'long': np.int64(r['long']), 'text': f"{r['string']}|{batch[i]}",
                           'tokens': np.array(r['ints'], np.int32) * 3}
    assert_streams_as_mosaic(dict(local=str(tmp_path / 'mosaic')),
                             dict(local=str(tmp_path / 'sluice')), rows)


def test_unsupported_type_is_an_error_naming_the_column_before_any_job(spark_sessions, tmp_path):
    spark = spark_sessions.fresh()
    df = spark.createDataFrame([(1, '2020-01-01')], 'id long, day string')
    df = df.selectExpr('id', 'to_timestamp(day) as seen')
    spark.sparkContext.setJobGroup('unsupported', 'dataframe_to_mds of a timestamp column')
    with pytest.raises(ValueError) as e:
        sluice.dataframe_to_mds(df, mds_kwargs={'out': str(tmp_path / 'o')})
    assert str(e.value) == (
        "dataframe_to_mds: column 'seen' has Spark type timestamp, to which Mosaic's "
        'SPARK_TO_MDS gives no MDS encoding; cast the column, or convert rows with a '
        'udf_iterable and give mds_kwargs["columns"]')
    assert spark.sparkContext.statusTracker().getJobIdsForGroup('unsupported') == []
    assert not os.path.exists(tmp_path / 'o')
    # Mosaic refuses it too (without naming the column).
    with pytest.raises(ValueError, match='TimestampType.* is not supported by dataframe_to_mds'):
        mosaic_dataframe_to_mds(df, mds_kwargs={'out': str(tmp_path / 'm')})


# Every type Mosaic's SPARK_TO_MDS maps to None, and types it does not list,
# each as a column made by a SQL expression, with its simpleString.
UNSUPPORTED = {
    'true': 'boolean',
    "timestamp'2020-01-01 00:00:00'": 'timestamp',
    "timestamp_ntz'2020-01-01 00:00:00'": 'timestamp_ntz',
    "date'2020-01-01'": 'date',
    'make_dt_interval(1, 2, 3, 4.5)': 'interval day to second',
    "map('a', 1)": 'map<string,int>',
    "named_struct('a', 1)": 'struct<a:int>',
    "array('a')": 'array<string>',
}


@pytest.mark.parametrize('expr', sorted(UNSUPPORTED))
def test_every_type_without_an_encoding_is_an_error_naming_the_column(spark_sessions, tmp_path,
                                                                       expr):
    spark = spark_sessions.current()
    df = spark.range(3).selectExpr('id', f'{expr} as odd')
    mosaic_type = df.schema['odd'].dataType
    if mosaic_type in MOSAIC_SPARK_TO_MDS:
        assert MOSAIC_SPARK_TO_MDS[mosaic_type] is None
    group = f'unsupported {expr}'
    spark.sparkContext.setJobGroup(group, 'dataframe_to_mds of an unsupported column')
    with pytest.raises(ValueError) as e:
        sluice.dataframe_to_mds(df, mds_kwargs={'out': str(tmp_path / 'o')})
    assert str(e.value) == (
        f"dataframe_to_mds: column 'odd' has Spark type {UNSUPPORTED[expr]}, to which Mosaic's "
        'SPARK_TO_MDS gives no MDS encoding; cast the column, or convert rows with a '
        'udf_iterable and give mds_kwargs["columns"]')
    assert spark.sparkContext.statusTracker().getJobIdsForGroup(group) == []
    assert not os.path.exists(tmp_path / 'o')


def test_columns_are_checked_against_the_schema_as_mosaic(spark_sessions, tmp_path):
    df = frame(spark_sessions.fresh())
    with pytest.raises(ValueError) as e:
        sluice.dataframe_to_mds(df, mds_kwargs={'out': str(tmp_path / 'o'),
                                                'columns': {'int': 'int64'}})
    assert str(e.value) == ("dataframe_to_mds: column 'int' is 'int32' in the DataFrame but "
                            "'int64' in mds_kwargs[\"columns\"]")
    with pytest.raises(ValueError, match='Mismatched types: column name `int` is `int32`'):
        mosaic_dataframe_to_mds(df, mds_kwargs={'out': str(tmp_path / 'm'),
                                                'columns': {'int': 'int64'}})
    assert not os.path.exists(tmp_path / 'o')


def test_an_empty_dataframe_is_an_error_as_in_mosaic(spark_sessions, tmp_path):
    df = frame(spark_sessions.fresh()).limit(0)
    with pytest.raises(ValueError) as e:
        sluice.dataframe_to_mds(df, mds_kwargs={'out': str(tmp_path / 'o')})
    assert str(e.value) == 'dataframe_to_mds: the DataFrame is empty'
    assert not os.path.exists(tmp_path / 'o')
    with pytest.raises(ValueError, match='Input dataframe is None or Empty!'):
        mosaic_dataframe_to_mds(df, mds_kwargs={'out': str(tmp_path / 'm')})
