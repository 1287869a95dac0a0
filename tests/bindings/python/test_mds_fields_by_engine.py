"""Every built-in MDS encoding's field is the engine's to write and read
(sluice_encode_*, sluice_mds_encode_* / sluice_mds_decode_*, the writer's
sluice_writer_write_values): the Python
classes give, for tricky values, the bytes the engine's C calls give when
asked directly, which are Mosaic's bytes (computed here with numpy, struct,
json and pickle as Mosaic's classes compute them), and read them back."""
import ctypes
import json
import math
import pickle
import struct
from decimal import Decimal

import numpy as np
import pytest

from sluice import _lib
from sluice import encodings as _layout
from sluice import mds_encodings

PIL = pytest.importorskip('PIL.Image')


def _call(fn, *args):
    buf = ctypes.create_string_buffer(1 << 16)
    size = ctypes.c_uint64()
    out = ctypes.cast(buf, ctypes.POINTER(ctypes.c_uint8))
    _lib.check(fn(*args, out, len(buf), ctypes.byref(size)))
    return buf.raw[:size.value]


def engine_number(encoding, value):
    if isinstance(value, float):
        return _call(_lib.lib.sluice_encode_double, encoding.encode(), value)
    fn = _lib.lib.sluice_encode_int64 if value < 1 << 63 else _lib.lib.sluice_encode_uint64
    return _call(fn, encoding.encode(), value)


def engine_bytes(encoding, data):
    return _call(_lib.lib.sluice_mds_encode_value, encoding.encode(), 1, data, len(data))  # BYTES


def engine_pil(img, encoding='pil'):
    pixels = img.tobytes()
    return _call(_lib.lib.sluice_mds_encode_pil, encoding.encode(), img.size[0], img.size[1],
                 img.mode.encode(), pixels, len(pixels))


def engine_list(encoding, parts):
    items = (_lib.Bytes * max(len(parts), 1))()
    for i, p in enumerate(parts):
        items[i].data = ctypes.cast(ctypes.c_char_p(p), ctypes.POINTER(ctypes.c_uint8))
        items[i].size = len(p)
    return _call(_lib.lib.sluice_mds_encode_list, encoding.encode(), items, len(parts))


def mosaic_scalar(dtype, value):
    return np.asarray(np.dtype(dtype).type(value)).astype(np.dtype(dtype).newbyteorder('<')).tobytes()


def mosaic_list(parts, reserved=True):
    head = (struct.pack('<I', 0) if reserved else b'') + struct.pack('<I', len(parts))
    return head + struct.pack(f'<{len(parts)}I', *map(len, parts)) + b''.join(parts)


def mosaic_pil(img):
    mode = img.mode.encode()
    return struct.pack('<III', img.size[0], img.size[1], len(mode)) + mode + img.tobytes()


_IMG = PIL.new('RGBA', (2, 3), (1, 2, 3, 4))
_GREY = PIL.new('L', (1, 1), 7)
_PNG = mds_encodings.mds_encode('png', _GREY)

# (encoding, value, Mosaic's bytes, the engine's bytes asked directly)
CASES = [
    ('int', 0, struct.pack('<q', 0), lambda: engine_number('int', 0)),
    ('int', -(1 << 63), struct.pack('<q', -(1 << 63)), lambda: engine_number('int', -(1 << 63))),
    ('int', (1 << 63) - 1, struct.pack('<q', (1 << 63) - 1),
     lambda: engine_number('int', (1 << 63) - 1)),
    ('int8', -128, b'\x80', lambda: engine_number('int8', -128)),
    ('int16', -2, mosaic_scalar('int16', -2), lambda: engine_number('int16', -2)),
    ('int32', 123456, mosaic_scalar('int32', 123456), lambda: engine_number('int32', 123456)),
    ('int64', -5, mosaic_scalar('int64', -5), lambda: engine_number('int64', -5)),
    ('uint8', 255, b'\xff', lambda: engine_number('uint8', 255)),
    ('uint16', 65535, mosaic_scalar('uint16', 65535), lambda: engine_number('uint16', 65535)),
    ('uint32', 1 << 31, mosaic_scalar('uint32', 1 << 31), lambda: engine_number('uint32', 1 << 31)),
    ('uint64', (1 << 64) - 1, b'\xff' * 8, lambda: engine_number('uint64', (1 << 64) - 1)),
    ('float16', 65504.0, mosaic_scalar('float16', 65504.0), lambda: engine_number('float16', 65504.0)),
    ('float16', 1e-7, mosaic_scalar('float16', 1e-7), lambda: engine_number('float16', 1e-7)),
    ('float16', 1e6, mosaic_scalar('float16', np.inf), lambda: engine_number('float16', 1e6)),
    ('float32', 0.1, mosaic_scalar('float32', 0.1), lambda: engine_number('float32', 0.1)),
    ('float32', 16777217, mosaic_scalar('float32', 16777217),
     lambda: engine_number('float32', 16777217)),
    ('float64', -0.0, mosaic_scalar('float64', -0.0), lambda: engine_number('float64', -0.0)),
    ('float64', math.inf, mosaic_scalar('float64', math.inf),
     lambda: engine_number('float64', math.inf)),
    ('str', '', b'', lambda: engine_bytes('str', b'')),
    ('str', 'é€😀\x00', 'é€😀\x00'.encode(), lambda: engine_bytes('str', 'é€😀\x00'.encode())),
    ('str_int', 0, b'0', lambda: engine_bytes('str_int', b'0')),
    ('str_int', -(1 << 200), str(-(1 << 200)).encode(),
     lambda: engine_bytes('str_int', str(-(1 << 200)).encode())),
    ('str_float', 1e16, b'1e+16', lambda: engine_number('str_float', 1e16)),
    ('str_float', -0.0, b'-0.0', lambda: engine_number('str_float', -0.0)),
    ('str_float', 0.1, b'0.1', lambda: engine_number('str_float', 0.1)),
    ('str_float', math.inf, b'inf', lambda: engine_number('str_float', math.inf)),
    ('str_decimal', Decimal('-0.00'), b'-0.00', lambda: engine_bytes('str_decimal', b'-0.00')),
    ('str_decimal', Decimal('1E+3'), b'1E+3', lambda: engine_bytes('str_decimal', b'1E+3')),
    ('json', {}, b'{}', lambda: engine_bytes('json', b'{}')),
    ('json', {'é': [1 << 70, 1e16, -0.0, None, True, 'x"\\\n'], 'b': {}},
     json.dumps({'é': [1 << 70, 1e16, -0.0, None, True, 'x"\\\n'], 'b': {}}).encode(),
     lambda: engine_bytes('json', json.dumps(
         {'é': [1 << 70, 1e16, -0.0, None, True, 'x"\\\n'], 'b': {}}).encode())),
    ('json', '😀', json.dumps('😀').encode(), lambda: engine_bytes('json', b'"\\ud83d\\ude00"')),
    ('pkl', {'a': (1, 'é')}, pickle.dumps({'a': (1, 'é')}, protocol=4),
     lambda: engine_bytes('pkl', pickle.dumps({'a': (1, 'é')}, protocol=4))),
    ('bytes', bytearray(), b'', lambda: engine_bytes('bytes', b'')),
    ('bytes', memoryview(b'\x00\xff'), b'\x00\xff', lambda: engine_bytes('bytes', b'\x00\xff')),
    ('pil', _IMG, mosaic_pil(_IMG), lambda: engine_pil(_IMG)),
    ('pil', _GREY, mosaic_pil(_GREY), lambda: engine_pil(_GREY)),
    ('png', _GREY, _PNG, lambda: engine_bytes('png', _PNG)),
    ('list[pil]', [], mosaic_list([]), lambda: engine_list('list[pil]', [])),
    ('list[pil]', [_IMG, _GREY], mosaic_list([mosaic_pil(_IMG), mosaic_pil(_GREY)]),
     lambda: engine_list('list[pil]', [engine_pil(_IMG), engine_pil(_GREY)])),
    ('list[png]', [_GREY], mosaic_list([_PNG]), lambda: engine_list('list[png]', [_PNG])),
    ('jpeg_array', [b'\xff\xd8a', b''], mosaic_list([b'\xff\xd8a', b''], reserved=False),
     lambda: engine_list('jpeg_array', [b'\xff\xd8a', b''])),
    ('jpegarray', [b'\xff\xd8a'], mosaic_list([b'\xff\xd8a'], reserved=False),
     lambda: engine_list('jpegarray', [b'\xff\xd8a'])),
]


@pytest.mark.parametrize(('encoding', 'value', 'mosaic', 'engine'), CASES,
                         ids=[f'{c[0]}-{i}' for i, c in enumerate(CASES)])
def test_the_classes_store_the_engines_bytes_which_are_mosaics(encoding, value, mosaic, engine):
    stored = mds_encodings.mds_encode(encoding, value)
    assert stored == mosaic
    assert stored == engine()
    form = _layout.field_form(encoding)
    if form in (_layout.FIELD_TEXT, _layout.FIELD_BYTES):  # read whole: as the engine's decoder
        assert _layout.decode_bytes(encoding.encode(), stored) == stored
    if encoding in ('jpeg_array', 'jpegarray'):  # its parts are no JPEGs Pillow opens
        assert _layout.decode_list(encoding.encode(), stored) == value
        return
    back = mds_encodings.mds_decode(encoding, stored)
    if encoding in ('pil', 'list[pil]', 'png', 'list[png]'):
        images = back if isinstance(back, list) else [back]
        given = value if isinstance(value, list) else [value]
        assert [(i.mode, i.size, i.tobytes()) for i in images] == \
            [(i.mode, i.size, i.tobytes()) for i in given]
    elif encoding.startswith('float'):
        with np.errstate(over='ignore'):  # 1e6 is inf in float16, as stored
            assert back == np.dtype(encoding).type(value)
    else:
        assert back == (bytes(value) if encoding == 'bytes' else value)


def test_every_builtin_encoding_has_a_case():
    covered = {c[0] for c in CASES} | {'jpeg', 'list[jpeg]', 'ndarray'}  # below
    assert covered == set(mds_encodings._BUILTIN_ORDER)


def test_jpeg_fields_are_the_files_bytes_and_lists_of_them_the_engines_framing():
    jpeg = mds_encodings.mds_encode('jpeg', _IMG.convert('RGB'))
    assert jpeg[:2] == b'\xff\xd8' and jpeg == engine_bytes('jpeg', jpeg)
    assert mds_encodings.mds_encode('list[jpeg]', [_IMG.convert('RGB')]) == \
        engine_list('list[jpeg]', [jpeg]) == mosaic_list([jpeg])
    assert mds_encodings.mds_decode('jpeg', jpeg).size == (2, 3)


@pytest.mark.parametrize(('encoding', 'value'), [
    ('ndarray', np.array([1 << 40, -1], np.int64)),
    ('ndarray', np.zeros((1, 300), np.float16)),
    ('ndarray:uint8', np.array([[1, 2]], np.uint8)),
    ('ndarray:int32:2', np.array([7, -7], np.int32)),
])
def test_ndarray_fields_are_the_engines_header_and_the_values(encoding, value):
    column = _lib.NDArray()
    dtype, shape = mds_encodings.NDArray.from_str(encoding.partition(':')[2]).dtype, None
    fixed = mds_encodings.get_coder(encoding)
    if fixed.dtype:
        column.dtype = fixed.dtype.encode()
    if fixed.shape:
        column.ndim = len(fixed.shape)
        for i, d in enumerate(fixed.shape):
            column.shape[i] = d
    dims = (ctypes.c_uint64 * value.ndim)(*value.shape)
    head = _call(_lib.lib.sluice_mds_ndarray_header, ctypes.byref(column),
                 value.dtype.name.encode(), value.ndim, dims)
    stored = mds_encodings.mds_encode(encoding, value)
    assert stored == head + value.astype(value.dtype.newbyteorder('<')).tobytes()
    assert np.array_equal(mds_encodings.mds_decode(encoding, stored), value)
    assert dtype == fixed.dtype


def test_zero_dim_and_empty_ndarrays_are_refused_by_the_class_and_the_engine():
    for value in (np.array(5, np.int32), np.zeros((0, 2), np.int32)):
        with pytest.raises(ValueError):
            mds_encodings.mds_encode('ndarray', value)
        dims = (ctypes.c_uint64 * max(value.ndim, 1))(*value.shape)
        buf = (ctypes.c_uint8 * 600)()
        size = ctypes.c_uint64()
        assert _lib.lib.sluice_mds_ndarray_header(
            ctypes.byref(_lib.NDArray()), b'int32', value.ndim, dims, buf, 600,
            ctypes.byref(size)) == _lib.EINVAL


def test_fixed_fields_are_read_by_the_engines_layout():
    assert mds_encodings.array_layout('int') == (np.dtype('<i8'), ())
    assert mds_encodings.array_layout('float16') == (np.dtype('<f2'), ())
    assert mds_encodings.array_layout('ndarray:uint16:2,3') == (np.dtype('<u2'), (2, 3))
    assert mds_encodings.array_layout('ndarray:uint16') is None
    assert mds_encodings.array_layout('str') is None
    assert mds_encodings.mds_decode('uint64', b'\xff' * 8) == np.uint64((1 << 64) - 1)
    assert type(mds_encodings.mds_decode('int16', b'\xfe\xff')) is np.int16


@pytest.mark.parametrize(('encoding', 'field', 'message'), [
    ('str', b'\xff', "can't decode byte 0xff"),  # Python's str of the engine's text form
    ('pil', b'\x01\x00', 'pil'),
    ('list[png]', b'\x00\x00\x00\x00\x09\x00\x00\x00', 'list[png]'),
])
def test_malformed_fields_are_the_engines_errors(encoding, field, message):
    with pytest.raises(Exception) as e:
        mds_encodings.mds_decode(encoding, field)
    assert message in str(e.value)


@pytest.mark.parametrize(('encoding', 'value'), [
    ('str_decimal', Decimal('NaN')),
    ('json', float('nan')),
    ('json', [float('-inf')]),
])
def test_json_and_decimal_texts_of_special_values_are_stored_as_python_writes_them(encoding, value):
    stored = mds_encodings.mds_encode(encoding, value)
    assert stored == (json.dumps(value) if encoding == 'json' else str(value)).encode()


def test_the_writer_hands_values_to_the_engine_and_stores_what_mds_encode_gives(tmp_path):
    import sluice
    cases = [c for c in CASES if c[0] not in ('pil', 'list[pil]', 'png', 'list[png]')]
    columns = {f'c{i}': c[0] for i, c in enumerate(cases)}
    sample = {f'c{i}': c[1] for i, c in enumerate(cases)}
    encoded = {k: mds_encodings.mds_encode(columns[k], v) for k, v in sample.items()}
    for name, values in (('values', sample), ('fields', encoded)):
        with sluice.MDSWriter(out=str(tmp_path / name), columns=columns) as w:
            w.write(values)
    shard = 'shard.00000.mds'
    assert (tmp_path / 'values' / shard).read_bytes() == (tmp_path / 'fields' / shard).read_bytes()
