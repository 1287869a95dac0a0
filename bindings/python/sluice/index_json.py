"""index.json through the engine (sluice_index_*): the package never parses
or writes one itself, so the engine's rules (which fields, which sizes,
which basenames are safe) are the only ones."""
import ctypes
import json

from sluice import _lib

__all__ = ['merged_index', 'shard_entries']


def _take(out, size):
    try:
        return ctypes.string_at(out, size.value)
    finally:
        _lib.lib.sluice_free(out)


def shard_entries(data, source):
    """The shard entries (dicts, keys as the engine writes them) of the
    index.json bytes `data`; `source` names it in errors. A malformed or
    invalid index is the engine's error (ValueError, NotImplementedError for
    an unknown format or version)."""
    out, size = ctypes.c_void_p(), ctypes.c_uint64()
    _lib.check(_lib.lib.sluice_index_shards(data, len(data), source.encode(), ctypes.byref(out),
                                            ctypes.byref(size)))
    return json.loads(_take(out, size))


def merged_index(parts):
    """merge_index's index.json bytes over `parts`: (index.json bytes, name
    for errors, folder name its basenames get in front), in order."""
    n = len(parts)
    texts = (ctypes.c_char_p * n)(*[p[0] for p in parts])
    sizes = (ctypes.c_uint64 * n)(*[len(p[0]) for p in parts])
    sources = (ctypes.c_char_p * n)(*[p[1].encode() for p in parts])
    prefixes = (ctypes.c_char_p * n)(*[p[2].encode() for p in parts])
    out, size = ctypes.c_void_p(), ctypes.c_uint64()
    _lib.check(_lib.lib.sluice_index_merge(texts, sizes, sources, prefixes, n, ctypes.byref(out),
                                           ctypes.byref(size)))
    return _take(out, size)
