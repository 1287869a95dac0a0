"""sluice.sample_batch: samples decoded column by column (one ABI call per
column of an engine batch) are the values, types and key order that the
per-field path (random access, Engine.get) gives, for every kind of column;
dict keys of any spelling survive the generated dict display."""
import json
import os
import struct

import numpy as np
import pytest

import sluice
from sluice import engine, sample_batch

COLUMNS = {'id': 'int', 'data': 'bytes', 'text': 'str', 'i32': 'int32', 'f64': 'float64',
           'u8': 'uint8', 'vec': 'ndarray:float32:3', 'obj': 'json', 'pick': 'pkl',
           'num': 'str_int'}


def value(i):
    return {'id': i - 50, 'data': bytes([i % 256]) * (i % 7),  # some empty
            'text': 'é' * (i % 5) + str(i), 'i32': -i, 'f64': i / 3,
            'u8': np.uint8(i % 256), 'vec': np.array([i, i + 0.5, -i], np.float32),
            'obj': {'k': [i, None]}, 'pick': (i, 'x'), 'num': i * 1000}


@pytest.fixture
def packed_calls(monkeypatch):
    """How many engine batches SampleBatch decoded."""
    calls = []
    real = sample_batch.SampleBatch.samples

    def counted(self, count):
        calls.append(count)
        return real(self, count)

    monkeypatch.setattr(sample_batch.SampleBatch, 'samples', counted)
    return calls


def same(a, b):
    """Equal values of equal types (numpy arrays: dtype, shape and items)."""
    assert list(a) == list(b)  # key order
    for k in a:
        assert type(a[k]) is type(b[k]), k
        if isinstance(a[k], np.ndarray):
            assert a[k].dtype == b[k].dtype and a[k].tolist() == b[k].tolist(), k
        else:
            assert a[k] == b[k], k


def test_every_column_kind_decodes_as_the_per_field_path(tmp_path, packed_calls):
    folder = str(tmp_path / 'ds')
    with sluice.MDSWriter(out=folder, columns=COLUMNS, size_limit=1 << 14) as w:
        for i in range(300):
            w.write(value(i))
    ds = sluice.StreamingDataset(local=folder, batch_size=8, allow_unsafe_types=True)
    got = list(ds)
    assert sum(packed_calls) > 200  # most samples came through SampleBatch
    assert len(got) == 300
    for i, s in enumerate(got):
        same(s, ds[i])  # Engine.get: the per-field path
        want = value(i)
        assert s['id'] == want['id'] and s['data'] == want['data'] and s['text'] == want['text']
        assert s['pick'] == want['pick'] and s['obj'] == want['obj'] and s['num'] == want['num']
        assert s['vec'].tolist() == want['vec'].tolist()


def test_large_samples_take_the_per_field_path(tmp_path, packed_calls):
    # 20 KiB a sample: more than _LIVE_BYTES / _PACKED_FROM.
    assert 20 << 10 > engine._LIVE_BYTES // engine._PACKED_FROM
    folder = str(tmp_path / 'ds')
    with sluice.MDSWriter(out=folder, columns={'id': 'int', 'data': 'bytes'}) as w:
        for i in range(40):
            w.write({'id': i, 'data': bytes([i]) * (20 << 10)})
    ds = sluice.StreamingDataset(local=folder, batch_size=8)
    assert [(s['id'], s['data']) for s in ds] == [(i, bytes([i]) * (20 << 10))
                                                  for i in range(40)]
    assert packed_calls == []


def test_a_batch_larger_than_the_buffer_goes_field_by_field(tmp_path, monkeypatch):
    # Small first samples, then samples whose column outgrows CAPACITY.
    monkeypatch.setattr(sample_batch.SampleBatch, 'CAPACITY', 4096)
    sizes = [10] * 20 + [1000] * 40
    folder = str(tmp_path / 'ds')
    with sluice.MDSWriter(out=folder, columns={'id': 'int', 'data': 'bytes'}) as w:
        for i, n in enumerate(sizes):
            w.write({'id': i, 'data': bytes([i]) * n})
    ds = sluice.StreamingDataset(local=folder, batch_size=8)
    seen = []
    real = sample_batch.SampleBatch.samples
    monkeypatch.setattr(sample_batch.SampleBatch, 'samples',
                        lambda self, count: seen.append(real(self, count)) or seen[-1])
    assert [(s['id'], s['data']) for s in ds] == [(i, bytes([i]) * n)
                                                  for i, n in enumerate(sizes)]
    assert None in seen  # a batch was refused, and decoded field by field


def test_a_text_int_column_is_decoded_from_its_text(tmp_path):
    # A JSONL 'int' is the value's text: never read as 8-byte integers.
    folder = str(tmp_path / 'ds')
    with sluice.JSONWriter(out=folder, columns={'id': 'int', 'name': 'str'}) as w:
        for i in range(100):
            w.write({'id': 10 ** 9 + i, 'name': f'n{i}'})
    ds = sluice.StreamingDataset(local=folder, batch_size=8)
    assert list(ds) == [{'id': 10 ** 9 + i, 'name': f'n{i}'} for i in range(100)]


def test_an_mds_int_column_of_another_size_is_refused(tmp_path):
    # What SampleBatch relies on to read 'int' columns 8 bytes a field.
    folder = str(tmp_path / 'ds')
    with sluice.MDSWriter(out=folder, columns={'id': 'bytes', 'data': 'bytes'}) as w:
        for i in range(40):
            w.write({'id': struct.pack('<q', i) if i != 20 else b'1234', 'data': b'x'})
    with open(os.path.join(folder, 'index.json')) as f:
        index = json.load(f)
    index['shards'][0]['column_encodings'][index['shards'][0]['column_names'].index('id')] = 'int'
    with open(os.path.join(folder, 'index.json'), 'w') as f:
        json.dump(index, f)
    ds = sluice.StreamingDataset(local=folder, batch_size=8)
    with pytest.raises(ValueError, match=r"column 'id' \(int\) has size null, expected 8"):
        list(ds)


@pytest.mark.parametrize('names', [['a'], ["it's", 'say "hi"', 'back\\slash', 'ü', 'x y', '\n']])
def test_dict_maker_spells_any_key(names):
    make = sample_batch._dict_maker(names)
    columns = [[(n, k) for k in range(3)] for n in names]
    assert make(*columns) == [{n: (n, k) for n in names} for k in range(3)]
    assert [list(d) for d in make(*columns)] == [names] * 3
