"""dataframe_to_mds: write a DataFrame as an MDS dataset, one sub-dataset per
partition (<out>/<Spark task attempt id, or partition index>/) merged into
<out>/index.json, as Databricks' / Mosaic's dataframe_to_mds does.

Takes a Spark DataFrame (written on the executors exactly as Mosaic's
dataframe_to_mds does, so that both write the same bytes), a Dask DataFrame
(one task per partition via `to_delayed`, computed on the active scheduler,
e.g. a distributed cluster) or a pandas DataFrame (one partition).
"""
import decimal
import os
import shutil

import numpy as np

from sluice.merge import merge_index as _merge_index
from sluice.writer import MDSWriter, resolve_out

# SPARK_TO_MDS is an attribute too (built on use, as it needs pyspark).
__all__ = ['dataframe_to_mds', 'infer_dataframe_schema', 'PANDAS_TO_MDS']


def _spark_to_mds():
    """Mosaic's SPARK_TO_MDS: Spark type -> MDS encoding, None for the types
    that have none. Keys are Spark's own type objects, matched by Spark's
    equality (ArrayType(IntegerType()) is not ArrayType(IntegerType(), False));
    every DecimalType(precision, scale) is 'str_decimal'. Built on use:
    pyspark is not a dependency."""
    from pyspark.sql import types as T
    return {
        T.ByteType(): 'uint8',
        T.ShortType(): 'uint16',
        T.IntegerType(): 'int32',
        T.LongType(): 'int64',
        T.FloatType(): 'float32',
        T.DoubleType(): 'float64',
        T.DecimalType(): 'str_decimal',
        T.StringType(): 'str',
        T.BinaryType(): 'bytes',
        T.BooleanType(): None,
        T.TimestampType(): None,
        T.TimestampNTZType(): None,
        T.DateType(): None,
        T.DayTimeIntervalType(): None,
        T.ArrayType(T.IntegerType()): 'ndarray:int32',
        T.ArrayType(T.ShortType()): 'ndarray:int16',
        T.ArrayType(T.LongType()): 'ndarray:int64',
        T.ArrayType(T.FloatType()): 'ndarray:float32',
        T.ArrayType(T.DoubleType()): 'ndarray:float64',
    }


def __getattr__(name):
    if name == 'SPARK_TO_MDS':
        return _spark_to_mds()
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')


# numpy/pandas dtype name -> MDS encoding (the same widths as the dtype).
PANDAS_TO_MDS = {
    'int8': 'int8', 'int16': 'int16', 'int32': 'int32', 'int64': 'int64',
    'uint8': 'uint8', 'uint16': 'uint16', 'uint32': 'uint32', 'uint64': 'uint64',
    'Int8': 'int8', 'Int16': 'int16', 'Int32': 'int32', 'Int64': 'int64',
    'UInt8': 'uint8', 'UInt16': 'uint16', 'UInt32': 'uint32', 'UInt64': 'uint64',
    'float16': 'float16', 'float32': 'float32', 'float64': 'float64',
    'Float32': 'float32', 'Float64': 'float64',
    'string': 'str',
}

_ND_DTYPES = {'uint8', 'int8', 'uint16', 'int16', 'float16', 'uint32', 'int32', 'float32',
              'uint64', 'int64', 'float64'}


def _object_encoding(name, series):
    sample = next((v for v in series if v is not None and not (isinstance(v, float) and
                                                               np.isnan(v))), None)
    if isinstance(sample, str):
        return 'str'
    if isinstance(sample, (bytes, bytearray)):
        return 'bytes'
    if isinstance(sample, decimal.Decimal):
        return 'str_decimal'
    if isinstance(sample, np.ndarray) and sample.dtype.name in _ND_DTYPES:
        return f'ndarray:{sample.dtype.name}'
    if isinstance(sample, (dict, list)):
        return 'json'
    raise ValueError(f'dataframe_to_mds: cannot infer an MDS encoding for column {name!r} '
                     f'(values of type {type(sample).__name__}); give mds_kwargs["columns"]')


def _spark_encoding(field, table):
    from pyspark.sql.types import DecimalType
    encoding = table.get(DecimalType() if isinstance(field.dataType, DecimalType)
                         else field.dataType)
    if encoding is not None:
        return encoding
    raise ValueError(f'dataframe_to_mds: column {field.name!r} has Spark type '
                     f'{field.dataType.simpleString()}, to which Mosaic\'s SPARK_TO_MDS gives no '
                     'MDS encoding; cast the column, or convert rows with a udf_iterable and '
                     'give mds_kwargs["columns"]')


def _check_spark_columns(dataframe, user_defined_cols, table):
    """Mosaic's check of mds_kwargs['columns'] against a Spark schema: every
    named column exists, and a column whose Spark type has an encoding keeps
    it ('json' for JSON-shaped types; pil/png/jpeg/pkl for binary ones)."""
    from pyspark.sql.types import BinaryType
    supported = set(filter(None, table.values()))
    for name, encoding in user_defined_cols.items():
        if name not in dataframe.columns:
            raise ValueError(f'dataframe_to_mds: mds_kwargs["columns"] names {name!r}, which is '
                             f'not a column of the DataFrame {dataframe.columns}')
        base = ':'.join(encoding.split(':')[:2]) if encoding.startswith('ndarray:') else encoding
        field = dataframe.schema[name]
        if base not in supported:
            if base == 'json' and _json_compatible(field.dataType):
                continue
            if base in ('pil', 'png', 'jpeg', 'pkl') and isinstance(field.dataType, BinaryType):
                continue
            raise ValueError(f'dataframe_to_mds: column {name!r} has Spark type '
                             f'{field.dataType.simpleString()}, which MDS cannot store as '
                             f'{encoding!r}')
        inferred = _spark_encoding(field, table)
        if base != inferred:
            raise ValueError(f'dataframe_to_mds: column {name!r} is {inferred!r} in the '
                             f'DataFrame but {encoding!r} in mds_kwargs["columns"]')


def _json_compatible(data_type):
    from pyspark.sql import types as T
    if isinstance(data_type, T.StructType):
        return all(_json_compatible(f.dataType) for f in data_type.fields)
    if isinstance(data_type, T.ArrayType):
        return _json_compatible(data_type.elementType)
    if isinstance(data_type, T.MapType):
        return _json_compatible(data_type.keyType) and _json_compatible(data_type.valueType)
    return isinstance(data_type, (T.StringType, T.IntegerType, T.FloatType, T.BooleanType,
                                  T.NullType))


def _is_spark(df):
    return type(df).__module__.startswith('pyspark.')


def _is_dask(df):
    return type(df).__module__.startswith('dask.')


def infer_dataframe_schema(dataframe, user_defined_cols=None):
    """{column: MDS encoding} for the DataFrame's schema; user_defined_cols
    entries win (and must name existing columns)."""
    if _is_spark(dataframe):
        table = _spark_to_mds()
        if user_defined_cols:  # Mosaic's rule: the user's columns, checked, as given
            _check_spark_columns(dataframe, user_defined_cols, table)
            return dict(user_defined_cols)
        return {f.name: _spark_encoding(f, table) for f in dataframe.schema.fields}
    head = dataframe
    if _is_dask(dataframe) and any(str(t) == 'object' for t in dataframe.dtypes):
        # Object columns are typed by their first values; look across
        # partitions (only 100 rows are computed).
        head = dataframe.head(100, npartitions=-1)
    cols = {}
    for name, dtype in dataframe.dtypes.items():
        if user_defined_cols and name in user_defined_cols:
            continue
        key = str(dtype)
        if key in PANDAS_TO_MDS:
            cols[name] = PANDAS_TO_MDS[key]
        elif key == 'object':
            cols[name] = _object_encoding(name, head[name])
        else:
            raise ValueError(f'dataframe_to_mds: column {name!r} has dtype {dtype}, which '
                             'has no MDS encoding; give mds_kwargs["columns"]')
    names = list(dataframe.columns)
    if user_defined_cols:
        for name in user_defined_cols:
            if name not in names:
                raise ValueError(f'dataframe_to_mds: mds_kwargs["columns"] names {name!r}, '
                                 'which is not a column of the DataFrame')
        cols = {n: (user_defined_cols[n] if n in user_defined_cols else cols[n])
                for n in names if n in user_defined_cols or n in cols}
    return cols


def _partition_out(out, index):
    """The `out` of partition `index`: <local>/<index>, and <remote>/<index>
    when there is a remote."""
    local, remote = out
    part = os.path.join(local, str(index))
    return (part, remote.rstrip('/') + '/' + str(index)) if remote else part


def _write_partition(rows, out, mds_kwargs):
    """Writes `rows` (an iterable of dicts) into `out` (a folder or a (local,
    remote) pair); returns its index.json as merge_index takes it."""
    kwargs = dict(mds_kwargs)
    kwargs['out'] = out
    with MDSWriter(**kwargs) as w:
        for row in rows:
            w.write(row)
    if isinstance(out, tuple):
        return (os.path.join(out[0], 'index.json'), out[1] + '/index.json')
    return os.path.join(out, 'index.json')


def _pandas_rows(pdf, columns, udf_iterable, udf_kwargs):
    if udf_iterable is not None:
        return udf_iterable(pdf, **(udf_kwargs or {}))
    names = list(columns)
    return ({n: row[i] for i, n in enumerate(names)}
            for row in pdf[names].itertuples(index=False, name=None))


def _write_pandas_partition(pdf, index, out, mds_kwargs, udf_iterable, udf_kwargs):
    rows = _pandas_rows(pdf, mds_kwargs['columns'], udf_iterable, udf_kwargs)
    return _write_partition(rows, _partition_out(out, index), mds_kwargs)


def _write_spark(dataframe, out, mds_kwargs, merge_index, udf_iterable, udf_kwargs):
    """Writes a Spark DataFrame as Mosaic's dataframe_to_mds does, so that
    both write the same bytes: mapInPandas hands each task its partition as
    Arrow batches of pandas rows (`to_dict('records')`, or udf_iterable per
    batch), the task writes <out>/<its task attempt id>/, and the driver
    gets the (local, remote) index.json of each, in partition order."""
    import pandas as pd
    from pyspark import TaskContext
    from pyspark.sql.types import StringType, StructField, StructType
    local, remote = out
    udf_kwargs = udf_kwargs or {}

    def write(batches):
        task = str(TaskContext.get().taskAttemptId())
        part = (os.path.join(local, task), os.path.join(remote, task)) if remote else \
            os.path.join(local, task)
        kwargs = dict(mds_kwargs, out=part)
        if merge_index:
            kwargs['keep_local'] = True  # the merge reads the partitions' local indexes
        with MDSWriter(**kwargs) as w:
            for pdf in batches:
                rows = (udf_iterable(pdf, **udf_kwargs) if udf_iterable is not None
                        else pdf.to_dict('records'))
                for row in rows:
                    w.write(row)
        index = os.path.join(local, task, 'index.json')
        yield pd.DataFrame({'local': [index],
                            'remote': [os.path.join(remote, task, 'index.json') if remote else '']})

    schema = StructType([StructField('local', StringType(), False),
                         StructField('remote', StringType(), False)])
    return [(r['local'], r['remote']) for r in dataframe.mapInPandas(write, schema).collect()]


def dataframe_to_mds(dataframe, merge_index=True, mds_kwargs=None, udf_iterable=None,
                     udf_kwargs=None):
    """Writes `dataframe` as MDS under mds_kwargs['out'], one sub-folder per
    partition (named by the partition's Spark task attempt id, as Mosaic's;
    by its index for Dask and pandas), and merges their indexes into
    out/index.json when merge_index. `out` is a local folder, a remote URL
    (partitions are staged in a temporary folder and uploaded) or a (local,
    remote) pair, as Mosaic's. An empty Spark DataFrame is an error, as in
    Mosaic. Returns (local folder, remote or ''), as Mosaic 0.13 does.

    mds_kwargs: MDSWriter arguments; `columns` is inferred from the schema when
    absent (required with udf_iterable, whose output has its own columns);
    `compression` defaults to 'zstd' here, as in Mosaic.
    udf_iterable(pandas_frame, **udf_kwargs) may turn rows into an iterable of
    sample dicts: called per partition (Dask, pandas), or per Arrow batch of a
    partition for Spark, as Mosaic does (spark.sql.execution.arrow.maxRecordsPerBatch).
    """
    if dataframe is None:
        raise ValueError('dataframe_to_mds: dataframe is None')
    mds_kwargs = dict(mds_kwargs or {})
    if 'out' not in mds_kwargs:
        raise ValueError('dataframe_to_mds: mds_kwargs must give `out`')
    mds_kwargs.setdefault('compression', 'zstd')  # Mosaic's dataframe_to_mds default
    if udf_iterable is not None and 'columns' not in mds_kwargs:
        raise ValueError('dataframe_to_mds: with udf_iterable, mds_kwargs must give `columns`')
    if udf_iterable is None:
        mds_kwargs['columns'] = infer_dataframe_schema(dataframe, mds_kwargs.get('columns'))
    if _is_spark(dataframe) and dataframe.isEmpty():
        # Mosaic's check, and its Spark job: the writing job's tasks then get
        # the same attempt ids (the partitions' folder names) as under Mosaic.
        raise ValueError('dataframe_to_mds: the DataFrame is empty')
    out = mds_kwargs['out']
    local, remote = resolve_out(out)
    # Mosaic keeps the local folder unless keep_local=False is given; a
    # staging folder made here for a URL `out` is ours to remove.
    if isinstance(out, (tuple, list)):
        keep_local = mds_kwargs.get('keep_local', True) is not False or not remote
    else:
        keep_local = bool(mds_kwargs.get('keep_local', False)) or not remote
    mds_kwargs.pop('out')
    if merge_index and remote:
        mds_kwargs['keep_local'] = True  # the merge reads the partitions' local indexes
    if os.path.isdir(local) and os.listdir(local):
        raise FileExistsError(f'Directory is not empty: {local}')
    os.makedirs(local, exist_ok=True)
    out = (local, remote)

    if _is_spark(dataframe):
        index_files = _write_spark(dataframe, out, mds_kwargs, merge_index, udf_iterable,
                                   udf_kwargs)
    elif _is_dask(dataframe):
        import dask
        parts = dataframe.to_delayed()
        write = dask.delayed(_write_pandas_partition, pure=False)
        tasks = [write(p, i, out, mds_kwargs, udf_iterable, udf_kwargs)
                 for i, p in enumerate(parts)]
        index_files = list(dask.compute(*tasks))
    elif hasattr(dataframe, 'itertuples'):
        index_files = [_write_pandas_partition(dataframe, 0, out, mds_kwargs, udf_iterable,
                                               udf_kwargs)]
    else:
        raise TypeError(f'dataframe_to_mds: expected a Spark, Dask or pandas DataFrame, got '
                        f'{type(dataframe).__name__}')
    if merge_index:
        _merge_index(index_files, out)
    if not keep_local:
        shutil.rmtree(local, ignore_errors=True)
    return local, remote or ''  # Mosaic 0.13's mds_path
