"""Sluice: a drop-in for mosaicml-streaming over the Sluice engine (libsluice.so).

    from sluice import StreamingDataset, Stream, StreamingDataLoader, MDSWriter
"""
from sluice._lib import VERSION as __version__
from sluice.dataset import Stream, StreamingDataset
from sluice.local import LocalDataset
from sluice.merge import merge_index
from sluice.packing import PackSpec
from sluice.metrics_sinks import log_to_mlflow, log_to_tensorboard, progress
from sluice.parquet_dataset import load_parquet
from sluice.plan import Plan
from sluice import engine
from sluice import databricks_runtime as _databricks_runtime
from sluice.writer import (CSVWriter, JSONWriter, MDSWriter, TSVWriter, XSVWriter,
                           parse_size_limit)

__all__ = ['StreamingDataset', 'Stream', 'LocalDataset', 'MDSWriter', 'JSONWriter', 'CSVWriter',
           'TSVWriter', 'XSVWriter', 'merge_index', 'dataframe_to_mds', 'Plan', 'parse_size_limit',
           'load_parquet', 'progress', 'log_to_mlflow', 'log_to_tensorboard', 'PackSpec', '__version__']

_databricks_runtime.install()

try:
    from sluice.dataloader import StreamingDataLoader
    __all__.append('StreamingDataLoader')
except ImportError:  # torch not installed
    pass


def dataframe_to_mds(*args, **kwargs):
    """See sluice.dataframe.dataframe_to_mds."""
    from sluice.dataframe import dataframe_to_mds as impl
    return impl(*args, **kwargs)
