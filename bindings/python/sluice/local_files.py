"""Local files written the engine's way (sluice_file_write, sluice_file_copy):
the bytes go to the engine's hidden temporary beside the final file and are
renamed over it when whole, so a reader sees the old file or the whole new
one and a crash leaves nothing that looks complete. The package names no
temporary files of its own: the engine's one rule (base/file.h) does, and its
sweeps recognise them."""
import ctypes
import os

from sluice import _lib

__all__ = ['copy_file', 'write_file']


def write_file(path, data, where='write_file'):
    """Writes `data` (bytes-like) to `path`, replacing it; its folder must exist."""
    data = _lib.as_bytes(data, where)
    _lib.check(_lib.lib.sluice_file_write(os.fsencode(path), data, len(data)), where)


def copy_file(src, dst, where='copy_file'):
    """Copies the file `src` onto `dst`, replacing it; `dst`'s folder must
    exist. Returns the bytes copied; FileNotFoundError when `src` is missing."""
    size = ctypes.c_uint64()
    _lib.check(_lib.lib.sluice_file_copy(os.fsencode(src), os.fsencode(dst), ctypes.byref(size)),
               where)
    return size.value
