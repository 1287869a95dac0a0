"""Sluice: a drop-in for mosaicml-streaming over the Sluice engine (libsluice.so)."""
from sluice._lib import VERSION as __version__
from sluice.local import LocalDataset
from sluice.merge import merge_index
from sluice.writer import CSVWriter, JSONWriter, MDSWriter, TSVWriter, parse_size_limit

__all__ = ['LocalDataset', 'MDSWriter', 'JSONWriter', 'CSVWriter', 'TSVWriter', 'merge_index',
           'parse_size_limit', '__version__']
