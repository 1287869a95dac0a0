"""Packed lists holding null elements (formats/parquet/field_encoding.h),
through every path of the package: LocalDataset (sluice_dataset_*),
StreamingDataset's random access (sluice_stream_get), iteration
(sluice_stream_next_batch, both decoders) and batch mode (iter_batches'
ListColumn.element_nulls). Every value of pa26_null_elements_* equals what
pyarrow and DuckDB read (<name>.expected.json): a numpy masked array of the
element's dtype, masked exactly where the element is null, whose .tolist()
is the list with None that `datasets` gives; lists without a null element
stay plain arrays."""
import json
import pathlib
import shutil

import numpy as np
import pytest

from sluice import LocalDataset, StreamingDataset
from sluice.column_batches import ListColumn
from sluice.parquet_values import packed_list_kind, parquet_decoder, with_null_elements

DATA = pathlib.Path(__file__).resolve().parents[2] / 'data' / 'parquet'
NULL_ELEMENT_FILES = ['pa26_null_elements_v1', 'pa26_null_elements_v2_small_pages']


def _expected_rows(name):
    e = json.loads((DATA / f'{name}.expected.json').read_text())
    return [{c['name']: c['values'][r] for c in e['columns']} for r in range(e['num_rows'])]


def _as_json(value, encoding):
    """A packed list's value in the fixtures' form (floats as repr, times as
    counts, None where masked), checking its type and dtype."""
    if value is None:
        return None
    plain_dtype = parquet_decoder(encoding, 'c')(b'').dtype
    assert isinstance(value, np.ndarray) and value.dtype == plain_dtype, (encoding, value)
    mask = value.mask.tolist() if isinstance(value, np.ma.MaskedArray) else [False] * len(value)
    data = np.asarray(value.data if isinstance(value, np.ma.MaskedArray) else value)
    if data.dtype.kind in 'Mm':
        data = data.astype('int64')
    out = []
    for x, m in zip(data.tolist(), mask):
        if m:
            out.append(None)
        elif isinstance(x, float):
            out.append(repr(np.float32(x).item()) if data.dtype == np.float32 else repr(x))
        else:
            out.append(x)
    return out


def _check_row(got, want, encodings, where):
    masked = 0
    for name, enc in encodings.items():
        value, expected = got[name], want[name]
        holds_null = expected is not None and None in expected
        assert isinstance(value, np.ma.MaskedArray) == holds_null, (where, name, value)
        masked += holds_null
        assert _as_json(value, enc) == expected, (where, name)
    return masked


@pytest.fixture(params=NULL_ELEMENT_FILES)
def null_elements(request, tmp_path):
    root = tmp_path / request.param
    root.mkdir()
    shutil.copy(DATA / f'{request.param}.parquet', root / 'part-0.parquet')
    return request.param, root


def _packed_encodings(ds):
    return {n: e for n, e in zip(ds.column_names, ds.column_encodings)
            if packed_list_kind(e) is not None}


def test_local_rows_mask_exactly_the_null_elements(null_elements):
    name, _ = null_elements
    ds = LocalDataset(str(DATA / f'{name}.parquet'))
    encodings = _packed_encodings(ds)
    assert sorted(encodings) == ['bool_list', 'date_list', 'embedding', 'float32_list',
                                 'float64_list', 'int32_list', 'int64_list', 'ts_us_utc_list',
                                 'uint8_list']
    want = _expected_rows(name)
    masked = sum(_check_row(ds[i], want[i], encodings, i) for i in range(len(ds)))
    assert masked > 50
    # Nested lists keep their JSON form, None inside.
    assert [ds[i]['nested_int32_list'] for i in range(len(ds))] == \
        [w['nested_int32_list'] for w in want]


def test_a_masked_list_is_what_datasets_gives():
    ds = LocalDataset(str(DATA / 'pa26_null_elements_v1.parquet'))
    row = ds[2]
    ids = row['int32_list']
    assert type(ids) is np.ma.MaskedArray and ids.dtype == np.int32
    assert ids.tolist() == [-1847456881, None, -324187610, None, 1922895273]
    assert ids.mask.tolist() == [False, True, False, True, False]
    assert ids.data.tolist() == [-1847456881, 0, -324187610, 0, 1922895273]
    assert row['bool_list'].tolist() == [False, False, True, False, False, None]
    assert ds[0]['int32_list'].tolist() == [None]
    assert ds[4]['int32_list'] is None
    empty = ds[5]['int32_list']
    assert type(empty) is np.ndarray and empty.tolist() == []
    full = ds[1]['int32_list']  # no null element: a plain array, as before
    assert type(full) is np.ndarray and len(full) == 6


def test_streamed_rows_mask_the_null_elements(null_elements):
    name, root = null_elements
    want = _expected_rows(name)
    ds = StreamingDataset(local=str(root), batch_size=8)
    encodings = _packed_encodings(ds._engine)
    # Random access: sluice_stream_get.
    assert sum(_check_row(ds[i], want[i], encodings, i) for i in range(len(ds))) > 50
    # Iteration: batches of the engine, decoded together or field by field.
    rows = list(ds)
    assert len(rows) == len(want)
    assert sum(_check_row(r, want[r['id']], encodings, r['id']) for r in rows) > 50


def test_batch_mode_marks_the_null_elements(null_elements):
    name, root = null_elements
    want = _expected_rows(name)
    ds = StreamingDataset(local=str(root), batch_size=16)
    encodings = _packed_encodings(ds._engine)
    seen = 0
    for batch in ds.iter_batches(batch_size=16):
        ids = batch['id'].values.tolist()
        for col, enc in encodings.items():
            column = batch[col]
            assert type(column) is ListColumn
            flat = [x for i in ids if want[i][col] for x in want[i][col]]
            if None in flat:
                assert column.element_nulls.tolist() == [x is None for x in flat], col
                assert not column.values[column.element_nulls].astype('int64').any()
            else:
                assert column.element_nulls is None
            for k, i in enumerate(ids):
                assert _as_json(column.row(k), enc) == want[i][col], (i, col)
        seen += len(ids)
    assert seen == len(want)


def test_the_mask_must_fit_the_list():
    values = np.array([1, 0, 3], np.int32)
    got = with_null_elements(values, b'\x01\x00\x01')
    assert got.tolist() == [1, None, 3] and got.dtype == np.int32
    with pytest.raises(ValueError) as info:
        with_null_elements(values, b'\x01\x00')
    assert str(info.value) == 'a mask of 2 null-element flags for a list of 3 elements'
