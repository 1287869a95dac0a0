"""LitData from the registry (oracle.txt) as the oracle of Sluice's Parquet
values: the same Parquet files streamed by litdata.StreamingDataset with its
ParquetLoader (over the index.json litdata.index_parquet_dataset writes, in
a copy of the folder of its own: Sluice takes a folder holding an index.json
for MDS) and by sluice.StreamingDataset (a Parquet stream, read in place)
give the same rows, value for value and type for type, in the same order.

LitData's rows are pyarrow's (ParquetLoader's default low_memory reads a
row group and takes its to_pylist()); they are compared in the canonical form
tests/data/hf_datasets/canonical.py gives (numpy arrays as the lists they
hold, a zoned timestamp as its UTC instant: Sluice's documented
differences from Arrow's Python values), after `comparable` below (a
packed list of dates or timestamps is a numpy datetime64 array, without
zone). LitData takes the files in its
index's order (os.listdir's, not sorted) and each file's rows in sequence;
Sluice takes the files sorted bytewise: LitData's rows are compared file by
file in Sluice's order, each file's rows in order.

Every fixture of tests/data/parquet that is no `bad_` file, and each Spark
folder there, is compared; so is a folder the stage's pyspark writes.
Where pyarrow 17 (Spark's pin, which LitData reads with) cannot read a
column that Sluice reads, the test asserts pyarrow's error for that column
and compares every other column (LitData's and Sluice's `columns`)."""
import collections
import datetime
import importlib.util
import json
import os
import pathlib
import re
import sys

import numpy as np
import pyarrow.lib
import pyarrow.parquet as pq
import pytest

import sluice

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
DATA = ROOT / 'tests' / 'data' / 'parquet'
sys.path.insert(0, str(ROOT / 'bench' / 'python'))
import litdata_shims  # noqa: E402

litdata = litdata_shims.import_litdata()
from litdata.streaming.item_loader import ParquetLoader  # noqa: E402

_spec = importlib.util.spec_from_file_location(
    'hf_canonical', ROOT / 'tests' / 'data' / 'hf_datasets' / 'canonical.py')
canonical = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(canonical)

# The columns pyarrow 17 cannot read or misreads, with its error (None:
# other values, read without error). Sluice reads them; their values are the
# fixture's JSON (what DuckDB or a newer pyarrow read). DuckDB's v2
# DELTA_BINARY_PACKED int32 and uint32 columns (pyarrow 26 fails on both),
# and a fixed_size_list with a null list, which pyarrow 26 wrote and
# pyarrow 17 reads as a short list.
PYARROW_17_CANNOT = {
    'duckdb_v2_zstd.parquet': {'int32': 'delta bit width larger than integer bit width',
                               'uint32': None},
    'pa26_lists_v1.parquet': {
        'embedding': 'Expected all lists to be of size=8 but index 12 had size=0'},
    'pa26_lists_v2_small_pages.parquet': {
        'embedding': 'Expected all lists to be of size=8 but index 12 had size=0'},
    'pa26_null_elements_v1.parquet': {
        'embedding': 'Expected all lists to be of size=4 but index 8 had size=0'},
    'pa26_null_elements_v2_small_pages.parquet': {
        'embedding': 'Expected all lists to be of size=4 but index 8 had size=0'},
}


def fixtures():
    files = sorted(p.name for p in DATA.glob('*.parquet') if not p.name.startswith('bad_'))
    folders = sorted(p.name for p in DATA.iterdir() if p.is_dir() and p.name.startswith('spark'))
    return files + folders


def test_the_oracle_is_the_registrys_release():
    assert litdata.__version__ == '0.2.76'
    assert os.path.realpath(litdata.__file__).startswith(os.path.realpath(sys.prefix) + os.sep)


def link_files(source, dest):
    """`dest`, a new folder of links to the Parquet files of `source` (a file
    or a folder)."""
    dest.mkdir()
    files = [source] if source.is_file() else [p for p in source.iterdir()
                                                if p.name.endswith('.parquet')]
    for path in files:
        (dest / path.name).symlink_to(path)
    return dest


def litdata_rows(folder, columns=None, index=None, **remote):
    """LitData's rows, grouped by file in Sluice's file order (bytewise
    sorted names), each file's rows in LitData's order. `folder`: a local
    path (LitData indexes it first), or with `remote` (LitData's cache_dir
    and storage_options) an s3:// URL already holding LitData's index, a
    copy of `index`."""
    if index is None:
        litdata.index_parquet_dataset(str(folder), num_workers=1)
        index = folder / 'index.json'
    chunks = json.loads(index.read_text())['chunks']
    ds = litdata.StreamingDataset(str(folder), item_loader=ParquetLoader(columns=columns),
                                  shuffle=False, **remote)
    rows = list(ds)
    assert len(rows) == sum(c['chunk_size'] for c in chunks)
    per_file, at = {}, 0
    for chunk in chunks:
        per_file[chunk['filename']] = rows[at:at + chunk['chunk_size']]
        at += chunk['chunk_size']
    return [row for name in sorted(per_file, key=str.encode) for row in per_file[name]]


def sluice_rows(folder, columns=None, **remote):
    where = {'local': str(folder)} if not remote else remote
    return list(sluice.StreamingDataset(shuffle=False, batch_size=1, columns=columns, **where))


def as_json(value):
    """A value in the fixtures' JSON form (PARQUET.md) for the columns of
    PYARROW_17_CANNOT: integers, and float lists with their floats as
    strings (a null element of a masked array as None)."""
    if hasattr(value, 'tolist'):
        value = value.tolist()
    if isinstance(value, list):
        return [as_json(x) for x in value]
    return repr(value) if isinstance(value, float) else value


def comparable(value, in_list=False):
    """A packed list of dates or of ms/us timestamps (a numpy datetime64
    array, masked where an element is null) as the list of dates or naive
    datetimes it holds, and a zoned timestamp in a list (LitData's) as its
    naive UTC instant: numpy's datetime64 has no zone, so Sluice's packed
    list holds the UTC instants. ns arrays stay: canonical.py compares them
    as pandas Timestamps, as pyarrow gives them."""
    dtype = getattr(value, 'dtype', None)
    if getattr(dtype, 'kind', None) == 'M' and np.datetime_data(dtype)[0] in ('D', 'ms', 'us'):
        return [comparable(x, True) for x in value.tolist()]
    if isinstance(value, list):
        return [comparable(x, True) for x in value]
    if in_list and isinstance(value, datetime.datetime) and value.tzinfo is not None:
        return value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return value


def as_canonical(rows):
    return [json.dumps({k: canonical.canonical(comparable(v)) for k, v in row.items()},
                       sort_keys=True) for row in rows]


def assert_same_rows(folder_litdata, folder_sluice, columns=None, litdata_remote={},
                     sluice_remote={}):
    want = as_canonical(litdata_rows(folder_litdata, columns, **litdata_remote))
    got = as_canonical(sluice_rows(folder_sluice, columns, **sluice_remote))
    assert len(got) == len(want) > 0
    for i, (g, w) in enumerate(zip(got, want)):
        assert g == w, (folder_sluice, i)
    return len(got)


@pytest.mark.parametrize('name', fixtures())
def test_sluice_streams_the_rows_litdata_reads(name, tmp_path):
    source = DATA / name
    folder_litdata = link_files(source, tmp_path / 'litdata')
    folder_sluice = link_files(source, tmp_path / 'sluice')
    columns = None
    if name in PYARROW_17_CANNOT:
        names = pq.read_schema(source).names
        expected = json.loads((DATA / (name[:-len('.parquet')] + '.expected.json')).read_text())
        values = {c['name']: c['values'] for c in expected['columns']}
        for column, error in PYARROW_17_CANNOT[name].items():
            assert column in names
            if error is not None:
                with pytest.raises((OSError, pyarrow.lib.ArrowException), match=re.escape(error)):
                    litdata_rows(folder_litdata, [column])
            else:
                got = [row[column] for row in litdata_rows(folder_litdata, [column])]
                assert got != values[column]
            (folder_litdata / 'index.json').unlink()
            # Sluice reads what pyarrow cannot, as the fixture's JSON says.
            got = [as_json(row[column]) for row in sluice_rows(folder_sluice, [column])]
            assert got == values[column], column
        columns = [c for c in names if c not in PYARROW_17_CANNOT[name]]
    rows = assert_same_rows(folder_litdata, folder_sluice, columns)
    expected = (json.loads((DATA / (name[:-len('.parquet')] + '.expected.json')).read_text())
                ['num_rows'] if source.is_file() else
                sum(json.loads(p.read_text())['num_rows'] for p in source.glob('*.expected.json')))
    assert rows == expected


def test_a_folder_spark_writes_streams_the_rows_litdata_reads(spark_sessions, tmp_path):
    """pyspark (local[4]) writes a DataFrame of every type of Mosaic's
    SPARK_TO_MDS table (test_spark_to_mds.frame) and a boolean, a date, a
    timestamp (INT96, Spark's default) and a column with nulls, a file of
    snappy Parquet per partition with a _SUCCESS marker beside them."""
    from pyspark.sql import functions as F

    import test_spark_to_mds
    spark = spark_sessions.current()
    df = (test_spark_to_mds.frame(spark)
          .withColumn('flag', F.col('byte') % 2 == 0)
          .withColumn('day', F.expr("date_add(date'2020-02-28', byte)"))
          .withColumn('at', F.expr('timestamp_micros(long div 1000)'))
          .withColumn('maybe', F.when(F.col('byte') % 5 == 0, None).otherwise(F.col('string'))))
    out = tmp_path / 'spark'
    df.write.option('compression', 'snappy').parquet(str(out))
    names = sorted(os.listdir(out))
    assert '_SUCCESS' in names
    assert sum(n.endswith('.parquet') for n in names) == test_spark_to_mds.PARTITIONS
    rows = assert_same_rows(link_files(out, tmp_path / 'litdata'), out)
    assert rows == test_spark_to_mds.ROWS
    kinds = collections.Counter(type(v).__name__ for row in sluice_rows(out) for v in row.values())
    # INT96 holds nanoseconds: pandas Timestamps, as pyarrow gives them.
    assert kinds['NoneType'] > 0 and kinds['date'] == kinds['Timestamp'] == rows, kinds


@pytest.mark.parametrize('name', ['spark_out', 'pa26_many_row_groups.parquet',
                                  'pa26_types_v2_zstd.parquet', 'pa26_int96_lists.parquet'])
def test_sluice_streams_from_s3_the_rows_litdata_indexes_and_downloads(name, s3, s3rver,
                                                                        tmp_path):
    """The files in an s3rver bucket: LitData indexes them where they are
    (index_parquet_dataset of the s3:// prefix: s3fs lists it, reads each
    footer by ranged reads and writes index.json beside the files), then
    its boto3 downloader fetches them; Sluice's Parquet stream (listing,
    footers by ranged reads, a ranged GET per row group into its cache)
    reads a copy of the files in a prefix without LitData's index.json
    (Sluice takes a folder holding an index.json for MDS). Both give the
    same rows in order, and LitData's index over s3:// lists the chunks
    its index over a local copy lists."""
    import boto3
    source = DATA / name
    client = boto3.client('s3', endpoint_url=s3rver, region_name='us-east-1')
    files = [source] if source.is_file() else sorted(source.glob('*.parquet'))
    bucket = s3[len('s3://'):]
    for path in files:
        for prefix in ('pq', 'pq-litdata'):
            client.upload_file(str(path), bucket, f'{name}/{prefix}/{path.name}')
    storage_options = {'endpoint_url': s3rver}
    litdata.index_parquet_dataset(f'{s3}/{name}/pq-litdata', storage_options=storage_options,
                                  num_workers=1)
    index = tmp_path / 'index.json'
    client.download_file(bucket, f'{name}/pq-litdata/index.json', str(index))
    local = link_files(source, tmp_path / 'local')
    litdata.index_parquet_dataset(str(local), num_workers=1)

    def chunks(path):
        return sorted(json.loads(path.read_text())['chunks'], key=lambda c: c['filename'])
    assert chunks(index) == chunks(local / 'index.json')
    assert [c['filename'] for c in json.loads(index.read_text())['chunks']] == \
        [p.name for p in files]
    rows = assert_same_rows(
        f'{s3}/{name}/pq-litdata', None,
        litdata_remote={'index': index, 'cache_dir': str(tmp_path / 'litdata'),
                        'storage_options': storage_options},
        sluice_remote={'remote': f'{s3}/{name}/pq', 'local': str(tmp_path / 'sluice')})
    assert rows == sum(pq.read_metadata(path).num_rows for path in files)
    # LitData downloaded the files; Sluice cached one object per row group.
    downloaded = [n for _, _, names in os.walk(tmp_path / 'litdata') for n in names]
    assert sorted(n for n in downloaded if n.endswith('.parquet')) == [p.name for p in files]
    groups = sum(pq.read_metadata(path).num_row_groups for path in files)
    assert len(os.listdir(tmp_path / 'sluice' / '.parquet_row_groups')) == groups
