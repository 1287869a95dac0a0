"""The byte layouts of MDS column encodings in Python: the pieces that turn
stored bytes into Python values and back exactly as mosaicml-streaming does
(numpy scalars for intN/uintN/floatN, PIL images, ndarray headers, image
lists), and the text formats' field decoders. Which encoding uses which
piece is the one table of sluice.mds_encodings (its Encoding classes),
checked against the engine's list of encodings and sizes; this module
imports nothing of it. What an ndarray encoding string says is the engine's
to parse (sluice_mds_ndarray_encoding).
"""
import ctypes
import json
import struct
from io import BytesIO

import numpy as np

from sluice import _lib

ND_CODES = {8: 'uint8', 9: 'int8', 16: 'uint16', 17: 'int16', 18: 'float16', 32: 'uint32',
             33: 'int32', 34: 'float32', 64: 'uint64', 65: 'int64', 66: 'float64'}
# ndarray dtype name -> Mosaic's code.
ND_DTYPE_CODES = {v: k for k, v in ND_CODES.items()}
_SHAPE_WORDS = {0: '<B', 1: '<H', 2: '<I', 3: '<Q'}

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


def decode_ndarray(dtype, shape, data, copy=True):
    """numpy array from an ndarray field (header per the encoding string).
    With copy=False the array is a read-only view of `data`."""
    pos = 0
    if dtype is None:
        code = data[0]
        if code not in ND_CODES:
            raise ValueError(f'ndarray: unknown dtype code {code}')
        dtype = ND_CODES[code]
        pos = 1
    if shape is None:
        b = data[pos]
        ndim, shape_code = b >> 2, b & 3
        fmt = _SHAPE_WORDS[shape_code]
        shape = struct.unpack_from('<' + fmt[1] * ndim, data, pos + 1)
        pos += 1 + ndim * struct.calcsize(fmt)
    arr = np.frombuffer(data, dtype=np.dtype(dtype).newbyteorder('<'), offset=pos).reshape(shape)
    if copy:
        return arr.copy()
    arr.flags.writeable = False
    return arr


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


def encode_ndarray(dtype, shape, value):
    """Stored bytes of an ndarray field (header per the encoding string), with
    Mosaic's checks in Mosaic's order and its error texts (users match them)."""
    arr = np.asarray(value)
    if arr.dtype.name not in ND_DTYPE_CODES:
        raise ValueError(f'Unsupported dtype: {arr.dtype.name}.')
    if dtype is not None and arr.dtype.name != dtype:
        raise ValueError(f'Wrong dtype: expected {dtype}, got {arr.dtype.name}.')
    if arr.size == 0:
        raise ValueError(f'Attempting to encode a numpy array with 0 elements.')
    head = b''
    if dtype is None:
        head += bytes([ND_DTYPE_CODES[arr.dtype.name]])
    if shape is None:
        if arr.ndim >= 64:
            raise ValueError(f'Array has too many axes: maximum 63, got {arr.ndim}.')
        if arr.ndim == 0:
            raise ValueError(f'Attempting to encode a scalar with NDArray encoding. '
                             f'Please use a scalar encoding.')
        top = max(arr.shape)
        code = 0 if top < 256 else 1 if top < 65536 else 2 if top < (1 << 32) else 3
        head += bytes([(arr.ndim << 2) | code])
        head += struct.pack('<' + _SHAPE_WORDS[code][1] * arr.ndim, *arr.shape)
    elif tuple(arr.shape) != shape:
        raise ValueError(f'Wrong shape: expected {shape}, got {tuple(arr.shape)}.')
    return head + np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder('<')).tobytes()
