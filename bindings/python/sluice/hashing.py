"""Mosaic's `streaming.base.hashing` over the engine's hashes (the C ABI's
sluice_hash): the names index.json records (hashlib's and python-xxhash's)
and their lower-case hex digests."""
import ctypes
import json

from sluice import _lib

__all__ = ['get_hash', 'get_hashes', 'is_hash']


def _names():
    out = ctypes.c_void_p()
    _lib.check(_lib.lib.sluice_hash_names(ctypes.byref(out)), 'sluice_hash_names')
    try:
        return frozenset(json.loads(ctypes.string_at(out)))
    finally:
        _lib.lib.sluice_free(out)


_HASHES = _names()


def get_hashes():
    """Every supported algorithm name."""
    return set(_HASHES)


def is_hash(algo):
    return algo in _HASHES


def get_hash(algo, data):
    """The hex digest of `data` (bytes) with `algo`."""
    if not is_hash(algo):
        raise ValueError(f'{algo} is not a supported hash algorithm.')
    data = _lib.as_bytes(data, 'get_hash')
    out = ctypes.c_void_p()
    _lib.check(_lib.lib.sluice_hash(algo.encode(), data, len(data), ctypes.byref(out)),
               'sluice_hash')
    try:
        return ctypes.string_at(out).decode('ascii')
    finally:
        _lib.lib.sluice_free(out)
