"""Loads libsluice.so through ctypes, declares the C prototypes, and turns
C status codes into Python exceptions carrying sluice_last_error() text.

The library is looked up, in order: $SLUICE_LIBRARY (a path to the .so),
next to this package (sluice/libsluice.so), then the usual install
locations of `meson install` (/usr/local/lib*, /usr/lib*), then the
dynamic loader's search path.
"""
import ctypes
import os

ABI_VERSION = 2  # SLUICE_ABI_VERSION of the sluice.h this package was written against

# sluice_status codes (bindings/c/sluice.h).
OK = 0
EINVAL = 1
ENOTFOUND = 2
ECORRUPT = 3
EHASH = 4
EUNIMPLEMENTED = 5
EIO = 6
ERANGE = 7
EPERM = 8
EUNAVAILABLE = 9
ETIMEDOUT = 10
ECANCELLED = 11
EINTERNAL = 12

_EXCEPTIONS = {
    EINVAL: ValueError,
    ENOTFOUND: FileNotFoundError,
    ECORRUPT: ValueError,
    EHASH: ValueError,
    EUNIMPLEMENTED: NotImplementedError,
    EIO: OSError,
    ERANGE: IndexError,
    EPERM: PermissionError,
    EUNAVAILABLE: OSError,
    ETIMEDOUT: TimeoutError,
    ECANCELLED: RuntimeError,
    EINTERNAL: RuntimeError,
}


class SluiceLibraryNotFound(ImportError):
    """libsluice.so could not be found or is not compatible."""


class Bytes(ctypes.Structure):
    _fields_ = [('data', ctypes.POINTER(ctypes.c_uint8)), ('size', ctypes.c_uint64)]


MAX_NDIM = 63


class NDArray(ctypes.Structure):
    _fields_ = [('dtype', ctypes.c_char_p), ('ndim', ctypes.c_uint32),
                ('shape', ctypes.c_uint64 * MAX_NDIM), ('data', Bytes)]


class WriterOptions(ctypes.Structure):
    _fields_ = [('format', ctypes.c_char_p), ('compression', ctypes.c_char_p),
                ('hashes', ctypes.POINTER(ctypes.c_char_p)), ('num_hashes', ctypes.c_uint32),
                ('size_limit', ctypes.c_uint64), ('no_size_limit', ctypes.c_uint32),
                ('newline', ctypes.c_char_p), ('separator', ctypes.c_char_p),
                ('remote', ctypes.c_char_p), ('keep_local', ctypes.c_uint32),
                ('max_workers', ctypes.c_uint32), ('upload_attempts', ctypes.c_uint32)]


def _candidates():
    env = os.environ.get('SLUICE_LIBRARY')
    if env:
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    out = [os.path.join(here, 'libsluice.so')]
    for prefix in ('/usr/local', '/usr'):
        for libdir in ('lib', 'lib64', 'lib/x86_64-linux-gnu', 'lib/aarch64-linux-gnu'):
            out.append(os.path.join(prefix, libdir, 'libsluice.so'))
    out.append('libsluice.so')  # the loader's own search path (LD_LIBRARY_PATH, ld.so.cache)
    return out


def _load():
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(f'{path} (missing)')
            continue
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            tried.append(f'{path} ({e})')
    raise SluiceLibraryNotFound(
        'sluice: cannot load libsluice.so. Set SLUICE_LIBRARY to its path (e.g. '
        'SLUICE_LIBRARY=$PWD/build/bindings/c/libsluice.so after `meson setup build && ninja -C '
        'build`), copy it next to the sluice package, or `meson install` it. Tried: ' +
        '; '.join(tried))


lib = _load()

_c = ctypes
_P = ctypes.POINTER
_status = ctypes.c_int


def _proto(name, restype, *argtypes):
    fn = getattr(lib, name)
    fn.restype = restype
    fn.argtypes = list(argtypes)
    return fn


_proto('sluice_abi_version', ctypes.c_uint32)
_proto('sluice_version', ctypes.c_char_p)
_proto('sluice_last_error', ctypes.c_char_p)
_proto('sluice_free', None, ctypes.c_void_p)

_proto('sluice_dataset_open', _status, ctypes.c_char_p, ctypes.c_uint32, _P(ctypes.c_void_p))
_proto('sluice_dataset_close', None, ctypes.c_void_p)
_proto('sluice_dataset_num_samples', ctypes.c_uint64, ctypes.c_void_p)
_proto('sluice_dataset_num_shards', ctypes.c_uint32, ctypes.c_void_p)
_proto('sluice_dataset_num_columns', ctypes.c_uint32, ctypes.c_void_p)
_proto('sluice_dataset_column_name', ctypes.c_char_p, ctypes.c_void_p, ctypes.c_uint32)
_proto('sluice_dataset_column_encoding', ctypes.c_char_p, ctypes.c_void_p, ctypes.c_uint32)
_proto('sluice_dataset_format', ctypes.c_char_p, ctypes.c_void_p)
_proto('sluice_dataset_get', _status, ctypes.c_void_p, ctypes.c_uint64, _P(Bytes), ctypes.c_uint32)
_proto('sluice_dataset_get_raw', _status, ctypes.c_void_p, ctypes.c_uint64, _P(Bytes))

_proto('sluice_decode_int64', _status, ctypes.c_char_p, Bytes, _P(ctypes.c_int64))
_proto('sluice_decode_uint64', _status, ctypes.c_char_p, Bytes, _P(ctypes.c_uint64))
_proto('sluice_decode_double', _status, ctypes.c_char_p, Bytes, _P(ctypes.c_double))
_proto('sluice_decode_ndarray', _status, ctypes.c_char_p, Bytes, _P(NDArray))

_proto('sluice_writer_open', _status, ctypes.c_char_p, _P(ctypes.c_char_p), _P(ctypes.c_char_p),
       ctypes.c_uint32, _P(WriterOptions), _P(ctypes.c_void_p))
_proto('sluice_writer_write', _status, ctypes.c_void_p, _P(Bytes), ctypes.c_uint32)
_proto('sluice_writer_finish', _status, ctypes.c_void_p)
_proto('sluice_writer_close', None, ctypes.c_void_p)
_proto('sluice_writer_uploaded', _status, ctypes.c_void_p, _P(ctypes.c_uint64),
       _P(ctypes.c_uint64))
_proto('sluice_remote_read', _status, ctypes.c_char_p, ctypes.c_char_p, _P(ctypes.c_void_p),
       _P(ctypes.c_uint64))
_proto('sluice_remote_write', _status, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
       ctypes.c_uint64)
_proto('sluice_remote_list', _status, ctypes.c_char_p, ctypes.c_char_p, _P(ctypes.c_void_p))
for _name, _ty in (('int64', ctypes.c_int64), ('uint64', ctypes.c_uint64),
                   ('double', ctypes.c_double)):
    _proto(f'sluice_encode_{_name}', _status, ctypes.c_char_p, _ty, _P(ctypes.c_uint8),
           ctypes.c_uint64, _P(ctypes.c_uint64))

_proto('sluice_plan_create', _status, ctypes.c_char_p, _P(ctypes.c_void_p))
_proto('sluice_plan_free', None, ctypes.c_void_p)
_proto('sluice_plan_shape', None, ctypes.c_void_p, _P(ctypes.c_uint64))
_proto('sluice_plan_worker_ids', _status, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32,
       ctypes.c_uint32, _P(_P(ctypes.c_int64)), _P(ctypes.c_uint64))
_proto('sluice_plan_to_json', _status, ctypes.c_void_p, _P(ctypes.c_void_p))

_loaded_abi = lib.sluice_abi_version()
if _loaded_abi != ABI_VERSION:
    raise SluiceLibraryNotFound(
        f'sluice: {lib._name} has ABI version {_loaded_abi}, this package needs {ABI_VERSION}; '
        'rebuild libsluice.so from the same checkout as the package or point SLUICE_LIBRARY at '
        'a matching one')

VERSION = lib.sluice_version().decode()


def last_error():
    return lib.sluice_last_error().decode('utf-8', 'replace')


def check(status, what=None):
    """Raises the Python exception for a non-zero sluice_status."""
    if status == OK:
        return
    text = last_error()
    if what:
        text = f'{what}: {text}'
    raise _EXCEPTIONS.get(status, RuntimeError)(text)


def view_bytes(b):
    """A copy of a sluice_bytes view as Python bytes."""
    if b.size == 0:
        return b''
    return ctypes.string_at(b.data, b.size)


def view_memory(b):
    """A zero-copy memoryview over a sluice_bytes view (valid as long as the
    view's owner; callers keep a reference to the owner)."""
    if b.size == 0:
        return memoryview(b'')
    arr = (ctypes.c_uint8 * b.size).from_address(ctypes.addressof(b.data.contents))
    return memoryview(arr).cast('B')
