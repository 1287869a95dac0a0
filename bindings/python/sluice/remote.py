"""Small whole objects in a store folder through the C ABI (sluice_remote_*):
any URL a writer's `remote` takes (s3://, gs://, oci://, azure://,
azure-dl://, dbfs:/, file://...). `where` names the caller in errors."""
import ctypes
import json
import os

from sluice import _lib

__all__ = ['is_unity_catalog_volume', 'local_path', 'remote_read', 'remote_read_to_file',
           'remote_write', 'remote_list', 'url_scheme']


def _take_text(out):
    try:
        return ctypes.string_at(out).decode()
    finally:
        _lib.lib.sluice_free(out)


def url_scheme(url):
    """The scheme of `url` in lower case ('s3', 'dbfs', 'file', ...), '' for a
    local path: the engine's one reading (sluice_url_scheme)."""
    out = ctypes.c_void_p()
    _lib.check(_lib.lib.sluice_url_scheme(os.fsencode(str(url)), ctypes.byref(out)))
    return _take_text(out)


def is_unity_catalog_volume(url):
    """Whether `url` names a Databricks Unity Catalog volume (dbfs:/Volumes/...,
    one slash): the scheme is the engine's reading; Mosaic keys its
    downloader and uploader classes by it. The one copy of the check."""
    return (url_scheme(url) == 'dbfs' and
            [part for part in str(url).split('/') if part][:2] == ['dbfs:', 'Volumes'])


def local_path(url):
    """The local path a path or file:// URL names, as the engine's file store
    reads it (ValueError for a store URL or a file URL of another host)."""
    out = ctypes.c_void_p()
    _lib.check(_lib.lib.sluice_local_path(os.fsencode(str(url)), ctypes.byref(out)))
    return _take_text(out)


def remote_read(folder, key, where='remote_read'):
    """The bytes of object `key` in `folder` (FileNotFoundError if none)."""
    data, size = ctypes.c_void_p(), ctypes.c_uint64()
    _lib.check(_lib.lib.sluice_remote_read(folder.encode(), key.encode(), ctypes.byref(data),
                                           ctypes.byref(size)), where)
    try:
        return ctypes.string_at(data, size.value)
    finally:
        _lib.lib.sluice_free(data)


def remote_read_to_file(folder, key, path, where='remote_read_to_file'):
    """Streams object `key` in `folder` into the local file `path` (its folder
    must exist) without holding it in memory: the engine writes it under its
    temporary name and renames it into place when whole
    (sluice_remote_read_to_file). FileNotFoundError if there is no object."""
    _lib.check(_lib.lib.sluice_remote_read_to_file(folder.encode(), key.encode(),
                                                   os.fsencode(path)), where)


def remote_write(folder, key, payload, where='remote_write'):
    """Writes `payload` (bytes) as object `key` in `folder`, replacing it."""
    _lib.check(_lib.lib.sluice_remote_write(folder.encode(), key.encode(), payload,
                                            len(payload)), where)


def remote_list(folder, prefix='', where='remote_list'):
    """Sorted keys (relative to `folder`) of every object under `prefix`."""
    out = ctypes.c_void_p()
    _lib.check(_lib.lib.sluice_remote_list(folder.encode(), prefix.encode(), ctypes.byref(out)),
               where)
    try:
        return json.loads(ctypes.string_at(out))
    finally:
        _lib.lib.sluice_free(out)
