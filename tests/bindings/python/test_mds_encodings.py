"""sluice.mds_encodings (served as streaming.base.format.mds.encodings) and
the JSONL/XSV encodings modules: Mosaic's classes, functions, stored bytes
and error texts."""
import ctypes
import importlib.util
import json
import os
import pickle
from decimal import Decimal

import numpy as np
import pytest
from PIL import Image

import sluice
from sluice import _lib, json_encodings, mds_encodings, xsv_encodings
from conftest import DATA
from test_read_compat import check_field

# Re-encoding a decoded JPEG is lossy: for these only decoding is compared.
LOSSY = {'jpeg', 'png', 'jpeg_array', 'jpegarray', 'list[jpeg]', 'list[png]'}


def compat_fields():
    with open(os.path.join(DATA, 'all_encodings', 'expected.jsonl')) as f:
        for line in f:
            yield from json.loads(line)['fields'].values()


def _import_a_fresh_copy():
    """Runs mds_encodings' import-time checks against the library again."""
    spec = importlib.util.spec_from_file_location('sluice_mds_encodings_copy',
                                                  mds_encodings.__file__)
    spec.loader.exec_module(importlib.util.module_from_spec(spec))


def test_every_stored_field_of_mosaics_dataset_decodes_and_encodes_back_to_its_bytes():
    checked = 0
    for exp in compat_fields():
        enc, raw = exp['encoding'], bytes.fromhex(exp['raw_hex'])
        value = mds_encodings.mds_decode(enc, raw)
        check_field(value, exp)
        if enc not in LOSSY:
            assert mds_encodings.mds_encode(enc, value) == raw, enc
            assert mds_encodings.get_coder(enc).encode(value) == raw, enc
        checked += 1
    assert checked == 32 * 240


def test_builtin_names_come_from_the_engine():
    out = ctypes.c_void_p()
    assert _lib.lib.sluice_mds_encoding_names(ctypes.byref(out)) == 0
    engine_names = json.loads(ctypes.string_at(out))
    _lib.lib.sluice_free(out)
    assert mds_encodings._BUILTIN == frozenset(engine_names)
    assert list(mds_encodings._encodings) == engine_names


def test_a_library_with_other_builtin_names_is_refused(monkeypatch):
    # The package's list is the engine's: loading it over a library that
    # knows one more built-in encoding fails, naming the difference.
    libc = ctypes.CDLL(None)
    libc.strdup.restype = ctypes.c_void_p
    libc.strdup.argtypes = [ctypes.c_char_p]
    names = sorted(mds_encodings._BUILTIN) + ['bfloat16']

    def engine_names(out):  # a malloc'd copy, as the library hands (sluice_free frees it)
        out._obj.value = libc.strdup(json.dumps(names).encode())
        return 0
    monkeypatch.setattr(_lib.lib, 'sluice_mds_encoding_names', engine_names)
    with pytest.raises(_lib.SluiceLibraryNotFound,
                       match=r"differ \(only the library: \['bfloat16'\]; only the package: "
                             r"\[\]\)"):
        _import_a_fresh_copy()


def test_registry_names_sizes_and_safety():
    assert mds_encodings.get_mds_encodings() == {
        'bytes', 'str', 'int', 'ndarray', 'uint8', 'uint16', 'uint32', 'uint64', 'int8', 'int16',
        'int32', 'int64', 'float16', 'float32', 'float64', 'str_int', 'str_float', 'str_decimal',
        'pil', 'jpeg', 'jpeg_array', 'jpegarray', 'png', 'list[pil]', 'list[jpeg]', 'list[png]',
        'pkl', 'json'}
    assert mds_encodings.is_mds_encoding('jpeg') is True
    assert mds_encodings.is_mds_encoding('ndarray:int8:2,2') is True
    assert mds_encodings.is_mds_encoding('') is False
    assert mds_encodings.is_mds_encoding('pngg') is False
    assert mds_encodings.is_mds_encoding('nope:int8') is False
    sizes = {'int': 8, 'bytes': None, 'float16': 2, 'uint64': 8, 'ndarray:int16:3,4': 24,
             'ndarray:int16': None, 'ndarray': None, 'str_int': None}
    assert {e: mds_encodings.get_mds_encoded_size(e) for e in sizes} == sizes
    with pytest.raises(ValueError, match=r'^Unsupported encoding: nope\.$'):
        mds_encodings.get_mds_encoded_size('nope')
    with pytest.raises(ValueError, match=r'^Unsupported encoding: nope\.$'):
        mds_encodings.mds_decode('nope', b'')
    assert mds_encodings.is_mds_encoding_safe('pkl') is False
    assert mds_encodings.is_mds_encoding_safe('json') is True


def test_scalar_and_text_values():
    assert mds_encodings.Int().encode(987654321) == b'\xb1h\xde:\x00\x00\x00\x00'
    assert type(mds_encodings.Int().decode(b'c' + bytes(7))) is int
    assert mds_encodings.Float16().encode(42.0) == b'@Q'
    value = mds_encodings.UInt16().decode(b'*\0')
    assert type(value) is np.uint16 and value == 42
    assert mds_encodings.mds_decode('float32', b'\0\0(B') == np.float32(42.0)
    assert mds_encodings.StrDecimal().encode(Decimal('-4E15')) == b'-4E+15'
    assert mds_encodings.StrFloat().decode(b'-42.0') == -42.0
    assert mds_encodings.Pickle().encode('x') == pickle.dumps('x', protocol=4)
    assert mds_encodings.JSON().encode(np.array([{'a': 1}])) == b'[{"a": 1}]'
    # bytes are stored as they are, whatever the encoding (as Mosaic's writer)
    assert mds_encodings.mds_encode('int', b'\x01') == b'\x01'


@pytest.mark.parametrize(('coder', 'value', 'expected_type'), [
    (mds_encodings.Bytes(), 9, bytes), (mds_encodings.Str(), b'9', str),
    (mds_encodings.Int(), 25.9, int), (mds_encodings.StrInt(), '4', int),
    (mds_encodings.StrDecimal(), 4.0, Decimal), (mds_encodings.PIL(), b'9', Image.Image),
    (mds_encodings.JPEGList(), (), list)])
def test_a_value_of_the_wrong_type_is_an_attribute_error_with_mosaics_text(coder, value,
                                                                          expected_type):
    with pytest.raises(AttributeError) as e:
        coder.encode(value)
    assert str(e.value) == (f'data should be of type {expected_type}, but instead, found as '
                            f'{type(value)}')


def test_ndarray_header_and_fixed_layouts():
    a = np.arange(6, dtype=np.int16).reshape(2, 3)
    # dtype code 17 (int16), ndim 2 with uint8 dims, dims, values
    assert mds_encodings.mds_encode('ndarray', a) == b'\x11\x08\x02\x03' + a.tobytes()
    assert mds_encodings.mds_encode('ndarray:int16', a) == b'\x08\x02\x03' + a.tobytes()
    assert mds_encodings.mds_encode('ndarray:int16:2,3', a) == a.tobytes()
    wide = np.zeros((300, 1), np.uint8)
    assert mds_encodings.mds_encode('ndarray:uint8', wide)[:5] == b'\x09\x2c\x01\x01\x00'
    back = mds_encodings.NDArray.from_str('int16:2,3').decode(a.tobytes())
    assert back.shape == (2, 3) and (back == a).all()
    with pytest.raises(ValueError, match=r"^unimplemented: unknown MDS encoding 'ndarray:bool': "
                                         r"'bool' is not an ndarray dtype$"):
        mds_encodings.NDArray('bool')


def test_image_lists_and_jpeg_arrays():
    images = [Image.new('L', (1, 2), 7), Image.new('RGB', (2, 1), (1, 2, 3))]
    stored = mds_encodings.PILList().encode(images)
    assert stored[:20] == (b'\0\0\0\0' + b'\x02\0\0\0' + b'\x0f\0\0\0' + b'\x15\0\0\0' +
                           b'\x01\0\0\0')
    back = mds_encodings.mds_decode('list[pil]', stored)
    assert [(i.mode, i.size, i.tobytes()) for i in back] == [
        ('L', (1, 2), b'\x07\x07'), ('RGB', (2, 1), b'\x01\x02\x03\x01\x02\x03')]
    jpeg = mds_encodings.JPEG().encode(images[0])
    stored = mds_encodings.JPEGArray().encode([bytearray(jpeg), jpeg])
    assert stored == b'\x02\0\0\0' + len(jpeg).to_bytes(4, 'little') * 2 + jpeg + jpeg
    assert [i.size for i in mds_encodings.JPEGArray().decode(stored)] == [(1, 2), (1, 2)]
    for bad in (b'invalid', 123, None, images[0]):
        with pytest.raises(TypeError):
            mds_encodings.JPEGArray().encode(bad)
    with pytest.raises(Exception):
        mds_encodings.JPEGArray().decode(b'\x01\x02\x03')


def test_json_validation_names_the_value():
    with pytest.raises(json.JSONDecodeError) as e:
        mds_encodings.JSON()._is_valid("{'a': 1}", "{'a': 1}")
    assert e.value.msg == "Invalid JSON data: {'a': 1}"


def test_jsonl_and_xsv_column_encodings():
    assert json_encodings.is_json_encoding('float') is True
    assert json_encodings.is_json_encoding('') is False
    assert json_encodings.is_json_encoded('int', 10) is True
    with pytest.raises(AttributeError, match="^data should be of type <class 'float'>, but "
                                             "instead, found as <class 'int'>$"):
        json_encodings.Float.is_encoded(25)
    assert xsv_encodings.is_xsv_encoding('str') is True
    assert xsv_encodings.is_xsv_encoding('bytes') is False
    assert xsv_encodings.xsv_encode('float', 1.25) == '1.25'
    assert xsv_encodings.xsv_encode('int', 27) == '27'
    assert xsv_encodings.xsv_decode('int', '27') == 27
    assert type(xsv_encodings.xsv_decode('float', '9')) is float
    with pytest.raises(AttributeError, match="^data should be of type <class 'int'>, but "
                                             "instead, found as <class 'str'>$"):
        xsv_encodings.Int.encode('99')


@pytest.mark.parametrize('encoding', ['bytes', 'str', 'int', 'int8', 'uint64', 'float16',
                                      'float64', 'str_decimal', 'json', 'pkl', 'pil',
                                      'jpeg_array', 'list[png]', 'ndarray', 'ndarray:int16',
                                      'ndarray:int16:3,4', 'ndarray:float64:1,2,3'])
def test_fixed_sizes_are_the_engines(encoding):
    assert mds_encodings.get_mds_encoded_size(encoding) == \
        mds_encodings.engine_encoded_size(encoding)


def test_a_library_with_other_sizes_is_refused(monkeypatch):
    real = _lib.lib.sluice_mds_encoding_size

    def engine_size(name, out):  # the library says float16 is 4 bytes
        status = real(name, out)
        if name == b'float16':
            out._obj.value = 4
        return status
    monkeypatch.setattr(_lib.lib, 'sluice_mds_encoding_size', engine_size)
    with pytest.raises(_lib.SluiceLibraryNotFound,
                       match=r"fixed sizes of MDS encodings \(package, library\) differ: "
                             r"\{'float16': \(2, 4\)\}"):
        _import_a_fresh_copy()


@pytest.mark.parametrize('shape', ['0', '2,0', '-1,3', ' 3', '3,', ','.join(['1'] * 64),
                                   '65536,65536'])
def test_ndarray_encodings_are_parsed_by_the_engine_alone(shape):
    # Mosaic's NDArray asserts 1 <= dim. The package once parsed ndarray
    # encodings itself, taking '0' (then ' 3', and shapes over 4 GiB) where
    # the engine refused them; now every path asks the engine and says why.
    from sluice.encodings import parse_ndarray_config
    with pytest.raises(ValueError) as parsed:
        parse_ndarray_config(f'uint8:{shape}')
    with pytest.raises(ValueError) as coder:
        mds_encodings.NDArray.from_str(f'uint8:{shape}')
    with pytest.raises(NotImplementedError) as engine:
        mds_encodings.engine_encoded_size(f'ndarray:uint8:{shape}')
    assert str(parsed.value) == str(coder.value) == str(engine.value)
    assert str(parsed.value).startswith(f"unimplemented: unknown MDS encoding "
                                        f"'ndarray:uint8:{shape}': ")


def test_the_engines_ndarray_parse_is_the_classes_dtype_shape_and_size():
    from sluice.encodings import parse_ndarray_config
    assert parse_ndarray_config('') == (None, None)
    assert parse_ndarray_config('float16') == ('float16', None)
    assert parse_ndarray_config('int16:3,4') == ('int16', (3, 4))
    coder = mds_encodings.NDArray('int64', [2, 1, 5])
    assert (coder.dtype, coder.shape, coder.size) == ('int64', (2, 1, 5), 80)
    assert mds_encodings.NDArray(shape=(7,)).size is None  # the dtype is in each field
    with pytest.raises(ValueError, match="'ndarray:uint8:7,0'"):
        mds_encodings.NDArray(shape=(7, 0))
    out = _lib.NDArray()
    assert _lib.lib.sluice_mds_ndarray_encoding(b'int8', ctypes.byref(out)) == _lib.EINVAL
    assert _lib.last_error() == ("invalid argument: sluice_mds_ndarray_encoding: 'int8' is not "
                                 "an ndarray encoding")


def test_datasets_decode_with_the_registered_classes(monkeypatch):
    # One table: a dataset's decoder of a built-in name is its class's.
    calls = []

    class LoudStr(mds_encodings.Str):
        def decode(self, data):
            calls.append(bytes(data))
            return super().decode(data)
    monkeypatch.setitem(mds_encodings._encodings, 'str', LoudStr)
    assert mds_encodings.make_decoder('str', 'c')(b'hi') == 'hi'
    assert calls == [b'hi']


def test_a_bytes_column_decodes_to_the_field_itself():
    # The batch decoder hands such fields out without a call per field
    # (sample_batch checks for the builtin); a slower decoder halved the
    # iteration benchmark once.
    assert mds_encodings.make_decoder('bytes', 'c') is bytes
    assert mds_encodings.mds_decode('bytes', b'x') == b'x'


# The writer encodes with the registered classes (make_encoder), as Mosaic's
# writer calls mds_encode: it once had an if-chain of its own, whose type
# checks, ranges and error texts differed from the classes'.

def test_the_writer_stores_what_the_registered_class_encodes(tmp_path, monkeypatch):
    class ShoutingStr(mds_encodings.Str):
        def encode(self, obj):
            return super().encode(obj.upper())
    monkeypatch.setitem(mds_encodings._encodings, 'str', ShoutingStr)
    with sluice.MDSWriter(out=str(tmp_path / 'ds'), columns={'s': 'str', 'b': 'bytes'}) as w:
        w.write({'s': 'quiet', 'b': bytearray(b'\x00\x01')})
        w.write({'s': b'as is', 'b': memoryview(b'\x02')})
    ds = sluice.LocalDataset(str(tmp_path / 'ds'))
    assert [ds[0], ds[1]] == [{'s': 'QUIET', 'b': b'\x00\x01'}, {'s': 'as is', 'b': b'\x02'}]


@pytest.mark.parametrize(('encoding', 'value', 'error', 'message'), [
    ('int8', 300, OverflowError, 'int8 encoding: 300 is out of range [-128, 127]'),
    ('uint8', -1, OverflowError, 'uint8 encoding: -1 is out of range [0, 255]'),
    ('uint64', np.int64(-2), OverflowError,
     'uint64 encoding: -2 is out of range [0, 18446744073709551615]'),
    ('int16', 40000.0, OverflowError, 'int16 encoding: 40000.0 is out of range [-32768, 32767]'),
    ('int', 1 << 63, OverflowError, f'int encoding: {1 << 63} does not fit in int64'),
    ('int', 2.5, AttributeError,
     "data should be of type <class 'int'>, but instead, found as <class 'float'>"),
    ('str', 5, AttributeError,
     "data should be of type <class 'str'>, but instead, found as <class 'int'>"),
    ('str_int', '4', AttributeError,
     "data should be of type <class 'int'>, but instead, found as <class 'str'>"),
    ('bytes', 9, AttributeError,
     "data should be of type <class 'bytes'>, but instead, found as <class 'int'>"),
    ('list[pil]', (), AttributeError,
     "data should be of type <class 'list'>, but instead, found as <class 'tuple'>"),
    ('ndarray', np.array([]), ValueError, 'Attempting to encode a numpy array with 0 elements.'),
    ('ndarray', np.array(0.5), ValueError,
     'Attempting to encode a scalar with NDArray encoding. Please use a scalar encoding.'),
    ('ndarray', np.zeros(2, np.complex64), ValueError, 'Unsupported dtype: complex64.'),
    ('ndarray:int16', np.zeros(2, np.int32), ValueError, 'Wrong dtype: expected int16, got int32.'),
    ('ndarray:uint8:2', np.zeros(3, np.uint8), ValueError,
     'Wrong shape: expected (2,), got (3,).'),
])
def test_the_writer_and_mds_encode_refuse_the_same_values(tmp_path, encoding, value, error,
                                                          message):
    with pytest.raises(error) as coded:
        mds_encodings.mds_encode(encoding, value)
    assert str(coded.value) == message
    with sluice.MDSWriter(out=str(tmp_path / 'ds'), columns={'x': encoding}) as w:
        with pytest.raises(error) as written:
            w.write({'x': value})
        w.write({'x': bytes(mds_encodings.get_mds_encoded_size(encoding) or 1)})  # goes on
    assert str(written.value) == f"column 'x': {message}"
    assert sluice.LocalDataset(str(tmp_path / 'ds')).num_samples == 1


def test_the_writer_stores_mds_encodes_bytes_for_every_field_of_mosaics_dataset():
    encoders = {}
    for exp in compat_fields():
        enc = exp['encoding']
        value = mds_encodings.mds_decode(enc, bytes.fromhex(exp['raw_hex']))
        encoder = encoders.setdefault(enc, mds_encodings.make_encoder(enc, 'c'))
        assert encoder(value) == mds_encodings.mds_encode(enc, value), enc
    assert len(encoders) == 32


def test_numpy_ints_and_in_range_values_encode_as_before():
    assert mds_encodings.mds_encode('int', np.int64(-3)) == (-3).to_bytes(8, 'little', signed=True)
    assert mds_encodings.mds_encode('int8', -128) == b'\x80'
    assert mds_encodings.mds_encode('uint64', (1 << 64) - 1) == b'\xff' * 8
    assert mds_encodings.mds_encode('uint16', np.uint16(7)) == b'\x07\x00'
    assert mds_encodings.mds_encode('int32', '12') == b'\x0c\0\0\0'  # numpy parses text


@pytest.mark.parametrize('encoding', [
    'int', 'int8', 'int16', 'int32', 'int64', 'uint8', 'uint16', 'uint32', 'uint64', 'float16',
    'float32', 'float64', 'ndarray:int16:3,4', 'ndarray:float64:1,2,3', 'ndarray:uint8:5'])
def test_batch_layouts_are_the_classes_and_fill_the_engines_fixed_size(encoding):
    dtype, shape = mds_encodings.array_layout(encoding)
    assert dtype.byteorder in '<|='
    assert dtype.itemsize * int(np.prod(shape)) == mds_encodings.engine_encoded_size(encoding)


@pytest.mark.parametrize('encoding', ['str', 'bytes', 'json', 'pkl', 'str_int', 'jpeg', 'ndarray',
                                      'ndarray:int16', 'list[pil]', 'mine'])
def test_variable_and_unknown_encodings_have_no_batch_layout(encoding):
    assert mds_encodings.array_layout(encoding) is None


class _Calls:
    """Wraps a C function of the library and counts its calls."""

    def __init__(self, monkeypatch, name):
        self.count = 0
        real = getattr(_lib.lib, name)

        def counted(*args):
            self.count += 1
            return real(*args)
        monkeypatch.setattr(_lib.lib, name, counted)


def test_the_ndarray_header_is_the_engines_to_write_and_read(monkeypatch):
    from sluice import encodings
    assert not hasattr(encodings, 'ND_CODES')  # no table of dtype codes in Python
    written = _Calls(monkeypatch, 'sluice_mds_ndarray_header')
    read = _Calls(monkeypatch, 'sluice_mds_ndarray_decode')
    coder = mds_encodings.NDArray()
    a = np.arange(6, dtype=np.int16).reshape(2, 3)
    stored = coder.encode(a)
    assert stored == b'\x11\x08\x02\x03' + a.tobytes()
    assert coder.encode(a + 1) == b'\x11\x08\x02\x03' + (a + 1).tobytes()
    assert written.count == 1  # the header of an int16 2x3 array, kept
    back = coder.decode(stored)
    assert read.count == 1
    assert back.dtype == np.int16 and back.shape == (2, 3) and (back == a).all()
    assert not back.flags.writeable
    with pytest.raises(ValueError, match=r'ends before|runs past|unknown ndarray dtype code'):
        coder.decode(stored[:2])
    with pytest.raises(ValueError, match=r'unknown ndarray dtype code 7'):
        coder.decode(b'\x07' + stored[1:])


def test_mosaics_shape_without_a_dtype_stores_the_dtype_alone():
    coder = mds_encodings.NDArray(shape=(2, 2))
    a = np.arange(4, dtype=np.uint16).reshape(2, 2)
    stored = coder.encode(a)
    assert stored == b'\x10' + a.tobytes()  # uint16's code, no shape words
    back = coder.decode(stored)
    assert back.dtype == np.uint16 and (back == a).all()
    with pytest.raises(ValueError, match=r'^Wrong shape: expected \(2, 2\), got \(4,\)\.$'):
        coder.encode(a.reshape(4))
    copy = pickle.loads(pickle.dumps(coder))
    assert copy.encode(a) == stored and (copy.decode(stored) == a).all()
