"""MDS fields through the engine, which owns every built-in encoding's byte
layout: these pieces hand it Python's values (numbers, bytes, text, pixels,
encoded list elements) and make Python's objects of what it gives back
exactly as mosaicml-streaming does (numpy scalars, str, PIL images, lists),
plus the text formats' field decoders. Which encoding uses which piece is
the one table of sluice.mds_encodings (its Encoding classes); this module
imports nothing of it. What an ndarray encoding string says is the engine's
to parse (sluice_mds_ndarray_encoding), and the header of an ndarray field
the engine's to write and read (sluice_mds_ndarray_header,
sluice_mds_ndarray_decode: NdArrayFields). Python keeps only Python's part:
pickling, Pillow's files and images, json.dumps's text of a value.
"""
import ctypes
import functools
import json
import struct
import threading
from io import BytesIO

import numpy as np

from sluice import _lib


@functools.lru_cache(maxsize=None)
def is_ndarray_dtype(name):
    """Whether the engine stores ndarrays of numpy dtype `name` (Mosaic's
    eleven: uint8..uint64, int8..int64, float16..float64)."""
    out = _lib.NDArray()
    return _lib.lib.sluice_mds_ndarray_encoding(f'ndarray:{name}'.encode('utf-8'),
                                                 ctypes.byref(out)) == 0


def ndarray_encoding(dtype, shape):
    """The encoding string of an ndarray of `dtype` (a numpy name or None)
    and `shape` (a tuple or None). A shape without a dtype has no string
    (Mosaic's NDArray(shape=...) stores the dtype in each field): its
    dimensions are checked as a one-byte dtype's."""
    if shape is None:
        return 'ndarray' if dtype is None else f'ndarray:{dtype}'
    dims = ','.join(str(d) for d in shape)
    return f'ndarray:{dtype if dtype is not None else "uint8"}:{dims}'


def check_ndarray(dtype, shape):
    """ValueError, with the engine's text, unless the engine reads an ndarray
    of `dtype` and `shape` (None: stored in each field): a known dtype, 1 to
    63 dimensions of at least 1 (Mosaic's NDArray asserts 1 <= dim), under 4
    GiB."""
    parse_ndarray_config(ndarray_encoding(dtype, shape).partition(':')[2])


def parse_ndarray_config(text):
    """(dtype or None, shape tuple or None) of the part of an ndarray
    encoding after 'ndarray:' ('' / 'int32' / 'int32:3,4'), as the engine
    parses it (sluice_mds_ndarray_encoding, the one parser); ValueError with
    the engine's text naming the encoding when malformed."""
    encoding = f'ndarray:{text}' if text else 'ndarray'
    out = _lib.NDArray()
    if _lib.lib.sluice_mds_ndarray_encoding(encoding.encode('utf-8'), ctypes.byref(out)) != 0:
        raise ValueError(_lib.last_error())
    dtype = out.dtype.decode('ascii') if out.dtype else None
    shape = tuple(out.shape[:out.ndim]) if out.ndim else None
    return dtype, shape


# --------------------------------------------------------------------------- fields by the engine
# Every built-in encoding's field is written and read by the engine
# (sluice_encode_*, sluice_mds_encode_* / sluice_mds_decode_*): these
# functions hand it Python's values as numbers, bytes or pixels and make
# Python's objects of what it gives back.

_scratch = threading.local()  # each thread's output buffer and length word
_FIRST_BUFFER = 4096


def _encoded(fn, *args, need=0):
    """The field an engine encoder `fn(*args, buf, cap, &len)` writes, as
    bytes; a buffer too short (SLUICE_ERANGE, len set) is grown once."""
    try:
        buf, cap, size, size_ref = _scratch.out
    except AttributeError:  # this thread's first field
        buf, cap, size = None, 0, ctypes.c_uint64()
        size_ref = ctypes.byref(size)
    if cap < need or buf is None:
        cap = max(need, _FIRST_BUFFER, 2 * cap)
        buf = ctypes.create_string_buffer(cap)
        _scratch.out = buf, cap, size, size_ref
    status = fn(*args, buf, cap, size_ref)
    if status == _lib.ERANGE and size.value > cap:
        cap = size.value
        buf = ctypes.create_string_buffer(cap)
        _scratch.out = buf, cap, size, size_ref
        status = fn(*args, buf, cap, size_ref)
    if status != 0:
        raise _error(status)
    return ctypes.string_at(buf, size.value)


def _error(status):
    """The exception of an encoder's refusal: ValueError naming the encoding
    (Mosaic's encoders raise ValueError for a value they cannot store)."""
    text = _lib.last_error()
    if status == _lib.EINVAL:  # the type says what the code's name ("invalid argument") says
        return ValueError(text.partition(': ')[2] or text)
    return _lib._EXCEPTIONS.get(status, RuntimeError)(text)


def _address(data):
    """(pointer argument, size) of a field given as bytes or a buffer."""
    if type(data) is bytes:
        return data, len(data)
    view = np.frombuffer(data, dtype=np.uint8)
    return view.__array_interface__['data'][0], view.size


@functools.lru_cache(maxsize=None)
def field_layout(encoding):
    """(little-endian numpy dtype, shape) of every field of `encoding` when
    the engine stores each as one fixed-size numpy value (int, int8..float64:
    shape (); ndarray:DTYPE:SHAPE), else None (sluice_mds_field_layout)."""
    out = _lib.NDArray()
    _lib.check(_lib.lib.sluice_mds_field_layout(encoding.encode('utf-8'), ctypes.byref(out)))
    if not out.dtype:
        return None
    return np.dtype(out.dtype.decode('ascii')).newbyteorder('<'), tuple(out.shape[:out.ndim])


@functools.lru_cache(maxsize=None)
def scalar_unpack(encoding):
    """f(field) -> a 1-tuple of the number a field of a scalar `encoding`
    holds (a Python int or float), by the engine's layout (field_layout)."""
    dtype, shape = field_layout(encoding)
    if shape != ():
        raise ValueError(f'{encoding}: the engine stores no scalar in its fields')
    return struct.Struct(struct_format(dtype)).unpack


def struct_format(dtype, count=1):
    """The struct format of `count` values of a little-endian numpy dtype
    (struct's standard sizes: 'q' is 8 bytes, as numpy's 'l' is not
    everywhere)."""
    code = {'i': 'bhiq', 'u': 'BHIQ', 'f': '?efd'}[dtype.kind][dtype.itemsize.bit_length() - 1]
    return f'<{count}{code}'


# How a value is handed to the engine (SLUICE_VALUE_* of sluice.h).
VALUE_FIELD, VALUE_BYTES, VALUE_INT64, VALUE_UINT64, VALUE_DOUBLE = range(5)
# How a field holds its value (SLUICE_MDS_FIELD_*).
FIELD_VALUES, FIELD_TEXT, FIELD_BYTES, FIELD_FRAMED = range(4)

_PACK_INT64 = struct.Struct('<q').pack    # the carriers of numbers: 8 bytes, the
_PACK_UINT64 = struct.Struct('<Q').pack   # host's (little-endian) order
_PACK_DOUBLE = struct.Struct('<d').pack
_INT64_END = 1 << 63


def number_value(encoding, value, integer):
    """(kind, carrier) of a Python or numpy number for a column of
    `encoding` (bytes); `integer`: the column stores integers (a float is
    cut toward zero first, as numpy's cast). Ranges and rounding are the
    engine's; a Python int no C integer carries is OverflowError unless the
    column stores floats."""
    if type(value) is int and -_INT64_END <= value < _INT64_END:  # the common case first
        return VALUE_INT64, _PACK_INT64(value)
    if isinstance(value, (float, np.floating)):
        if not integer:
            return VALUE_DOUBLE, _PACK_DOUBLE(value)
        value = int(value)
    v = int(value)
    if -_INT64_END <= v < _INT64_END:
        return VALUE_INT64, _PACK_INT64(v)
    if 0 <= v < 1 << 64:
        return VALUE_UINT64, _PACK_UINT64(v)
    if not integer:
        return VALUE_DOUBLE, _PACK_DOUBLE(float(v))  # as Python converts it
    name = encoding.decode()
    raise OverflowError(f'{name} encoding: value {v} is out of range for {name}')


def value_error(text):
    """The exception of the engine's refusal of a value (`text`: its text
    without the status name): OverflowError for a number out of a column's
    range, as numpy 2 raises, else ValueError."""
    return OverflowError(text) if ' is out of range for ' in text else ValueError(text)


def encode_value(encoding, kind, payload):
    """The field the engine writes for a value handed as `kind`
    (sluice_mds_encode_value)."""
    try:
        return _encoded(_lib.lib.sluice_mds_encode_value, encoding, kind, payload, len(payload),
                        need=len(payload) + 64)
    except ValueError as e:
        raise value_error(str(e)) from None


@functools.lru_cache(maxsize=None)
def field_form(encoding):
    """FIELD_* of sluice_mds_field_form: how a field of `encoding` holds its value."""
    form = ctypes.c_uint32()
    _lib.check(_lib.lib.sluice_mds_field_form(encoding.encode('utf-8'), ctypes.byref(form)))
    return form.value


def text_reader(encoding):
    """f(field) -> str for a text encoding: the whole field's UTF-8 when
    the engine says the field is the text (FIELD_TEXT), else the engine's
    decoder field by field."""
    if field_form(encoding) == FIELD_TEXT:
        return functools.partial(str, encoding='utf-8')  # C-level: no Python frame a field
    name = encoding.encode('utf-8')
    return lambda data: decode_text(name, data)


def bytes_reader(encoding):
    """f(field) -> bytes for a raw encoding (bytes, pkl, jpeg, png), as
    text_reader reads text."""
    if field_form(encoding) == FIELD_BYTES:
        return bytes
    name = encoding.encode('utf-8')
    return lambda data: decode_bytes(name, data)


def decode_bytes(encoding, data):
    """The value bytes inside a field of a text or raw kind, by the engine's
    decoder (sluice_mds_decode_bytes: a text kind's UTF-8 checked)."""
    field, size = _address(data)
    out = _lib.Bytes()
    status = _lib.lib.sluice_mds_decode_bytes(encoding, field, size, ctypes.byref(out))
    if status != 0:
        raise _error(status)
    return _lib.view_bytes(out)


def decode_text(encoding, data):
    """The str inside a field of a text kind, by the engine's decoder."""
    return decode_bytes(encoding, data).decode('utf-8')


def image_module():
    try:
        from PIL import Image
    except ImportError as e:  # pragma: no cover - Pillow is a soft dependency
        raise ImportError('sluice: decoding image columns needs Pillow (pip install pillow)') from e
    return Image


def encode_pil(img, encoding=b'pil'):
    """A raw PIL field (the engine writes size, mode and pixels)."""
    w, h = img.size
    pixels = img.tobytes()
    return _encoded(_lib.lib.sluice_mds_encode_pil, encoding, w, h, img.mode.encode('ascii'),
                    pixels, len(pixels), need=len(pixels) + 64)


def decode_pil(data, encoding=b'pil'):
    field, size = _address(data)
    out = _lib.MdsPil()
    status = _lib.lib.sluice_mds_decode_pil(encoding, field, size, ctypes.byref(out))
    if status != 0:
        raise _error(status)
    mode = _lib.view_bytes(out.mode).decode('ascii')
    return image_module().frombytes(mode, (out.width, out.height), _lib.view_bytes(out.pixels))


def decode_image_file(data):
    return image_module().open(BytesIO(bytes(data)))


def encode_list(encoding, parts):
    """The field of a list encoding (list[...] / jpeg_array) holding the
    already encoded elements `parts` (bytes each)."""
    items = (_lib.Bytes * max(len(parts), 1))()
    for i, part in enumerate(parts):  # each points into its bytes (alive in `parts`)
        if part:
            items[i].data = ctypes.cast(ctypes.c_char_p(part), ctypes.POINTER(ctypes.c_uint8))
            items[i].size = len(part)
    need = 8 + sum(4 + len(p) for p in parts)
    return _encoded(_lib.lib.sluice_mds_encode_list, encoding, items, len(parts), need=need)


_LIST_FIRST = 64


def decode_list(encoding, data):
    """The encoded elements (bytes each) of a list field."""
    field, size = _address(data)
    count = ctypes.c_uint32()
    items = (_lib.Bytes * _LIST_FIRST)()
    status = _lib.lib.sluice_mds_decode_list(encoding, field, size, items, _LIST_FIRST,
                                             ctypes.byref(count))
    if status == _lib.ERANGE and count.value > _LIST_FIRST:
        items = (_lib.Bytes * count.value)()
        status = _lib.lib.sluice_mds_decode_list(encoding, field, size, items, count.value,
                                                 ctypes.byref(count))
    if status != 0:
        raise _error(status)
    return [_lib.view_bytes(items[i]) for i in range(count.value)]


def decode_jpeg_array(data, encoding=b'jpeg_array'):
    parts = decode_list(encoding, data)
    if not parts:  # the engine reads an empty array; Mosaic's class refuses it
        raise ValueError('jpeg_array: a stored array must have at least one image')
    return [decode_image_file(part) for part in parts]


def make_text_decoder(fmt, json_text, encoding, column):
    """Decoder for a text format's fields: JSON value text (`json_text`,
    JSONL) or plain text (CSV/TSV) of an `encoding` column of format `fmt`."""
    if json_text:
        return lambda d: json.loads(bytes(d).decode('utf-8'))
    if encoding == 'int':
        return lambda d: int(bytes(d).decode('utf-8'))
    if encoding == 'float':
        return lambda d: float(bytes(d).decode('utf-8'))
    if encoding == 'str':
        return lambda d: bytes(d).decode('utf-8')
    raise NotImplementedError(f'column {column!r}: unsupported {fmt} encoding {encoding!r}')


# --------------------------------------------------------------------------- Python's own objects

def encode_jpeg(img):
    if isinstance(img, (bytes, bytearray)):
        return bytes(img)
    from PIL.JpegImagePlugin import JpegImageFile
    if isinstance(img, JpegImageFile) and getattr(img, 'filename', None):
        try:
            with open(img.filename, 'rb') as f:  # the original file's bytes, as Mosaic
                return f.read()
        except FileNotFoundError:
            pass  # the file is gone: encode the pixels, as Mosaic does
    out = BytesIO()
    img.save(out, format='JPEG')  # Pillow's default quality 75, as Mosaic
    return out.getvalue()


def encode_png(img):
    if isinstance(img, (bytes, bytearray)):
        return bytes(img)
    out = BytesIO()
    img.save(out, format='PNG')
    return out.getvalue()


def jpeg_array_parts(value):
    """The JPEG files of a jpeg_array value: a sequence whose elements are a
    file's bytes or a PIL image (encoded as JPEG)."""
    if isinstance(value, (bytes, bytearray, memoryview, str)) or not hasattr(value, '__iter__'):
        raise TypeError(f'jpeg_array: expected a list of JPEG files (bytes) or images, got '
                        f'{type(value).__name__}')
    parts = []
    for i, item in enumerate(value):
        if isinstance(item, (bytes, bytearray, memoryview)):
            parts.append(bytes(item))
        elif hasattr(item, 'save') and hasattr(item, 'mode'):  # a PIL image
            parts.append(encode_jpeg(item))
        else:
            raise TypeError(f'jpeg_array: element {i} is {type(item).__name__}, expected the '
                            f'bytes of a JPEG file or an image')
    return parts


class NdArrayFields:
    """The fields of an ndarray column whose encoding fixes `dtype` and
    `shape` (None: stored in each field's header). The engine writes and
    reads the header; this class keeps Mosaic's checks and texts, and the
    headers it was given, by array dtype and shape (at most _HEADERS_KEPT)."""

    _HEADERS_KEPT = 4096

    def __init__(self, dtype, shape):
        self.dtype = dtype
        self.shape = shape
        self._column = _lib.NDArray()
        if dtype is not None:
            self._column.dtype = dtype.encode('ascii')
        if shape is not None:
            self._column.ndim = len(shape)
            for i, d in enumerate(shape):
                self._column.shape[i] = d
        self._column_ref = ctypes.byref(self._column)
        self._out = threading.local()  # each thread's sluice_ndarray for decode
        self._headers = {}

    def __reduce__(self):
        return NdArrayFields, (self.dtype, self.shape)

    def _header(self, name, shape):
        head = self._headers.get((name, shape))
        if head is None:
            buf = (ctypes.c_uint8 * _lib.MAX_NDARRAY_HEADER)()
            size = ctypes.c_uint64()
            dims = (ctypes.c_uint64 * len(shape))(*shape)
            _lib.check(_lib.lib.sluice_mds_ndarray_header(
                ctypes.byref(self._column), name.encode('ascii'), len(shape), dims, buf,
                len(buf), ctypes.byref(size)), 'ndarray')
            head = bytes(buf[:size.value])
            if len(self._headers) >= self._HEADERS_KEPT:
                self._headers.clear()
            self._headers[(name, shape)] = head
        return head

    def encode(self, value):
        """Stored bytes of a field, with Mosaic's checks in Mosaic's order
        and its error texts (users match them)."""
        arr = np.asarray(value)
        name = arr.dtype.name
        if not is_ndarray_dtype(name):
            raise ValueError(f'Unsupported dtype: {name}.')
        if self.dtype is not None and name != self.dtype:
            raise ValueError(f'Wrong dtype: expected {self.dtype}, got {name}.')
        if arr.size == 0:
            raise ValueError(f'Attempting to encode a numpy array with 0 elements.')
        if self.shape is None:
            if arr.ndim >= 64:
                raise ValueError(f'Array has too many axes: maximum 63, got {arr.ndim}.')
            if arr.ndim == 0:
                raise ValueError(f'Attempting to encode a scalar with NDArray encoding. '
                                 f'Please use a scalar encoding.')
        elif arr.shape != self.shape:
            raise ValueError(f'Wrong shape: expected {self.shape}, got {arr.shape}.')
        head = self._header(name, arr.shape)
        return head + np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder('<')).tobytes()

    def decode(self, data):
        """A read-only numpy array viewing the values inside `data`;
        ValueError with the engine's text when the field is malformed."""
        if type(data) is bytes:
            field, size = data, len(data)
        else:  # a buffer (memoryview, bytearray, ...) viewed in place
            view = np.frombuffer(data, dtype=np.uint8)
            field, size = view.__array_interface__['data'][0], view.size
        try:
            out, out_ref = self._out.pair
        except AttributeError:  # this thread's first field
            out = _lib.NDArray()
            out_ref = ctypes.byref(out)
            self._out.pair = out, out_ref
        if _lib.lib.sluice_mds_ndarray_decode(self._column_ref, field, size, out_ref) != 0:
            raise ValueError(_lib.last_error())
        # The values end the field.
        arr = np.frombuffer(data, dtype=_little_endian(out.dtype), offset=size - out.data.size)
        arr = arr.reshape(tuple(out.shape[:out.ndim]))
        arr.flags.writeable = False
        return arr


@functools.lru_cache(maxsize=None)
def _little_endian(name):
    return np.dtype(name.decode('ascii')).newbyteorder('<')
