"""A user's own MDS encoding, registered as Mosaic's docs show
(`_encodings['complex128'] = Complex128`): MDSWriter stores what its class
encodes, index.json names it with its size, and StreamingDataset reads it
back through the engine (which hands its bytes through) and the class."""
import json

import numpy as np
import pytest

import sluice
from sluice import mds_encodings


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


def test_unregistered_encoding_fails_when_read(tmp_path, monkeypatch):
    monkeypatch.setitem(mds_encodings._encodings, 'complex128', Complex128)
    write(tmp_path / 'ds', {'z': 'complex128'}, [{'z': 1j}])
    monkeypatch.delitem(mds_encodings._encodings, 'complex128')
    with pytest.raises(NotImplementedError, match=r"^column 'z': unsupported encoding "
                                                  r"'complex128'$"):
        sluice.StreamingDataset(local=str(tmp_path / 'ds'))


def test_fixed_size_is_checked_when_written(tmp_path, registered):
    class Wrong(Complex128):
        size = 8
    mds_encodings._encodings['complex128_fixed'] = Wrong
    with sluice.MDSWriter(out=str(tmp_path / 'ds'), columns={'f': 'complex128_fixed'}) as w:
        with pytest.raises(ValueError, match=r"'f'"):
            w.write({'f': 1j})
