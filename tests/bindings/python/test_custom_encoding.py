"""A user's own MDS encoding, registered as Mosaic's docs show
(`_encodings['complex128'] = Complex128`): MDSWriter stores what its class
encodes, index.json names it with its size, and StreamingDataset reads it
back through the engine (which hands its bytes through) and the class."""
import json

import numpy as np
import pytest

import sluice
from sluice import engine, mds_encodings


class Complex128(mds_encodings.Encoding):
    """Mosaic's docs' example: no `size`, so its fields vary in size."""

    def encode(self, obj):
        return np.complex128(obj).tobytes()

    def decode(self, data):
        return np.frombuffer(data, np.complex128)[0]


class FixedComplex128(Complex128):
    size = 16


VALUES = [complex(1.5, -2), complex(0, 0), complex(-1e300, 3.25)]


@pytest.fixture
def registered(monkeypatch):
    monkeypatch.setitem(mds_encodings._encodings, 'complex128', Complex128)
    monkeypatch.setitem(mds_encodings._encodings, 'complex128_fixed', FixedComplex128)


def samples_region(folder):
    """An MDS shard's sample bytes: from its first offset to its last."""
    data = (folder / 'shard.00000.mds').read_bytes()
    n = int.from_bytes(data[:4], 'little')
    offsets = np.frombuffer(data, np.uint32, n + 1, 4)
    return data[offsets[0]:offsets[-1]]


def write(folder, columns, rows):
    with sluice.MDSWriter(out=str(folder), columns=columns) as w:
        for row in rows:
            w.write(row)


@pytest.mark.parametrize('where', ['local', 'remote'])
def test_custom_encodings_write_and_read(tmp_path, registered, where):
    out = tmp_path / 'ds'
    write(out, {'z': 'complex128', 'f': 'complex128_fixed', 'id': 'int'},
          [{'z': v, 'f': v, 'id': i} for i, v in enumerate(VALUES)])
    shard = json.load(open(out / 'index.json'))['shards'][0]
    assert shard['column_names'] == ['f', 'id', 'z']
    assert shard['column_encodings'] == ['complex128_fixed', 'int', 'complex128']
    assert shard['column_sizes'] == [16, 8, None]
    # The stored samples are what the class encodes, laid out as for any
    # fixed-size (f) or variable-size (z) column: as a fixed 16-byte ndarray
    # and as bytes hold them (the shard's config, before them, names the
    # encodings).
    same = tmp_path / 'same'
    write(same, {'z': 'bytes', 'f': 'ndarray:float64:2', 'id': 'int'},
          [{'z': np.complex128(v).tobytes(), 'f': np.array([v.real, v.imag]), 'id': i}
           for i, v in enumerate(VALUES)])
    assert samples_region(out) == samples_region(same)
    assert len(samples_region(out)) == 3 * (4 + 16 + 8 + 16)

    if where == 'local':
        ds = sluice.StreamingDataset(local=str(out), batch_size=1)
    else:
        ds = sluice.StreamingDataset(remote=str(out), local=str(tmp_path / 'cache'), batch_size=1)
    got = list(ds)
    assert [(type(s['z']), s['z'], type(s['f']), s['f'], s['id']) for s in got] == \
        [(np.complex128, v, np.complex128, v, i) for i, v in enumerate(VALUES)]
    assert ds[2]['z'] == complex(-1e300, 3.25)


def unregistered_dataset(folder, monkeypatch):
    """A dataset whose column z has a user's own encoding nobody registered
    when it is read."""
    monkeypatch.setitem(mds_encodings._encodings, 'complex128', Complex128)
    write(folder, {'z': 'complex128', 'id': 'int'},
          [{'z': v, 'id': i} for i, v in enumerate(VALUES)])
    monkeypatch.delitem(mds_encodings._encodings, 'complex128')


@pytest.mark.parametrize('kind', ['streaming', 'local'])
def test_unregistered_encoding_fails_when_read(tmp_path, monkeypatch, kind):
    # As Mosaic: the dataset is made (its shards only refuse pkl), and
    # decoding a sample fails with mds_decode's ValueError; the registry is
    # asked then, so a class registered afterwards decodes.
    unregistered_dataset(tmp_path / 'ds', monkeypatch)
    if kind == 'streaming':
        ds = sluice.StreamingDataset(local=str(tmp_path / 'ds'), batch_size=1)
    else:
        ds = sluice.LocalDataset(str(tmp_path / 'ds'))
    assert len(ds) == 3
    with pytest.raises(ValueError, match=r'^Unsupported encoding: complex128\.$'):
        ds[1]
    if kind == 'streaming':
        with pytest.raises(ValueError, match=r'^Unsupported encoding: complex128\.$'):
            next(iter(ds))
    monkeypatch.setitem(mds_encodings._encodings, 'complex128', Complex128)
    assert ds[1] == {'id': 1, 'z': np.complex128(VALUES[1])}


def test_engine_refuses_encodings_its_caller_did_not_register(tmp_path, monkeypatch):
    # The engine hands the fields of a name that is not built in only to a
    # caller that registered it (or, as the package does, all of them).
    unregistered_dataset(tmp_path / 'ds', monkeypatch)
    stream = {'local': str(tmp_path / 'ds')}
    with pytest.raises(NotImplementedError) as e:
        engine.Engine({'streams': [stream]})
    assert str(e.value) == (f"unimplemented: stream 0 ({tmp_path / 'ds'}): shard 0 "
                            f"(shard.00000.mds): column 'z' has encoding 'complex128', which is "
                            f"neither built in nor registered")
    with pytest.raises(NotImplementedError, match="column 'z' has encoding 'complex128'"):
        engine.Engine({'streams': [stream], 'custom_encodings': ['complex']})
    for registered in ({'custom_encodings': ['complex128']}, {'any_custom_encoding': True}):
        opened = engine.Engine({'streams': [stream], **registered})
        assert opened.column_encodings == ['int', 'complex128']
        opened.close()


def test_fixed_size_is_checked_when_written(tmp_path, registered):
    class Wrong(Complex128):
        size = 8
    mds_encodings._encodings['complex128_fixed'] = Wrong
    with sluice.MDSWriter(out=str(tmp_path / 'ds'), columns={'f': 'complex128_fixed'}) as w:
        with pytest.raises(ValueError, match=r"'f'"):
            w.write({'f': 1j})
