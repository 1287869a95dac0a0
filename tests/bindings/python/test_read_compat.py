"""Every compat dataset written by mosaicml-streaming reads back, through the
sluice package, as exactly the Python values its expected.jsonl describes."""
import hashlib
import json
import os
from decimal import Decimal

import numpy as np
import pytest
from PIL import Image

import sluice
from conftest import DATA, compat_dirs

INT_ENCODINGS = {'int8', 'int16', 'int32', 'int64', 'uint8', 'uint16', 'uint32', 'uint64'}
FLOAT_ENCODINGS = {'float16', 'float32', 'float64'}


def expected(name):
    with open(os.path.join(DATA, name, 'expected.jsonl')) as f:
        return [json.loads(line) for line in f]


def check_image(img, exp):
    assert isinstance(img, Image.Image)
    assert img.mode == exp['mode']
    assert img.size == (exp['width'], exp['height'])
    if 'pixels_hex' in exp:
        assert img.tobytes().hex() == exp['pixels_hex']
    else:
        assert hashlib.sha256(img.tobytes()).hexdigest() == exp['pixels_sha256']


def check_field(value, exp):
    enc = exp['encoding']
    if enc == 'int':
        assert type(value) is int and value == exp['value']
    elif enc in INT_ENCODINGS:
        # Mosaic returns numpy scalars of the column's type.
        assert type(value) is getattr(np, enc) and int(value) == exp['value']
    elif enc in FLOAT_ENCODINGS:
        assert type(value) is getattr(np, enc)
        assert repr(float(value)) == exp['value_repr']
    elif enc == 'str_float':
        assert type(value) is float and repr(value) == exp['value_repr']
    elif enc == 'str_int':
        assert type(value) is int and str(value) == exp['value_str']
    elif enc == 'str_decimal':
        assert type(value) is Decimal and str(value) == exp['value_str']
        assert value.as_tuple() == Decimal(exp['value_str']).as_tuple()
    elif enc == 'str':
        assert value == exp['value']
    elif enc == 'bytes':
        assert type(value) is bytes and value.hex() == exp['raw_hex']
    elif enc == 'json':
        assert value == exp['value']
    elif enc == 'pkl':
        assert repr(value) == exp['python_repr']
    elif enc in ('pil', 'png', 'jpeg'):
        check_image(value, exp['image'])
    elif enc.startswith('list[') or enc in ('jpeg_array', 'jpegarray'):
        assert isinstance(value, list) and len(value) == len(exp['items'])
        for img, item in zip(value, exp['items']):
            check_image(img, item['image'])
    elif enc.startswith('ndarray'):
        assert isinstance(value, np.ndarray)
        assert value.dtype.name == exp['dtype'] and list(value.shape) == exp['shape']
        flat = value.reshape(-1)
        if 'values' in exp:
            assert flat.tolist() == exp['values']
        elif 'values_repr' in exp:
            assert [repr(float(v)) for v in flat] == exp['values_repr']
        else:
            assert flat[:32].tolist() == exp['values_head'] or \
                [repr(float(v)) for v in flat[:32]] == exp['values_head']
            assert exp['raw_hex'].endswith(value.tobytes().hex())
    else:
        raise AssertionError(f'untested encoding {enc}')


@pytest.mark.parametrize('name', compat_dirs())
def test_compat_dataset_reads_as_mosaic(name):
    exp = expected(name)
    ds = sluice.LocalDataset(os.path.join(DATA, name), allow_unsafe_types=True, validate_hash=True)
    assert len(ds) == len(exp)
    seen = set()
    for e in exp:
        sample = ds[e['sample']]
        if 'fields' in e:  # MDS and XSV
            assert sorted(sample) == sorted(e['fields'])
            for col, f in e['fields'].items():
                if 'raw_hex' in f or 'encoding' in f and f['encoding'] not in ('str', 'int', 'float'):
                    check_field(sample[col], f)
                else:  # CSV/TSV: int / float / str from text
                    if f['encoding'] == 'float':
                        assert type(sample[col]) is float
                        assert repr(sample[col]) == f['value_repr']
                    else:
                        assert sample[col] == f['value']
                seen.add(f['encoding'])
        else:  # JSONL: the line's object
            assert sample == e['value']
            assert ds.get_raw(e['sample']).hex() == e['line_hex']
        if 'line_hex' in e:
            assert ds.get_raw(e['sample']).hex() == e['line_hex']


def test_pkl_needs_allow_unsafe_types():
    with pytest.raises(ValueError) as e:
        sluice.LocalDataset(os.path.join(DATA, 'all_encodings'))
    # Mosaic's text, which users match
    assert str(e.value) == ('Column e_pkl contains an unsafe type: pkl. To proceed anyway, set '
                            '``allow_unsafe_types=True``.')
    with pytest.raises(ValueError) as e:
        sluice.StreamingDataset(local=os.path.join(DATA, 'all_encodings'), batch_size=1)
    assert str(e.value) == ('Column e_pkl contains an unsafe type: pkl. To proceed anyway, set '
                            '``allow_unsafe_types=True``.')


def test_index_arrays_and_negative_indices():
    ds = sluice.LocalDataset(os.path.join(DATA, 'single_shard_no_limit'))
    exp = expected('single_shard_no_limit')
    got = ds[np.array([3, 0, 3])]
    assert [g == ds[i] for g, i in zip(got, [3, 0, 3])] == [True] * 3
    assert ds[-1] == ds[len(exp) - 1]
    with pytest.raises(IndexError, match='out of range'):
        ds[len(exp)]


def test_missing_folder_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match=str(tmp_path / 'nope')):
        sluice.LocalDataset(str(tmp_path / 'nope'))


def test_ndarray_is_a_read_only_view_as_mosaic():
    ds = sluice.LocalDataset(os.path.join(DATA, 'fixed_size_only'))
    arr = ds[3]['arr']
    assert arr.dtype == np.int16 and arr.shape == (2, 2)
    assert not arr.flags.writeable
    del ds
    assert arr.sum() == arr.sum()  # owned by Python bytes: outlives the dataset
