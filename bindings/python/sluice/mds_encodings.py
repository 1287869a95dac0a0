"""mosaicml-streaming's `streaming.base.format.mds.encodings` API over
Sluice's MDS byte rules (sluice.encodings holds the layouts): the `Encoding`
classes, the `_encodings` registry (name -> class) that users extend with
their own encodings, and mds_encode / mds_decode / get_mds_encodings /
is_mds_encoding / is_mds_encoding_safe / get_mds_encoded_size.

The registry is the package's one table of MDS encodings: the datasets
decode every field with its class (make_decoder), and at import its names
and fixed sizes are checked against the engine's (sluice_mds_encoding_names,
sluice_mds_encoding_size). The writer encodes every field with the class
too (make_encoder), and batch columns take their arrays' layout from it
(array_layout).

As Mosaic's, an encoder handed a value of the wrong type raises
AttributeError ('data should be of type ...'); mds_encode stores a `bytes`
value as is whatever the encoding."""
import ctypes
import json
import pickle
import struct
from abc import ABC, abstractmethod
from decimal import Decimal

import numpy as np

from sluice import _lib
from sluice import encodings as _layout

__all__ = ['get_mds_encoded_size', 'get_mds_encodings', 'is_mds_encoding', 'mds_decode',
           'mds_encode', 'is_mds_encoding_safe']


def _image_class():
    return _layout.image_module().Image


class Encoding(ABC):
    """Encodes objects of one type to bytes and back. `size` is the fixed
    encoded size in bytes, or None when it varies."""

    size = None

    def array_layout(self):
        """(little-endian numpy dtype, shape) of every field when each is one
        fixed-size numpy value (a batch column is then one array), else None."""
        return None

    @abstractmethod
    def encode(self, obj):
        raise NotImplementedError

    @abstractmethod
    def decode(self, data):
        raise NotImplementedError

    @staticmethod
    def _validate(data, expected_type):
        # Mosaic's exception type and text, which callers catch and match.
        if not isinstance(data, expected_type):
            raise AttributeError(f'data should be of type {expected_type}, but instead, found '
                                 f'as {type(data)}')


class Bytes(Encoding):
    """bytes, stored as they are (a bytearray or memoryview as its bytes)."""

    def encode(self, obj):
        if isinstance(obj, (bytearray, memoryview)):
            return bytes(obj)
        self._validate(obj, bytes)
        return obj

    def decode(self, data):
        return data


class Str(Encoding):
    """str as UTF-8."""

    def encode(self, obj):
        self._validate(obj, str)
        return obj.encode('utf-8')

    def decode(self, data):
        return bytes(data).decode('utf-8')


class Int(Encoding):
    """Python int (or numpy integer) as little-endian int64."""

    size = 8

    def encode(self, obj):
        if isinstance(obj, np.integer):
            obj = int(obj)
        self._validate(obj, int)
        try:
            return struct.pack('<q', obj)
        except struct.error:
            raise OverflowError(f'int encoding: {obj} does not fit in int64') from None

    def decode(self, data):
        return struct.unpack('<q', data)[0]

    def array_layout(self):
        return np.dtype('<i8'), ()


class NDArray(Encoding):
    """numpy array; dtype and shape are fixed by the encoding string
    ('ndarray:int32:3,4') or stored in a header before the values."""

    def __init__(self, dtype=None, shape=None):
        if shape is not None:
            shape = tuple(int(d) for d in shape)
        _layout.check_ndarray(dtype, shape)
        self.dtype = dtype
        self.shape = shape
        self._fields = _layout.NdArrayFields(dtype, shape)
        self.size = None
        if dtype is not None and shape is not None:
            self.size = int(np.prod(shape)) * np.dtype(dtype).itemsize

    @classmethod
    def from_str(cls, text):
        """From the part after 'ndarray:' ('' / 'int32' / 'int32:3,4')."""
        return cls(*_layout.parse_ndarray_config(text))

    def encode(self, obj):
        return self._fields.encode(obj)

    def decode(self, data):
        return self._fields.decode(data)

    def array_layout(self):
        if self.size is None:
            return None
        return np.dtype(self.dtype).newbyteorder('<'), self.shape


class Scalar(Encoding):
    """One numpy scalar of `dtype`, little-endian. An integer type refuses a
    number outside its range (OverflowError, as numpy 2; numpy 1 would wrap
    it around)."""

    def __init__(self, dtype):
        self.dtype = dtype
        self._stored = np.dtype(dtype).newbyteorder('<')
        self.size = self._stored.itemsize
        self._range = None
        if np.issubdtype(self._stored, np.integer):
            info = np.iinfo(self._stored)
            self._range = (int(info.min), int(info.max))

    def encode(self, obj):
        if (self._range is not None and isinstance(obj, (int, float, np.number)) and
                not (self._range[0] <= obj <= self._range[1])):
            raise OverflowError(f'{self._stored.name} encoding: {obj!r} is out of range '
                                f'[{self._range[0]}, {self._range[1]}]')
        return np.asarray(self.dtype(obj)).astype(self._stored).tobytes()

    def decode(self, data):
        return self.dtype(np.frombuffer(data, self._stored)[0])

    def array_layout(self):
        return self._stored, ()


class UInt8(Scalar):

    def __init__(self):
        super().__init__(np.uint8)


class UInt16(Scalar):

    def __init__(self):
        super().__init__(np.uint16)


class UInt32(Scalar):

    def __init__(self):
        super().__init__(np.uint32)


class UInt64(Scalar):

    def __init__(self):
        super().__init__(np.uint64)


class Int8(Scalar):

    def __init__(self):
        super().__init__(np.int8)


class Int16(Scalar):

    def __init__(self):
        super().__init__(np.int16)


class Int32(Scalar):

    def __init__(self):
        super().__init__(np.int32)


class Int64(Scalar):

    def __init__(self):
        super().__init__(np.int64)


class Float16(Scalar):

    def __init__(self):
        super().__init__(np.float16)


class Float32(Scalar):

    def __init__(self):
        super().__init__(np.float32)


class Float64(Scalar):

    def __init__(self):
        super().__init__(np.float64)


class StrEncoding(Encoding):
    """A number stored as its decimal text (any precision). Subclasses say
    which type."""

    value_type = None

    def encode(self, obj):
        self._validate(obj, self.value_type)
        return str(obj).encode('utf-8')

    def decode(self, data):
        return self.value_type(bytes(data).decode('utf-8'))


class StrInt(StrEncoding):
    value_type = int


class StrFloat(StrEncoding):
    value_type = float


class StrDecimal(StrEncoding):
    value_type = Decimal


class PIL(Encoding):
    """PIL image, raw: width, height, mode length (uint32 each), mode, pixels."""

    def encode(self, obj):
        self._validate(obj, _image_class())
        return _layout.encode_pil(obj)

    def decode(self, data):
        return _layout.decode_pil(data)


class JPEG(Encoding):
    """PIL image as a JPEG file (an image opened from a JPEG file keeps its
    bytes)."""

    def encode(self, obj):
        self._validate(obj, _image_class())
        return _layout.encode_jpeg(obj)

    def decode(self, data):
        return _layout.decode_image_file(data)


class PNG(Encoding):
    """PIL image as a PNG file."""

    def encode(self, obj):
        self._validate(obj, _image_class())
        return _layout.encode_png(obj)

    def decode(self, data):
        return _layout.decode_image_file(data)


class Pickle(Encoding):
    """Any picklable object (unsafe to read: see is_mds_encoding_safe)."""

    def encode(self, obj):
        return pickle.dumps(obj, protocol=4)

    def decode(self, data):
        return pickle.loads(data)


class JSON(Encoding):
    """Any JSON-serializable object (numpy arrays as lists)."""

    def encode(self, obj):
        if isinstance(obj, np.ndarray):
            obj = obj.tolist()
        text = json.dumps(obj)
        self._is_valid(obj, text)
        return text.encode('utf-8')

    def decode(self, data):
        return json.loads(bytes(data).decode('utf-8'))

    def _is_valid(self, original, converted):
        """Raises json.JSONDecodeError naming `original` unless `converted`
        parses back (json.dumps can write NaN, which JSON has not)."""
        try:
            json.loads(converted)
        except json.JSONDecodeError as e:
            e.msg = f'Invalid JSON data: {original}'
            raise


class List(Encoding):
    """A list of objects of one encoding: reserved uint32 0, count, each
    element's size (uint32), then the elements."""

    @abstractmethod
    def underlying_encoder(self):
        raise NotImplementedError

    def encode(self, obj):
        self._validate(obj, list)
        element = self.underlying_encoder()
        return _layout.pack_parts([element.encode(x) for x in obj], reserved=True)

    def decode(self, data):
        (count,) = struct.unpack_from('<I', data, 4)
        element = self.underlying_encoder()
        return [element.decode(part) for part in _layout.split_lengths(data, 8, count)]


class PILList(List):

    def underlying_encoder(self):
        return PIL()


class JPEGList(List):

    def underlying_encoder(self):
        return JPEG()


class PNGList(List):

    def underlying_encoder(self):
        return PNG()


class JPEGArray(Encoding):
    """A list of JPEG files (their bytes): count, each size (uint32), files."""

    def encode(self, obj):
        return _layout.pack_parts(_layout.jpeg_array_parts(obj), reserved=False)

    def decode(self, data):
        return _layout.decode_jpeg_array(data)


def _builtin_names():
    """The engine's built-in encoding names (sluice_mds_encoding_names), in
    its order: the one list, so that the package and the engine agree on
    which names are a user's own."""
    out = ctypes.c_void_p()
    _lib.check(_lib.lib.sluice_mds_encoding_names(ctypes.byref(out)), 'sluice_mds_encoding_names')
    try:
        return json.loads(ctypes.string_at(out))
    finally:
        _lib.lib.sluice_free(out)


# The class of each built-in encoding.
_CLASSES = {
    'bytes': Bytes,
    'str': Str,
    'int': Int,
    'ndarray': NDArray,
    'uint8': UInt8,
    'uint16': UInt16,
    'uint32': UInt32,
    'uint64': UInt64,
    'int8': Int8,
    'int16': Int16,
    'int32': Int32,
    'int64': Int64,
    'float16': Float16,
    'float32': Float32,
    'float64': Float64,
    'str_int': StrInt,
    'str_float': StrFloat,
    'str_decimal': StrDecimal,
    'pil': PIL,
    'jpeg': JPEG,
    'jpeg_array': JPEGArray,
    'jpegarray': JPEGArray,
    'png': PNG,
    'list[pil]': PILList,
    'list[jpeg]': JPEGList,
    'list[png]': PNGList,
    'pkl': Pickle,
    'json': JSON,
}

# The names the library encodes and decodes itself. Any other name
# registered below is a user's own encoding: the library stores and hands
# out its bytes as they are, and its class turns them into values.
_BUILTIN_ORDER = _builtin_names()
_BUILTIN = frozenset(_BUILTIN_ORDER)
if _BUILTIN != set(_CLASSES):
    raise _lib.SluiceLibraryNotFound(
        f'sluice: the built-in MDS encodings of {_lib.lib._name} and of this package differ '
        f'(only the library: {sorted(_BUILTIN - set(_CLASSES))}; only the package: '
        f'{sorted(set(_CLASSES) - _BUILTIN)}); rebuild libsluice.so from the same checkout as '
        f'the package')


def engine_encoded_size(encoding):
    """The engine's column_sizes entry for `encoding` (None: fields vary);
    NotImplementedError for a name it does not know or a malformed one."""
    size = ctypes.c_int64()
    _lib.check(_lib.lib.sluice_mds_encoding_size(encoding.encode(), ctypes.byref(size)))
    return None if size.value < 0 else size.value


# Every built-in class stores what the engine reads: the same fixed size.
_SIZES_DIFFER = {name: (_CLASSES[name]().size, engine_encoded_size(name))
                 for name in _BUILTIN_ORDER
                 if _CLASSES[name]().size != engine_encoded_size(name)}
if _SIZES_DIFFER:
    raise _lib.SluiceLibraryNotFound(
        f'sluice: the fixed sizes of MDS encodings (package, library) differ: {_SIZES_DIFFER}; '
        f'rebuild libsluice.so from the same checkout as the package')

# Name -> class. Users register their own encodings here, as Mosaic's docs
# show (`_encodings['complex128'] = Complex128`); mds_encode/mds_decode, the
# MDS writer and the datasets use them (custom_coder).
_encodings = {name: _CLASSES[name] for name in _BUILTIN_ORDER}


def is_builtin_name(encoding):
    """True when `encoding` ('name' or 'name:config') names a built-in
    encoding (the engine's list), malformed or not; else it can only be a
    user's own."""
    return encoding.partition(':')[0] in _BUILTIN


def custom_coder(encoding):
    """The Encoding instance of a user's own registered encoding, or None
    when `encoding` is built in or not registered."""
    if is_builtin_name(encoding):
        return None
    return get_coder(encoding)


def get_mds_encodings():
    """The names of every registered encoding."""
    return set(_encodings)


def get_coder(encoding):
    """An Encoding instance for `encoding` ('name' or 'name:config'), or None
    when no registered encoding has that name."""
    name, colon, config = encoding.partition(':')
    cls = _encodings.get(name)
    if cls is None:
        return None
    return cls.from_str(config) if colon else cls()


def is_mds_encoding(encoding):
    return get_coder(encoding) is not None


def is_mds_encoding_safe(encoding):
    """False for encodings whose decoding runs arbitrary code (pkl), by the
    engine's list."""
    return not _lib.lib.sluice_mds_encoding_is_unsafe(encoding.encode())


def _coder_or_raise(encoding):
    coder = get_coder(encoding)
    if coder is None:
        raise ValueError(f'Unsupported encoding: {encoding}.')
    return coder


def mds_encode(encoding, obj):
    """Stored bytes of `obj` (`bytes` are stored as they are)."""
    if isinstance(obj, bytes):
        return obj
    return _coder_or_raise(encoding).encode(obj)


def mds_decode(encoding, data):
    return _coder_or_raise(encoding).decode(data)


def get_mds_encoded_size(encoding):
    """Fixed encoded size in bytes, or None when it varies."""
    return _coder_or_raise(encoding).size


# --------------------------------------------------------------------------- the datasets' and
# the writer's coders

def make_decoder(encoding, column):
    """A function stored-bytes -> Python value for a column of `encoding`:
    its registered class's decode, bound now. A name nobody registered (yet)
    is looked up when a sample is decoded, as Mosaic's mds_decode does (the
    class may be registered after the dataset is made; decoding fails then
    with its ValueError). Unsafe encodings (pkl) are decoded: refusing them
    is the engine's, when a dataset opens."""
    coder = get_coder(encoding)
    if type(coder) is Bytes:
        # The field itself (it arrives as bytes): the builtin, which the
        # batch decoder recognises and skips (sample_batch).
        return bytes
    if coder is not None:
        if is_builtin_name(encoding):
            return coder.decode
        return lambda d: coder.decode(bytes(d))  # a user's own gets bytes
    if is_builtin_name(encoding):
        raise NotImplementedError(f'column {column!r}: unsupported encoding {encoding!r}')
    return lambda d: mds_decode(encoding, bytes(d))


def make_encoder(encoding, column):
    """A function Python value -> stored bytes for an MDS column: Mosaic's
    writer's rule (mds_encode: `bytes` as they are, any other value through
    the registered class's encode), its errors naming the column."""
    coder = get_coder(encoding)
    if coder is None:
        raise NotImplementedError(f'column {column!r}: unsupported MDS encoding {encoding!r}')
    encode = coder.encode

    def enc(value):
        if isinstance(value, bytes):
            return value
        try:
            return encode(value)
        except (ValueError, TypeError, AttributeError, OverflowError) as e:
            if e.args and isinstance(e.args[0], str):  # the same type, its text kept
                e.args = (f'column {column!r}: {e.args[0]}',) + e.args[1:]
            raise
    return enc


def array_layout(encoding):
    """(little-endian numpy dtype, shape) of every field of a built-in
    encoding whose fields are each one fixed-size numpy value (int,
    int8..float64, ndarray:DTYPE:SHAPE), by its class; else None."""
    if not is_builtin_name(encoding):
        return None
    name, colon, config = encoding.partition(':')
    cls = _CLASSES[name]
    if colon and not hasattr(cls, 'from_str'):
        return None
    return (cls.from_str(config) if colon else cls()).array_layout()
