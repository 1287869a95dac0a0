"""The byte layouts of MDS column encodings in Python: the pieces that turn
stored bytes into Python values and back exactly as mosaicml-streaming does
(numpy scalars for intN/uintN/floatN, PIL images, ndarray headers, image
lists), and the text formats' field decoders. Which encoding uses which
piece is the one table of sluice.mds_encodings (its Encoding classes),
checked against the engine's list of encodings and sizes; this module
imports nothing of it. What an ndarray encoding string says is the engine's
to parse (sluice_mds_ndarray_encoding), and the header of an ndarray field
(dtype code, shape words) the engine's to write and read
(sluice_mds_ndarray_header, sluice_mds_ndarray_decode: NdArrayFields).
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


# --------------------------------------------------------------------------- decoding

def image_module():
    try:
        from PIL import Image
    except ImportError as e:  # pragma: no cover - Pillow is a soft dependency
        raise ImportError('sluice: decoding image columns needs Pillow (pip install pillow)') from e
    return Image


def decode_pil(data):
    w, h, n = struct.unpack_from('<III', data, 0)
    mode = bytes(data[12:12 + n]).decode('ascii')
    return image_module().frombytes(mode, (w, h), bytes(data[12 + n:]))


def decode_image_file(data):
    return image_module().open(BytesIO(bytes(data)))


def split_lengths(data, pos, count):
    lengths = struct.unpack_from(f'<{count}I', data, pos)
    pos += 4 * count
    out = []
    for n in lengths:
        out.append(data[pos:pos + n])
        pos += n
    if pos > len(data):
        raise ValueError(f'image list: element lengths sum past the field ({len(data)} bytes)')
    return out


def decode_jpeg_array(data):
    (count,) = struct.unpack_from('<I', data, 0)
    if count == 0:
        raise ValueError('jpeg_array: a stored array must have at least one image')
    return [decode_image_file(part) for part in split_lengths(data, 4, count)]


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


# --------------------------------------------------------------------------- encoding

def encode_pil(img):
    mode = img.mode.encode('ascii')
    w, h = img.size
    return struct.pack('<III', w, h, len(mode)) + mode + img.tobytes()


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


def pack_parts(parts, reserved):
    head = (struct.pack('<I', 0) if reserved else b'') + struct.pack('<I', len(parts))
    return head + struct.pack(f'<{len(parts)}I', *map(len, parts)) + b''.join(parts)


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
