"""MDS column encodings in Python: stored bytes <-> Python values, exactly as
mosaicml-streaming decodes and encodes them (numpy scalars for intN/uintN/
floatN, Python int for `int`, Decimal for `str_decimal`, PIL images, ...).

Decoders take a bytes-like object; encoders return bytes. A Python `bytes`
value handed to an encoder is stored as is, whatever the encoding (Mosaic's
writer does the same).
"""
import json
import pickle
import struct
from decimal import Decimal
from io import BytesIO

import numpy as np

_SCALARS = {
    'int8': np.int8, 'int16': np.int16, 'int32': np.int32, 'int64': np.int64,
    'uint8': np.uint8, 'uint16': np.uint16, 'uint32': np.uint32, 'uint64': np.uint64,
    'float16': np.float16, 'float32': np.float32, 'float64': np.float64,
}
_INT_STRUCT = {'int8': '<b', 'int16': '<h', 'int32': '<i', 'int64': '<q', 'uint8': '<B',
               'uint16': '<H', 'uint32': '<I', 'uint64': '<Q', 'int': '<q'}

_ND_CODES = {8: 'uint8', 9: 'int8', 16: 'uint16', 17: 'int16', 18: 'float16', 32: 'uint32',
             33: 'int32', 34: 'float32', 64: 'uint64', 65: 'int64', 66: 'float64'}
_ND_DTYPE_CODE = {v: k for k, v in _ND_CODES.items()}
_SHAPE_WORDS = {0: '<B', 1: '<H', 2: '<I', 3: '<Q'}

IMAGE_ENCODINGS = frozenset(['pil', 'jpeg', 'png'])
LIST_IMAGE_ENCODINGS = {'list[pil]': 'pil', 'list[jpeg]': 'jpeg', 'list[png]': 'png'}


def parse_ndarray_encoding(encoding):
    """(dtype or None, shape tuple or None) for ndarray encodings, else None."""
    parts = encoding.split(':')
    if parts[0] != 'ndarray' or len(parts) > 3:
        return None
    dtype = parts[1] if len(parts) > 1 else None
    if dtype is not None and dtype not in _ND_DTYPE_CODE:
        raise ValueError(f'ndarray encoding {encoding!r}: unknown dtype {dtype!r}')
    shape = None
    if len(parts) == 3:
        shape = tuple(int(d) for d in parts[2].split(','))
    return dtype, shape


# --------------------------------------------------------------------------- decoding

def _image_module():
    try:
        from PIL import Image
    except ImportError as e:  # pragma: no cover - Pillow is a soft dependency
        raise ImportError('sluice: decoding image columns needs Pillow (pip install pillow)') from e
    return Image


def decode_pil(data):
    w, h, n = struct.unpack_from('<III', data, 0)
    mode = bytes(data[12:12 + n]).decode('ascii')
    return _image_module().frombytes(mode, (w, h), bytes(data[12 + n:]))


def decode_image_file(data):
    return _image_module().open(BytesIO(bytes(data)))


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


def decode_list_images(kind, data):
    _, count = struct.unpack_from('<II', data, 0)
    dec = decode_pil if kind == 'pil' else decode_image_file
    return [dec(part) for part in split_lengths(data, 8, count)]


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
        if code not in _ND_CODES:
            raise ValueError(f'ndarray: unknown dtype code {code}')
        dtype = _ND_CODES[code]
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


def make_decoder(encoding, column):
    """A function stored-bytes -> Python value for `encoding`. Unsafe
    encodings (pkl) are decoded: refusing them is the engine's, when a
    dataset opens."""
    if encoding == 'bytes':
        return bytes
    if encoding == 'str':
        return lambda d: bytes(d).decode('utf-8')
    if encoding == 'int':
        return lambda d: struct.unpack('<q', d)[0]
    if encoding in _SCALARS:
        dt = np.dtype(_SCALARS[encoding]).newbyteorder('<')
        scalar = _SCALARS[encoding]
        return lambda d: scalar(np.frombuffer(d, dt)[0])
    if encoding == 'str_int':
        return lambda d: int(bytes(d).decode('utf-8'))
    if encoding == 'str_float':
        return lambda d: float(bytes(d).decode('utf-8'))
    if encoding == 'str_decimal':
        return lambda d: Decimal(bytes(d).decode('utf-8'))
    if encoding == 'json':
        return lambda d: json.loads(bytes(d).decode('utf-8'))
    if encoding == 'pkl':
        return lambda d: pickle.loads(bytes(d))
    if encoding == 'pil':
        return decode_pil
    if encoding in ('jpeg', 'png'):
        return decode_image_file
    if encoding in LIST_IMAGE_ENCODINGS:
        kind = LIST_IMAGE_ENCODINGS[encoding]
        return lambda d: decode_list_images(kind, d)
    if encoding in ('jpeg_array', 'jpegarray'):
        return decode_jpeg_array
    nd = parse_ndarray_encoding(encoding)
    if nd is not None:
        dtype, shape = nd
        # The field arrives as a fresh bytes object: a read-only view over it
        # (as Mosaic's np.frombuffer) costs no second copy.
        return lambda d: decode_ndarray(dtype, shape, d, copy=False)
    decode = _users_own_decoder(encoding)
    if decode is not None:
        return decode
    raise NotImplementedError(f'column {column!r}: unsupported encoding {encoding!r}')


def _custom_coder(encoding):
    from sluice.mds_encodings import custom_coder  # it imports this module
    return custom_coder(encoding)


def _users_own_decoder(encoding):
    """The decoder of an encoding that is not built in (the engine hands its
    fields out as stored), or None for a built-in name."""
    from sluice import mds_encodings  # it imports this module
    if mds_encodings.is_builtin_name(encoding):
        return None
    coder = mds_encodings.get_coder(encoding)
    if coder is not None:  # registered
        return lambda d: coder.decode(bytes(d))
    # Not registered: as Mosaic, the registry is asked when a sample is
    # decoded (the class may be registered after the dataset is made), and
    # decoding fails then with mds_decode's ValueError('Unsupported encoding').
    return lambda d: mds_encodings.mds_decode(encoding, bytes(d))


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


_IMAGE_ENCODERS = {'pil': encode_pil, 'jpeg': encode_jpeg, 'png': encode_png}


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


def encode_ndarray(dtype, shape, value, column=None):
    """Stored bytes of an ndarray field (header per the encoding string), with
    Mosaic's checks in Mosaic's order and its error texts (users match them),
    prefixed by the column when there is one."""
    where = f'column {column!r}: ' if column is not None else ''
    arr = np.asarray(value)
    if arr.dtype.name not in _ND_DTYPE_CODE:
        raise ValueError(f'{where}Unsupported dtype: {arr.dtype.name}.')
    if dtype is not None and arr.dtype.name != dtype:
        raise ValueError(f'{where}Wrong dtype: expected {dtype}, got {arr.dtype.name}.')
    if arr.size == 0:
        raise ValueError(f'{where}Attempting to encode a numpy array with 0 elements.')
    head = b''
    if dtype is None:
        head += bytes([_ND_DTYPE_CODE[arr.dtype.name]])
    if shape is None:
        if arr.ndim >= 64:
            raise ValueError(f'{where}Array has too many axes: maximum 63, got {arr.ndim}.')
        if arr.ndim == 0:
            raise ValueError(f'{where}Attempting to encode a scalar with NDArray encoding. '
                             f'Please use a scalar encoding.')
        top = max(arr.shape)
        code = 0 if top < 256 else 1 if top < 65536 else 2 if top < (1 << 32) else 3
        head += bytes([(arr.ndim << 2) | code])
        head += struct.pack('<' + _SHAPE_WORDS[code][1] * arr.ndim, *arr.shape)
    elif tuple(arr.shape) != shape:
        raise ValueError(f'{where}Wrong shape: expected {shape}, got {tuple(arr.shape)}.')
    return head + np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder('<')).tobytes()


def make_encoder(encoding, column):
    """A function Python value -> stored bytes for an MDS column."""
    def wrap(fn):
        def enc(value):
            if isinstance(value, bytes):
                return value  # Mosaic stores bytes as is whatever the encoding
            return fn(value)
        return enc

    if encoding == 'bytes':
        def enc_bytes(value):
            if isinstance(value, (bytearray, memoryview)):
                return bytes(value)
            raise TypeError(f'column {column!r} (bytes): got {type(value).__name__}')
        return wrap(enc_bytes)
    if encoding == 'str':
        return wrap(lambda v: _typed(column, encoding, v, str).encode('utf-8'))
    if encoding in _INT_STRUCT:
        fmt = _INT_STRUCT[encoding]

        def enc_int(v):
            try:
                return struct.pack(fmt, int(v) if isinstance(v, np.integer) else v)
            except struct.error as e:
                raise ValueError(f'column {column!r} ({encoding}): {v!r} is out of range') from e
        return wrap(enc_int)
    if encoding in _SCALARS:
        scalar = _SCALARS[encoding]
        le = np.dtype(scalar).newbyteorder('<')
        return wrap(lambda v: np.asarray(scalar(v)).astype(le).tobytes())
    if encoding in ('str_int', 'str_float', 'str_decimal'):
        return wrap(lambda v: str(v).encode('utf-8'))
    if encoding == 'json':
        return wrap(lambda v: json.dumps(v.tolist() if isinstance(v, np.ndarray) else v)
                    .encode('utf-8'))
    if encoding == 'pkl':
        return wrap(lambda v: pickle.dumps(v, protocol=4))
    if encoding in _IMAGE_ENCODERS:
        return wrap(_IMAGE_ENCODERS[encoding])
    if encoding in LIST_IMAGE_ENCODINGS:
        one = _IMAGE_ENCODERS[LIST_IMAGE_ENCODINGS[encoding]]
        return wrap(lambda v: pack_parts([one(x) for x in v], reserved=True))
    if encoding in ('jpeg_array', 'jpegarray'):
        return wrap(lambda v: pack_parts(jpeg_array_parts(v), reserved=False))
    nd = parse_ndarray_encoding(encoding)
    if nd is not None:
        dtype, shape = nd
        return wrap(lambda v: encode_ndarray(dtype, shape, v, column))
    coder = _custom_coder(encoding)
    if coder is not None:  # a user's own: stored as its class encodes it
        return wrap(coder.encode)
    raise NotImplementedError(f'column {column!r}: unsupported MDS encoding {encoding!r}')


def _typed(column, encoding, value, ty):
    if not isinstance(value, ty):
        raise TypeError(f'column {column!r} ({encoding}): expected {ty.__name__}, got '
                        f'{type(value).__name__}')
    return value
