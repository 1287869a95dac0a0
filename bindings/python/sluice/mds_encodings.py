"""mosaicml-streaming's `streaming.base.format.mds.encodings` API over
Sluice's MDS byte rules: every built-in class has the engine write and read
its fields (through sluice.encodings) and keeps only Python's part (its
type checks, pickling, Pillow, json.dumps). The `Encoding`
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


class EngineValued(Encoding):
    """A built-in encoding whose field the engine writes from a value Python
    hands it (`engine_value`: the type checks and Python's part, pickling or
    json.dumps). The writer hands the values of a whole sample in one call
    (make_value_encoder); `encode` asks for one field."""

    engine_name = None  # the encoding's name, as bytes

    def engine_value(self, obj):
        """(SLUICE_VALUE_* kind, bytes) of `obj`."""
        raise NotImplementedError

    def encode(self, obj):
        return _layout.encode_value(self.engine_name, *self.engine_value(obj))


class Bytes(EngineValued):
    """bytes, stored as they are (a bytearray or memoryview as its bytes)."""

    engine_name = b'bytes'

    def __init__(self):
        self._read = _layout.bytes_reader('bytes')

    def engine_value(self, obj):
        if isinstance(obj, (bytearray, memoryview)):
            obj = bytes(obj)
        self._validate(obj, bytes)
        return _layout.VALUE_BYTES, obj

    def decode(self, data):
        return self._read(data)


class Str(EngineValued):
    """str as UTF-8."""

    engine_name = b'str'

    def __init__(self):
        self._read = _layout.text_reader('str')

    def engine_value(self, obj):
        self._validate(obj, str)
        return _layout.VALUE_BYTES, obj.encode('utf-8')

    def decode(self, data):
        return self._read(data)


class Int(EngineValued):
    """Python int (or numpy integer) as little-endian int64."""

    size = 8
    engine_name = b'int'

    def __init__(self):
        self._unpack = _layout.scalar_unpack('int')

    def engine_value(self, obj):
        if isinstance(obj, np.integer):
            obj = int(obj)
        self._validate(obj, int)
        return _layout.number_value(b'int', obj, True)

    def decode(self, data):
        return self._unpack(data)[0]

    def array_layout(self):
        return _layout.field_layout('int')


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
        return _layout.field_layout(_layout.ndarray_encoding(self.dtype, self.shape))


class Scalar(EngineValued):
    """One numpy scalar of `dtype`, stored as the engine stores the encoding
    of that name (its range check and rounding: an integer type refuses a
    number outside its range with OverflowError, as numpy 2; numpy 1 would
    wrap it around)."""

    def __init__(self, dtype):
        self.dtype = dtype
        self._name = np.dtype(dtype).name
        self.engine_name = self._name.encode('ascii')
        self._is_int = np.issubdtype(np.dtype(dtype), np.integer)
        self._unpack = _layout.scalar_unpack(self._name)
        self.size = _layout.field_layout(self._name)[0].itemsize

    def engine_value(self, obj):
        if not isinstance(obj, (int, float, np.number)):
            obj = self.dtype(obj)  # numpy's conversion of other values, as Mosaic's
        return _layout.number_value(self.engine_name, obj, self._is_int)

    def decode(self, data):
        return self.dtype(self._unpack(data)[0])

    def array_layout(self):
        return _layout.field_layout(self._name)


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


class StrEncoding(EngineValued):
    """A number stored as its decimal text (any precision), as the engine
    writes and checks it. Subclasses say which type and encoding."""

    value_type = None

    def __init__(self):
        self._read = _layout.text_reader(self.engine_name.decode())

    def engine_value(self, obj):
        self._validate(obj, self.value_type)
        return _layout.VALUE_BYTES, str(obj).encode('utf-8')

    def decode(self, data):
        return self.value_type(self._read(data))


class StrInt(StrEncoding):
    value_type = int
    engine_name = b'str_int'


class StrFloat(StrEncoding):
    value_type = float
    engine_name = b'str_float'

    def engine_value(self, obj):
        self._validate(obj, float)
        return _layout.number_value(self.engine_name, obj, False)  # the engine's repr


class StrDecimal(StrEncoding):
    value_type = Decimal
    engine_name = b'str_decimal'


class PIL(Encoding):
    """PIL image, raw: width, height, mode length (uint32 each), mode, pixels."""

    def encode(self, obj):
        self._validate(obj, _image_class())
        return _layout.encode_pil(obj)

    def decode(self, data):
        return _layout.decode_pil(data)


class JPEG(EngineValued):
    """PIL image as a JPEG file (an image opened from a JPEG file keeps its
    bytes)."""

    engine_name = b'jpeg'

    def engine_value(self, obj):
        self._validate(obj, _image_class())
        return _layout.VALUE_BYTES, _layout.encode_jpeg(obj)

    def decode(self, data):
        return _layout.decode_image_file(_layout.bytes_reader('jpeg')(data))


class PNG(EngineValued):
    """PIL image as a PNG file."""

    engine_name = b'png'

    def engine_value(self, obj):
        self._validate(obj, _image_class())
        return _layout.VALUE_BYTES, _layout.encode_png(obj)

    def decode(self, data):
        return _layout.decode_image_file(_layout.bytes_reader('png')(data))


class Pickle(EngineValued):
    """Any picklable object (unsafe to read: see is_mds_encoding_safe)."""

    engine_name = b'pkl'

    def __init__(self):
        self._read = _layout.bytes_reader('pkl')

    def engine_value(self, obj):
        return _layout.VALUE_BYTES, pickle.dumps(obj, protocol=4)

    def decode(self, data):
        return pickle.loads(self._read(data))


class JSON(EngineValued):
    """Any JSON-serializable object (numpy arrays as lists)."""

    engine_name = b'json'

    def __init__(self):
        self._read = _layout.text_reader('json')

    def engine_value(self, obj):
        if isinstance(obj, np.ndarray):
            obj = obj.tolist()
        text = json.dumps(obj)
        self._is_valid(obj, text)
        return _layout.VALUE_BYTES, text.encode('utf-8')

    def decode(self, data):
        return json.loads(self._read(data))

    def _is_valid(self, original, converted):
        """Raises json.JSONDecodeError naming `original` unless `converted`
        parses back (json.dumps can write NaN, which JSON has not)."""
        try:
            json.loads(converted)
        except json.JSONDecodeError as e:
            e.msg = f'Invalid JSON data: {original}'
            raise


class List(Encoding):
    """A list of objects of one encoding, framed by the engine as its
    list[...] encodings are (a user's subclass too: Mosaic's List frames
    every element type alike)."""

    list_encoding = b'list[jpeg]'  # the framing; the subclasses name their own

    @abstractmethod
    def underlying_encoder(self):
        raise NotImplementedError

    def encode(self, obj):
        self._validate(obj, list)
        element = self.underlying_encoder()
        return _layout.encode_list(self.list_encoding, [element.encode(x) for x in obj])

    def decode(self, data):
        element = self.underlying_encoder()
        return [element.decode(part) for part in _layout.decode_list(self.list_encoding, data)]


class PILList(List):
    list_encoding = b'list[pil]'

    def underlying_encoder(self):
        return PIL()


class JPEGList(List):
    list_encoding = b'list[jpeg]'

    def underlying_encoder(self):
        return JPEG()


class PNGList(List):
    list_encoding = b'list[png]'

    def underlying_encoder(self):
        return PNG()


class JPEGArray(Encoding):
    """A list of JPEG files (their bytes), framed by the engine."""

    def encode(self, obj):
        return _layout.encode_list(b'jpeg_array', _layout.jpeg_array_parts(obj))

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
    if type(coder) is Bytes and coder._read is bytes:
        # The field itself (it arrives as bytes; the engine's form says the
        # field is the value): the builtin, which the batch decoder
        # recognises and skips (sample_batch).
        return bytes
    if coder is not None:
        if is_builtin_name(encoding):
            return coder.decode
        return lambda d: coder.decode(bytes(d))  # a user's own gets bytes
    if is_builtin_name(encoding):
        raise NotImplementedError(f'column {column!r}: unsupported encoding {encoding!r}')
    return lambda d: mds_decode(encoding, bytes(d))


def _naming_column(encode, column):
    """`encode` whose errors name the column (their type and text kept)."""
    def enc(value):
        try:
            return encode(value)
        except (ValueError, TypeError, AttributeError, OverflowError) as e:
            if e.args and isinstance(e.args[0], str):  # the same type, its text kept
                e.args = (f'column {column!r}: {e.args[0]}',) + e.args[1:]
            raise
    return enc


def _coder_for_writer(encoding, column):
    coder = get_coder(encoding)
    if coder is None:
        raise NotImplementedError(f'column {column!r}: unsupported MDS encoding {encoding!r}')
    return coder


def make_encoder(encoding, column):
    """A function Python value -> stored bytes for an MDS column: Mosaic's
    writer's rule (mds_encode: `bytes` as they are, any other value through
    the registered class's encode), its errors naming the column."""
    encode = _naming_column(_coder_for_writer(encoding, column).encode, column)
    return lambda value: value if isinstance(value, bytes) else encode(value)


def make_value_encoder(encoding, column):
    """A function Python value -> (SLUICE_VALUE_* kind, bytes) for the
    writer, which hands a sample's values to the engine in one call: the
    same fields as make_encoder's. A class whose `encode` is the engine's
    (EngineValued's, not overridden) hands its engine_value; any other
    (a subclass's own encode, images, lists, ndarrays, a user's own) its
    encoded field."""
    coder = _coder_for_writer(encoding, column)
    field = _layout.VALUE_FIELD
    errors = (ValueError, TypeError, AttributeError, OverflowError)

    def name_column(e):
        if e.args and isinstance(e.args[0], str):  # the same type, its text kept
            e.args = (f'column {column!r}: {e.args[0]}',) + e.args[1:]

    # One frame a field: the writer calls it for every value.
    if type(coder).encode is EngineValued.encode:
        value = coder.engine_value

        def enc(v):
            if isinstance(v, bytes):
                return field, v
            try:
                return value(v)
            except errors as e:
                name_column(e)
                raise
    else:
        encode = coder.encode

        def enc(v):
            if isinstance(v, bytes):
                return field, v
            try:
                return field, encode(v)
            except errors as e:
                name_column(e)
                raise
    return enc


def array_layout(encoding):
    """(little-endian numpy dtype, shape) of every field of a built-in
    encoding whose fields are each one fixed-size numpy value (int,
    int8..float64, ndarray:DTYPE:SHAPE), as the engine stores them
    (sluice_mds_field_layout); else None."""
    if not is_builtin_name(encoding):
        return None
    try:
        return _layout.field_layout(encoding)
    except NotImplementedError:  # a malformed name
        return None
