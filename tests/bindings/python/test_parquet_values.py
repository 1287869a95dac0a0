"""Parquet values through the package: every fixture of tests/data/parquet
opened with LocalDataset (sluice_dataset_open over the C ABI), every field
of every row decoded by sluice.parquet_values and brought back to the
fixtures' JSON form (PARQUET.md) equal to <name>.expected.json; the Python
types are those `datasets` gives (int, float, str, bytes, Decimal, date,
datetime, pandas.Timestamp for ns, numpy arrays for packed lists, lists,
None). A packed list holding a null element is a numpy masked array,
masked exactly where the element is null."""
import datetime
import decimal
import json
import pathlib

import numpy as np
import pytest

from sluice import LocalDataset
from sluice.parquet_values import parquet_decoder

DATA = pathlib.Path(__file__).resolve().parents[2] / 'data' / 'parquet'
_EPOCH = datetime.datetime(1970, 1, 1)


def _fixtures():
    """(id, dataset path, [expected.json dicts in the dataset's row order]):
    each file, and each Spark folder as a whole (its parts in path order)."""
    out = []
    for path in sorted(DATA.glob('*.expected.json')):
        if not path.name.startswith('bad_'):
            e = json.loads(path.read_text())
            out.append((path.name[:-len('.expected.json')], DATA / e['file'], [e]))
    for folder in sorted(p for p in DATA.iterdir() if p.is_dir() and p.name.startswith('spark')):
        parts = [json.loads(p.read_text()) for p in folder.glob('*.expected.json')]
        parts.sort(key=lambda e: e['file'])
        out.append((folder.name, folder, parts))
    return out


FIXTURES = _fixtures()


def _element(encoding):
    return encoding[5:-1] if encoding.startswith('list<') else None


def _count(value, unit):
    """A datetime / pandas.Timestamp / time as its count of `unit` (the
    fixtures' form)."""
    if hasattr(value, 'value') and hasattr(value, 'nanosecond'):  # pandas.Timestamp
        ns = value.value
    elif isinstance(value, datetime.datetime):
        naive = value.astimezone(datetime.timezone.utc).replace(tzinfo=None) \
            if value.tzinfo else value
        ns = (naive - _EPOCH) // datetime.timedelta(microseconds=1) * 1000
    else:
        raise AssertionError(f'{value!r} is no timestamp')
    return ns // {'ms': 1000000, 'us': 1000, 'ns': 1}[unit]


def as_expected(value, encoding):
    """A decoded value in the fixtures' JSON form, checking its Python type
    on the way."""
    if value is None:
        return None
    element = _element(encoding)
    if element is not None:
        if isinstance(value, np.ma.MaskedArray):
            # Only where an element is null, of the plain array's dtype.
            assert value.mask.any() and value.dtype == parquet_decoder(encoding, 'c')(b'').dtype
            assert not (value.data[value.mask].astype('int64') != 0).any(), encoding
            plain = value.data.tolist() if value.dtype.kind in 'iufb' else \
                value.data.astype('int64').tolist()
            return [None if m else as_expected(x, element)
                    for x, m in zip(plain, value.mask.tolist())]
        if isinstance(value, np.ndarray):
            assert value.ndim == 1 and value.flags.writeable, encoding
            return [as_expected(x, element) for x in value.tolist()] \
                if value.dtype.kind in 'iufb' else \
                [as_expected(x, element) for x in value.astype('int64').tolist()]
        assert isinstance(value, list), (encoding, type(value))
        return [as_expected(x, element) for x in value]
    if encoding == 'bool':
        assert type(value) is bool
        return value
    if encoding.startswith(('int', 'uint')):
        assert type(value) is int
        return value
    if encoding.startswith('float'):
        assert type(value) is float
        return repr(value)
    if encoding == 'str':
        assert type(value) is str
        return value
    if encoding == 'bytes':
        assert type(value) is bytes
        return {'hex': value.hex()}
    if encoding.startswith('decimal('):
        assert type(value) is decimal.Decimal
        return str(value)
    if encoding == 'date32':
        if isinstance(value, int):  # an element of a packed list (datetime64[D] as int)
            return value
        assert type(value) is datetime.date
        return (value - datetime.date(1970, 1, 1)).days
    if encoding.startswith('timestamp['):
        if isinstance(value, int):
            return value
        unit = encoding[10:12]
        if unit == 'ns':
            assert type(value).__name__ == 'Timestamp', type(value)
        else:
            assert type(value) is datetime.datetime
        assert (value.tzinfo is not None) == encoding.endswith(',UTC]'), (encoding, value)
        return _count(value, unit)
    raise AssertionError(f'no expected form for {encoding}')


def _null_element_columns(parts, encodings, names, row):
    """The columns of global row `row` whose packed list holds a null
    element."""
    for e in parts:
        if row >= e['num_rows']:
            row -= e['num_rows']
            continue
        group, in_group = 0, row
        while in_group >= e['row_groups'][group]['num_rows']:
            in_group -= e['row_groups'][group]['num_rows']
            group += 1
        out = []
        for c, enc in enumerate(encodings):
            value = e['columns'][c]['values'][row]
            element = _element(enc)
            if element is not None and _element(element) is None and \
                    element not in ('str', 'bytes') and not element.startswith('decimal(') \
                    and value is not None and None in value:
                out.append(names[c])
        return out
    raise AssertionError('row past the fixtures')


@pytest.mark.parametrize('name,path,parts', FIXTURES, ids=[f[0] for f in FIXTURES])
def test_every_value_of_every_fixture(name, path, parts):
    ds = LocalDataset(str(path))
    assert ds.format == 'parquet'
    columns = parts[0]['columns']
    assert ds.column_names == [c['name'] for c in columns]
    assert len(ds) == sum(e['num_rows'] for e in parts)
    want_rows = []
    for e in parts:
        for r in range(e['num_rows']):
            want_rows.append({c['name']: c['values'][r] for c in e['columns']})
    checked = masked = 0
    for row, want in enumerate(want_rows):
        with_nulls = _null_element_columns(parts, ds.column_encodings, ds.column_names, row)
        got = ds[row]
        assert list(got) == ds.column_names
        # Masked arrays exactly where a packed list holds a null element.
        assert [c for c in ds.column_names if isinstance(got[c], np.ma.MaskedArray)] == \
            with_nulls, (name, row)
        masked += len(with_nulls)
        for col, enc in zip(ds.column_names, ds.column_encodings):
            assert as_expected(got[col], enc) == want[col], (name, row, col, enc)
            checked += 1
    assert checked > 0
    if name.startswith(('pa26_lists', 'pa12_lists', 'pa26_null_elements')):
        assert masked > 0


def test_large_values_in_pieces_are_their_exact_bytes():
    # hf_image's JPEGs straddle the literals of its snappy dictionary page:
    # LocalDataset copies each straight from its pieces into its bytes
    # (sluice_dataset_get_pieces); every row, in an order that reads each
    # twice after another row, is its exact bytes, beside the other column.
    ds = LocalDataset(str(DATA / 'hf_image.parquet'))
    e = json.loads((DATA / 'hf_image.expected.json').read_text())
    images = [bytes.fromhex(v['hex']) for v in e['columns'][0]['values']]
    labels = e['columns'][1]['values']
    n = len(ds)
    assert n == len(images)
    in_pieces = 0
    for k in range(2 * n):
        row = k // 2 if k % 2 == 0 else n - 1 - k // 2
        got = ds[row]
        in_pieces += ds._num_pieced.value
        assert type(got['image']) is bytes
        assert got['image'] == images[row], row
        assert got['label'] == labels[row], row
    assert in_pieces > 0


def test_null_and_empty_differ():
    for fixture in ('pa26_nulls_v1', 'pa26_types_v1_snappy'):
        ds = LocalDataset(str(DATA / f'{fixture}.parquet'))
        e = json.loads((DATA / f'{fixture}.expected.json').read_text())
        nulls = empties = 0
        for c in e['columns']:
            for row, want in enumerate(c['values']):
                got = ds[row][c['name']]
                if want is None:
                    assert got is None
                    nulls += 1
                elif want == '' or want == {'hex': ''}:
                    assert got in ('', b'')
                    empties += 1
        assert nulls > 0
    assert empties > 0


def test_values_have_the_types_datasets_gives():
    row = LocalDataset(str(DATA / 'pa26_types_v1_snappy.parquet'))[1]
    types = {k: type(v).__name__ for k, v in row.items() if v is not None}
    assert types == {
        'bool': 'bool', 'int8': 'int', 'int16': 'int', 'int32': 'int', 'int64': 'int',
        'uint8': 'int', 'uint16': 'int', 'uint32': 'int', 'uint64': 'int', 'float16': 'float',
        'float32': 'float', 'float64': 'float', 'string': 'str', 'large_string': 'str',
        'binary': 'bytes', 'large_binary': 'bytes', 'fixed_size_binary': 'bytes',
        'ts_ms': 'datetime', 'ts_ms_utc': 'datetime', 'ts_us': 'datetime',
        'ts_us_utc': 'datetime', 'ts_ns': 'Timestamp', 'ts_ns_utc': 'Timestamp',
        'ts_us_tz_ny': 'datetime', 'date32': 'date', 'decimal_9_2': 'Decimal',
        'decimal_18_6': 'Decimal', 'decimal_38_10': 'Decimal'}, types
    assert row['ts_ms_utc'].tzinfo is datetime.timezone.utc
    assert row['ts_ms'].tzinfo is None


def test_packed_lists_are_numpy_arrays_of_their_dtype():
    ds = LocalDataset(str(DATA / 'hf_text.parquet'))
    ids = ds[0]['input_ids']
    want = json.loads((DATA / 'hf_text.expected.json').read_text())['columns'][1]['values'][0]
    assert ids.dtype == np.int32 and ids.tolist() == want
    ids[0] = 7  # a copy the caller owns
    assert ds[0]['input_ids'].tolist() == want


def test_json_lists_decode_their_elements():
    ds = LocalDataset(str(DATA / 'pa26_lists_v1.parquet'))
    words = [w for w in (ds[i]['string_list'] for i in range(len(ds))) if w]
    assert all(isinstance(w, list) for w in words)
    assert any(x is None for w in words for x in w)
    assert all(isinstance(x, str) for w in words for x in w if x is not None)


def test_json_list_elements_of_every_kind():
    dec = parquet_decoder('list<decimal(9,2)>', 'd')
    assert dec(b'["1.50", null, "0E-10"]') == [decimal.Decimal('1.50'), None,
                                               decimal.Decimal('0E-10')]
    assert str(dec(b'["0E-10"]')[0]) == '0E-10'
    assert parquet_decoder('list<bytes>', 'b')(b'[{"hex": "00ff"}, null]') == [b'\x00\xff', None]
    assert parquet_decoder('list<list<int32>>', 'n')(b'[[1, null], null, []]') == \
        [[1, None], None, []]
    floats = parquet_decoder('list<list<float64>>', 'f')(b'[[NaN, Infinity, -0.0, 0.1]]')[0]
    assert [repr(x) for x in floats] == ['nan', 'inf', '-0.0', '0.1']
    assert parquet_decoder('list<date32>', 'x')(None) is None


def test_scalar_encodings_without_fixtures():
    assert parquet_decoder('time32[ms]', 't')((3723004).to_bytes(4, 'little')) == \
        datetime.time(1, 2, 3, 4000)
    assert parquet_decoder('time64[us]', 't')((3723000005).to_bytes(8, 'little')) == \
        datetime.time(1, 2, 3, 5)
    assert parquet_decoder('time64[ns]', 't')((3723000005999).to_bytes(8, 'little')) == \
        datetime.time(1, 2, 3, 5)
    days = np.array([0, -1, 19000], '<i4').tobytes()
    got = parquet_decoder('list<date32>', 'd')(days)
    assert got.dtype == np.dtype('datetime64[D]')
    assert got.tolist() == [datetime.date(1970, 1, 1), datetime.date(1969, 12, 31),
                            datetime.date(2022, 1, 8)]
    ms = np.array([1500], '<i8').tobytes()
    assert parquet_decoder('list<timestamp[ms,UTC]>', 't')(ms).dtype == np.dtype('datetime64[ms]')
    assert parquet_decoder('list<bool>', 'b')(b'\x01\x00').tolist() == [True, False]
    assert parquet_decoder('list<float16>', 'h')(np.array([1.5], '<f2').tobytes()).dtype == \
        np.float16
    assert parquet_decoder('timestamp[us]', 't')((-1).to_bytes(8, 'little', signed=True)) == \
        datetime.datetime(1969, 12, 31, 23, 59, 59, 999999)


def test_unknown_encoding_names_the_column():
    with pytest.raises(NotImplementedError) as info:
        parquet_decoder('struct<a:int32>', 'meta')
    assert str(info.value) == "column 'meta': unknown Parquet field encoding 'struct<a:int32>'"
    with pytest.raises(NotImplementedError) as info:
        parquet_decoder('list<list<interval>>', 'spans')
    assert str(info.value) == \
        "column 'spans': unknown Parquet field encoding 'list<list<interval>>'"


def test_a_packed_list_with_a_null_element_is_a_masked_array():
    ds = LocalDataset(str(DATA / 'pa26_lists_v1.parquet'))
    ids = ds[0]['int_list']  # [None, ...] in pyarrow's reading
    want = json.loads((DATA / 'pa26_lists_v1.expected.json').read_text())['columns'][1]['values'][0]
    assert type(ids) is np.ma.MaskedArray and ids.dtype == np.int32
    assert want[0] is None and ids.tolist() == want  # .tolist(): None where null, as datasets
    assert ids.mask.tolist() == [x is None for x in want]


def test_a_batchs_strings_and_packed_lists_decode_at_once_as_one_by_one():
    # sluice.sample_batch decodes a column of many rows with the decoder's
    # `batch` (one decode or copy for the whole column): the values are the
    # one-by-one decoder's, ASCII or not, and each array is its own
    # writable slice.
    for texts in (['alpha', '', 'beta gamma'], ['añb', 'ü', '', 'plain']):
        fields = [t.encode() for t in texts]
        offsets = np.cumsum([0] + [len(f) for f in fields]).tolist()
        dec = parquet_decoder('str', 'text')
        assert dec.batch(b''.join(fields), offsets) == [dec(f) for f in fields] == texts
    lists = [[1, 2, 3], [], [-7], [2**31 - 1, -2**31]]
    fields = [np.array(v, '<i4').tobytes() for v in lists]
    offsets = np.cumsum([0] + [len(f) for f in fields]).tolist()
    dec = parquet_decoder('list<int32>', 'input_ids')
    got = dec.batch(b''.join(fields), offsets)
    assert [a.tolist() for a in got] == [dec(f).tolist() for f in fields] == lists
    assert all(a.dtype == np.int32 for a in got)
    got[0][0] = 9
    assert got[0].tolist() == [9, 2, 3] and got[1].tolist() == [] and got[2].tolist() == [-7]
    with pytest.raises(ValueError, match='not a whole number of elements'):
        dec.batch(b'\0' * 8, [0, 2, 8])
