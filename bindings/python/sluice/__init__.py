"""Sluice: a drop-in for mosaicml-streaming over the Sluice engine (libsluice.so)."""
from sluice._lib import VERSION as __version__
from sluice.local import LocalDataset

__all__ = ['LocalDataset', '__version__']
