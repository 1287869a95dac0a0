"""sluice.MDSWriter, JSON/CSV/TSV writers and merge_index reproduce the compat
datasets written by mosaicml-streaming, byte for byte, from Python values."""
import json
import os
import shutil
from decimal import Decimal

import numpy as np
import pytest
from PIL import Image

import sluice
from conftest import DATA


def expected(name):
    with open(os.path.join(DATA, name, 'expected.jsonl')) as f:
        return [json.loads(line) for line in f]


def index_entry(name):
    with open(os.path.join(DATA, name, 'index.json')) as f:
        return json.load(f)['shards'][0]


def python_value(f):
    """The Python value Mosaic's writer was given for a field, rebuilt from
    expected.jsonl; raw bytes (stored as is) where the value cannot be rebuilt
    exactly (lossy JPEG, PNG whose source image is unknown, pickles, NaN
    inside JSON)."""
    enc = f['encoding']
    raw = bytes.fromhex(f['raw_hex'])
    if enc == 'int':
        return f['value']
    if enc in ('int8', 'int16', 'int32', 'int64', 'uint8', 'uint16', 'uint32', 'uint64'):
        return f['value']
    if enc in ('float16', 'float32', 'float64'):
        return float(f['value_repr'])
    if enc == 'str':
        return f['value']
    if enc == 'bytes':
        return raw
    if enc == 'str_int':
        return int(f['value_str'])
    if enc == 'str_float':
        return float(f['value_repr'])
    if enc == 'str_decimal':
        return Decimal(f['value_str'])
    if enc == 'json':
        return f['value'] if json.dumps(f['value']).encode() == raw else raw
    if enc == 'pil':
        im = f['image']
        return Image.frombytes(im['mode'], (im['width'], im['height']),
                               bytes.fromhex(im['pixels_hex']))
    if enc == 'list[pil]':
        return [Image.frombytes(i['image']['mode'], (i['image']['width'], i['image']['height']),
                                bytes.fromhex(i['image']['pixels_hex'])) for i in f['items']]
    if enc.startswith('ndarray') and 'values' in f:
        return np.array(f['values'], dtype=f['dtype']).reshape(f['shape'])
    if enc.startswith('ndarray') and 'values_repr' in f:
        return np.array([float(v) for v in f['values_repr']], dtype=f['dtype']).reshape(f['shape'])
    return raw


def rewrite(name, out, **overrides):
    entry = index_entry(name)
    columns = dict(zip(entry['column_names'], entry['column_encodings']))
    kwargs = dict(compression=entry['compression'], hashes=entry['hashes'],
                  size_limit=entry['size_limit'])
    kwargs.update(overrides)
    out = out if isinstance(out, tuple) else str(out)
    with sluice.MDSWriter(out=out, columns=columns, **kwargs) as w:
        for e in expected(name):
            w.write({c: python_value(f) for c, f in e['fields'].items()})


def assert_same_files(got, want, skip=('expected.jsonl',)):
    names = sorted(n for n in os.listdir(want) if n not in skip and
                   os.path.isfile(os.path.join(want, n)))
    assert sorted(os.listdir(got)) == names
    for n in names:
        with open(os.path.join(got, n), 'rb') as a, open(os.path.join(want, n), 'rb') as b:
            assert a.read() == b.read(), n


@pytest.mark.parametrize('name', ['single_shard_no_limit', 'fixed_size_only', 'all_encodings',
                                  'quirk_oversized_samples', 'hashed_all_algos'])
def test_mds_writer_is_byte_identical(tmp_path, name):
    rewrite(name, tmp_path / name)
    assert_same_files(tmp_path / name, os.path.join(DATA, name))


def test_mds_writer_values_not_bytes(tmp_path):
    # Every all_encodings value that is rebuilt as a Python object (not raw
    # bytes) went through the Python encoders; count them so the test above
    # cannot silently pass on raw bytes alone.
    kinds = set()
    for e in expected('all_encodings'):
        for f in e['fields'].values():
            if not isinstance(python_value(f), bytes):
                kinds.add(f['encoding'])
    assert {'int', 'int8', 'uint64', 'float16', 'str', 'str_int', 'str_float', 'str_decimal',
            'json', 'pil', 'list[pil]', 'ndarray', 'ndarray:float32:2,3'} <= kinds


def test_mds_writer_size_limit_string_and_errors(tmp_path):
    with sluice.MDSWriter(out=str(tmp_path / 'a'), columns={'x': 'int'}, size_limit='1kb') as w:
        for i in range(200):
            w.write({'x': i})
    index = json.load(open(tmp_path / 'a' / 'index.json'))
    assert index['shards'][0]['size_limit'] == 1024
    assert sum(s['samples'] for s in index['shards']) == 200
    assert [sluice.LocalDataset(str(tmp_path / 'a'))[i]['x'] for i in (0, 199)] == [0, 199]
    with pytest.raises(ValueError, match="unknown store URL scheme 'nosuch'"):
        sluice.MDSWriter(out='nosuch://bucket/x', columns={'x': 'int'})
    with pytest.raises(FileExistsError):
        sluice.MDSWriter(out=str(tmp_path / 'a'), columns={'x': 'int'})
    with pytest.raises(NotImplementedError, match="'nope'"):
        sluice.MDSWriter(out=str(tmp_path / 'b'), columns={'x': 'nope'})
    w = sluice.MDSWriter(out=str(tmp_path / 'c'), columns={'x': 'int8'})
    with pytest.raises(OverflowError, match=r"^column 'x': int8 encoding: value 300 is out of range "
                                            r"for int8$"):
        w.write({'x': 300})
    w.finish()
    assert sluice.parse_size_limit('1.5kb') == 1536
    assert sluice.parse_size_limit('123') == 123
    assert sluice.parse_size_limit(None) is None
    # As Mosaic: a false or zero size_limit means no limit; its errors' texts.
    for none in (0, '', '0', '0kb', False):
        assert sluice.parse_size_limit(none) is None, none
    with pytest.raises(ValueError, match=r'^`size_limit` must be greater than zero, instead, '
                                         r'found as -5\.$'):
        sluice.parse_size_limit(-5)
    with pytest.raises(ValueError, match=r'^`size_limit` must be less than 2\*\*32, instead, '
                                         r'found as 4294967296\. This is because sample byte '
                                         r'offsets are stored with uint32\.$'):
        sluice.parse_size_limit(1 << 32)
    with sluice.MDSWriter(out=str(tmp_path / 'nolimit'), columns={'x': 'int'},
                          size_limit=0) as w:
        for i in range(1000):
            w.write({'x': i})
    assert len(os.listdir(tmp_path / 'nolimit')) == 2  # one shard and index.json


def test_merge_index_is_byte_identical(tmp_path):
    root = tmp_path / 'merged'
    shutil.copytree(os.path.join(DATA, 'merged'), root)
    os.remove(root / 'index.json')
    sluice.merge_index([str(root / p / 'index.json') for p in ('part0', 'part2', 'part3')],
                       str(root))
    with open(root / 'index.json', 'rb') as a, \
            open(os.path.join(DATA, 'merged', 'index.json'), 'rb') as b:
        assert a.read() == b.read()
    os.remove(root / 'index.json')
    sluice.merge_index(str(root))  # every sub-folder with an index.json, sorted
    with open(root / 'index.json', 'rb') as a, \
            open(os.path.join(DATA, 'merged', 'index.json'), 'rb') as b:
        assert a.read() == b.read()
    assert len(sluice.LocalDataset(str(root))) == 37 + 64 + 5


def test_merge_index_of_a_root_orders_partitions_by_path(tmp_path):
    # Mosaic sorts the index files' full paths: 'p-1/index.json' and
    # 'p.2/index.json' come before 'p/index.json' ('-' < '.' < '/').
    root = tmp_path / 'root'
    for name, first in (('p', 0), ('p-1', 100), ('p.2', 200)):
        with sluice.MDSWriter(out=str(root / name), columns={'id': 'int'}) as w:
            for i in range(3):
                w.write({'id': first + i})
    sluice.merge_index(str(root))
    with open(root / 'index.json') as f:
        prefixes = [s['raw_data']['basename'].split('/')[0] for s in json.load(f)['shards']]
    assert prefixes == ['p-1', 'p.2', 'p']
    assert [int(s['id']) for s in sluice.LocalDataset(str(root))] == \
        [100, 101, 102, 200, 201, 202, 0, 1, 2]


@pytest.mark.parametrize('cls,name', [(sluice.JSONWriter, 'json_plain'),
                                      (sluice.CSVWriter, 'csv_plain'),
                                      (sluice.TSVWriter, 'tsv_plain')])
def test_text_writers_are_byte_identical(tmp_path, cls, name):
    rows = [json.loads(line)['value'] for line in open(os.path.join(DATA, 'json_plain',
                                                                     'expected.jsonl'))]
    out = tmp_path / name
    with cls(out=str(out), columns={'id': 'int', 'name': 'str', 'score': 'float'},
             size_limit=2048) as w:
        for r in rows:
            w.write(r)
    assert_same_files(out, os.path.join(DATA, name))
    back = sluice.LocalDataset(str(out))
    assert [back[i] for i in range(len(back))] == rows


def test_text_writer_errors(tmp_path):
    w = sluice.CSVWriter(out=str(tmp_path / 'a'), columns={'id': 'int', 'name': 'str'})
    with pytest.raises(TypeError, match="'id' \\(int\\): got str"):
        w.write({'id': '1', 'name': 'x'})
    with pytest.raises(ValueError, match="name"):
        w.write({'id': 1, 'name': 'a,b'})  # CSV has no quoting: the separator is refused
    w.finish()
