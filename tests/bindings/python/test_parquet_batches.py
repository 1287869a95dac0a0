"""Batch mode's Parquet columns (sluice.column_batches.parquet_batch_column):
a batch built from the fields of every fixture's rows, as the engine's
packed copy hands them over (bytes back to back, offsets, NULL views as
nulls), holds exactly those fields: fixed-width values as one typed array
with their nulls, packed lists as one flat array with element offsets,
other columns as bytes with offsets and nulls."""
import json
import pathlib

import numpy as np
import pytest

from sluice import LocalDataset
from sluice.column_batches import (ListColumn, NullableVarColumn, ValueColumn,
                                   parquet_batch_column, to_torch)
from sluice.parquet_values import packed_list_kind, parquet_kind

DATA = pathlib.Path(__file__).resolve().parents[2] / 'data' / 'parquet'
FILES = sorted(p.name for p in DATA.glob('*.parquet') if not p.name.startswith('bad_'))


def packed(fields):
    """The engine's packed copy of one column: (data, offsets, nulls)."""
    sizes = [0 if f is None else len(f) for f in fields]
    data = np.frombuffer(b''.join(f for f in fields if f), np.uint8).copy()
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    return data, offsets, np.array([f is None for f in fields], bool)


def readable_rows(ds):
    """The raw fields of each row (a packed list's null elements are zero
    bytes there; test_parquet_null_elements checks their masks)."""
    return [ds.raw_fields(i) for i in range(len(ds))]


@pytest.mark.parametrize('file', FILES)
def test_batch_columns_hold_every_field(file):
    ds = LocalDataset(str(DATA / file))
    rows = readable_rows(ds)
    assert rows
    for c, (name, enc) in enumerate(zip(ds.column_names, ds.column_encodings)):
        fields = [r[c] for r in rows]
        column = parquet_batch_column(name, enc, *packed(fields))
        has_nulls = any(f is None for f in fields)
        assert (column.nulls is not None) == has_nulls, (file, name)
        if has_nulls:
            assert column.nulls.tolist() == [f is None for f in fields]
        kind, element = parquet_kind(enc), packed_list_kind(enc)
        if kind is not None and kind.width:
            assert type(column) is ValueColumn, (file, name, enc)
            assert column.values.shape == (len(fields),)
            assert column.values.dtype == np.dtype(kind.array_dtype)
            stored = column.values.astype(kind.stored_dtype)
            for k, f in enumerate(fields):
                assert stored[k].tobytes() == (f if f is not None else bytes(kind.width)), \
                    (file, name, k)
        elif element is not None:
            assert type(column) is ListColumn, (file, name, enc)
            assert column.values.dtype == np.dtype(element.array_dtype)
            assert column.offsets[0] == 0 and column.offsets[-1] == len(column.values)
            for k, f in enumerate(fields):
                row = column.row(k)
                assert (row is None) == (f is None)
                if f is not None:
                    assert row.astype(element.stored_dtype).tobytes() == f, (file, name, k)
        else:
            assert type(column) is NullableVarColumn, (file, name, enc)
            assert column.to_list() == fields


def test_token_ids_are_one_flat_array_with_offsets():
    ds = LocalDataset(str(DATA / 'hf_text.parquet'))
    want = json.loads((DATA / 'hf_text.expected.json').read_text())['columns'][1]['values']
    c = ds.column_names.index('input_ids')
    column = parquet_batch_column('input_ids', 'list<int32>',
                                  *packed([ds.raw_fields(i)[c] for i in range(len(ds))]))
    assert column.values.dtype == np.int32 and column.values.ndim == 1
    assert column.offsets.dtype == np.int64 and len(column.offsets) == len(ds) + 1
    assert column.nulls is None
    assert [column.row(k).tolist() for k in range(len(ds))] == want
    assert len(column.values) == sum(len(w) for w in want)


def test_timestamps_and_dates_are_numpy_datetimes():
    ds = LocalDataset(str(DATA / 'pa26_types_v1_snappy.parquet'))
    e = json.loads((DATA / 'pa26_types_v1_snappy.expected.json').read_text())
    for name, dtype in (('ts_ms_utc', 'datetime64[ms]'), ('ts_ns', 'datetime64[ns]'),
                        ('date32', 'datetime64[D]'), ('bool', 'bool'), ('float16', 'float16'),
                        ('uint64', 'uint64')):
        c = ds.column_names.index(name)
        column = parquet_batch_column(name, ds.column_encodings[c],
                                      *packed([ds.raw_fields(i)[c] for i in range(len(ds))]))
        assert column.values.dtype == np.dtype(dtype), name
        want = e['columns'][c]['values']
        got = column.to_list()
        assert [v is None for v in got] == [w is None for w in want], name
        if dtype.startswith('datetime64'):
            counts = column.values.view(np.int64) if dtype != 'datetime64[D]' \
                else column.values.astype(np.int64)
            assert [int(x) for x, w in zip(counts, want) if w is not None] == \
                [w for w in want if w is not None], name


def test_a_field_of_the_wrong_size_names_the_column():
    data, offsets, nulls = packed([b'\x01\x00\x00\x00', b'\x02\x00'])
    with pytest.raises(ValueError) as info:
        parquet_batch_column('n', 'int32', data, offsets, nulls)
    assert str(info.value) == "column 'n' (int32): a field is not 4 bytes"
    data, offsets, nulls = packed([b'\x01\x00\x00\x00\x02'])
    with pytest.raises(ValueError) as info:
        parquet_batch_column('ids', 'list<int32>', data, offsets, nulls)
    assert str(info.value) == "column 'ids' (list<int32>): a list is not a whole number of " \
                              "4-byte values"


def test_to_torch_keeps_the_columns_arrays():
    torch = pytest.importorskip('torch')
    data, offsets, nulls = packed([np.array([1, 2], '<i4').tobytes(), None, b''])
    column = parquet_batch_column('ids', 'list<int32>', data, offsets, nulls)
    t = to_torch({'ids': column})['ids']
    assert type(t) is ListColumn
    assert t.values.dtype == torch.int32 and t.values.data_ptr() == column.values.ctypes.data
    assert t.offsets.tolist() == [0, 2, 2, 2] and t.nulls.tolist() == [False, True, False]
