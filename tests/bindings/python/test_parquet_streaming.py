"""Parquet through StreamingDataset, the engine's sluice_stream_* path: the
rows random access (ds[i]), iteration (the batched decoder) and batch mode
(iter_batches) give are the rows LocalDataset reads from the same files,
nulls included. Skipped, saying why, while this library's engine does not
stream a folder of Parquet files (it looks for an index.json there); until
then the last three tests hand the package's engine-side decoders the views
such an engine gives (NULL data for a null), through stand-ins for the
stream calls."""
import pathlib
import shutil

import numpy as np
import pytest

from sluice import LocalDataset, StreamingDataset
from sluice.column_batches import parquet_batch_column

DATA = pathlib.Path(__file__).resolve().parents[2] / 'data' / 'parquet'
# Fixtures whose packed lists hold no null element (every row readable).
FILES = ['pa26_types_v1_snappy', 'pa26_nulls_v1', 'hf_text', 'hf_image', 'pa26_codec_snappy',
         'pa26_many_row_groups']


def streamed(folder, cache=None, **kwargs):
    """The folder read in place, or with `cache` copied into it (a local
    remote, as a Databricks volume under /Volumes is)."""
    where = {'local': str(folder)} if cache is None else {'remote': str(folder),
                                                          'local': str(cache)}
    return StreamingDataset(batch_size=kwargs.pop('batch_size', 8), **where, **kwargs)


@pytest.fixture(params=FILES)
def folder(request, tmp_path):
    root = tmp_path / request.param
    root.mkdir()
    shutil.copy(DATA / f'{request.param}.parquet', root / 'part-0.parquet')
    return root


def plain(row):
    return {k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in row.items()}


def shown(row):
    """A row as text, so that rows compare whole (a NaN equals no NaN)."""
    return repr(plain(row))


def test_random_access_and_iteration_give_the_local_rows(folder):
    local = LocalDataset(str(folder))
    want = [shown(local[i]) for i in range(len(local))]
    ds = streamed(folder)
    assert ds._engine.format == 'parquet'
    assert [shown(ds[i]) for i in range(len(ds))] == want
    assert [shown(s) for s in ds] == want  # batches of 64: the column-by-column decoder


def test_columns_read_only_those_through_the_cache(folder, tmp_path):
    """columns=[...]: each row's chosen fields (the whole rows' values), in
    the order asked, the same order of samples as without; a column the
    files lack is named."""
    local = LocalDataset(str(folder))
    names = list(local[0])
    chosen = names[::-1][:2]
    ds = streamed(folder, cache=tmp_path / 'cache', shuffle=True, shuffle_seed=5, columns=chosen)
    every = streamed(folder, cache=tmp_path / 'every', shuffle=True, shuffle_seed=5)
    assert list(ds[0]) == chosen
    want = [shown({c: row[c] for c in chosen}) for row in every]
    assert [shown(s) for s in ds] == want
    assert shown(ds[len(ds) - 1]) == shown({c: local[len(local) - 1][c] for c in chosen})
    in_place = streamed(folder, columns=chosen)
    assert shown(in_place[0]) == shown({c: local[0][c] for c in chosen})
    with pytest.raises(FileNotFoundError, match='no column "nope"'):
        streamed(folder, cache=tmp_path / 'bad', columns=['nope'])
    with pytest.raises(TypeError, match='list of column names'):
        streamed(folder, columns='label')


def _length(column):
    """Samples in a batch's column."""
    return len(column.offsets) - 1 if hasattr(column, 'offsets') else len(column.values)


def _local_column(local, c, ids):
    """Column c of samples `ids` as batch mode builds it, from LocalDataset's
    fields."""
    fields = [local.raw_fields(i)[c] for i in ids]
    sizes = [0 if f is None else len(f) for f in fields]
    data = np.frombuffer(b''.join(f for f in fields if f), np.uint8).copy()
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    return parquet_batch_column(local.column_names[c], local.column_encodings[c], data, offsets,
                                np.array([f is None for f in fields], bool))


def test_a_local_remote_is_read_through_the_cache(folder, tmp_path):
    local = LocalDataset(str(folder))
    ds = streamed(folder, cache=tmp_path / 'cache', shuffle=True, shuffle_seed=5)
    assert sorted(shown(s) for s in ds) == sorted(shown(local[i]) for i in range(len(local)))
    assert shown(ds[len(ds) - 1]) == shown(local[len(local) - 1])


def test_batch_mode_gives_the_local_fields(folder):
    local = LocalDataset(str(folder))
    ds = streamed(folder, batch_size=16)
    start = 0
    for batch in ds.iter_batches():
        ids = range(start, start + _length(batch[local.column_names[0]]))
        for c, name in enumerate(local.column_names):
            want, got = _local_column(local, c, ids), batch[name]
            assert type(got) is type(want), name
            for g, w in zip(got, want):
                assert (g is None) == (w is None), name
                if g is not None:
                    assert g.dtype == w.dtype and g.tobytes() == w.tobytes(), name
        start = ids.stop
    assert start == len(local)


def test_iteration_and_batch_mode_copy_large_values_from_their_pieces(tmp_path, monkeypatch):
    """hf_image's JPEGs straddle snappy literals: the engine hands them to
    iteration and batch mode as their pieces (sluice_stream_read_pieces),
    copied once into the bytes or the column; every row is its exact bytes
    (pyarrow's, in the fixture's expected.json), in order and shuffled."""
    import json
    from sluice.engine import Engine
    e = json.loads((DATA / 'hf_image.expected.json').read_text())
    images = [bytes.fromhex(v['hex']) for v in e['columns'][0]['values']]
    labels = e['columns'][1]['values']
    root = tmp_path / 'hf_image'
    root.mkdir()
    shutil.copy(DATA / 'hf_image.parquet', root / 'part-0.parquet')
    copied = []
    pieced_values = Engine._pieced_values

    def counted(self):
        out = pieced_values(self)
        copied.append(len(out or ()))
        return out
    monkeypatch.setattr(Engine, '_pieced_values', counted)
    import sluice.engine
    for shuffle, field_by_field in ((False, False), (True, False), (False, True), (True, True)):
        # Field by field (_decode_each) or, for batches of many small rows,
        # column by column (SampleBatch: sluice_stream_batch_column): which
        # one a batch takes depends on how many rows are ready; forced here.
        monkeypatch.setattr(sluice.engine, '_PACKED_FROM', 10**9 if field_by_field else 1)
        ds = streamed(root, shuffle=shuffle, shuffle_seed=3)
        got = [(s['image'], s['label']) for s in ds]
        assert sorted(got) == sorted(zip(images, labels))
        if not shuffle:
            assert got == list(zip(images, labels))
        assert all(type(image) is bytes for image, _ in got)
        batched = []
        for batch in streamed(root, shuffle=shuffle, shuffle_seed=3).iter_batches(with_ids=True):
            for i, image in zip(batch['sample_id'].tolist(), batch['image'].to_list()):
                assert image == images[i], i
                batched.append(i)
        assert sorted(batched) == list(range(len(images)))
    assert sum(copied) > 0  # field by field, iteration took values from their pieces


def _views(*fields):
    """A sluice_bytes array: each field bytes (a view of a buffer kept
    alive on the array) or None (a NULL view)."""
    import ctypes
    from sluice import _lib
    array = (_lib.Bytes * len(fields))()
    array.buffers = []
    for k, f in enumerate(fields):
        if f is not None:
            buf = ctypes.create_string_buffer(f, max(len(f), 1))
            array.buffers.append(buf)
            array[k] = _lib.Bytes(ctypes.cast(buf, ctypes.POINTER(ctypes.c_uint8)), len(f))
    return array


def test_the_engines_decoder_takes_null_views_for_none():
    """Engine._decode, which ds[i] and the per-field iteration use, for one
    Parquet format and for a Parquet stream among others (white box: no
    engine streams Parquet here to hand it such views)."""
    from sluice.engine import Engine
    from sluice.formats import field_decoder
    items = [(0, 'text', field_decoder('parquet', 'str', 'text')),
             (1, 'ids', field_decoder('parquet', 'list<int32>', 'ids'))]
    fields = _views(b'hi', None, b'', np.array([7, -1], '<i4').tobytes())
    engine = Engine.__new__(Engine)
    engine._items, engine._nulls, engine._stream_items = items, True, None
    assert plain(engine._decode(fields, 0, None)) == {'text': 'hi', 'ids': None}
    assert plain(engine._decode(fields, 2, None)) == {'text': '', 'ids': [7, -1]}
    # Per stream: the Parquet stream's NULL views are None, the MDS one's b''.
    mds = [(0, 'text', field_decoder('mds', 'str', 'text')),
           (1, 'ids', field_decoder('mds', 'bytes', 'ids'))]
    engine._stream_items = [(items, True), (mds, False)]
    engine._stream_ends = [10, 20]
    assert engine.mixes_in_null_fields()
    assert plain(engine._decode(fields, 0, 3)) == {'text': 'hi', 'ids': None}
    assert plain(engine._decode(fields, 0, 13)) == {'text': 'hi', 'ids': b''}


def test_the_batched_decoder_takes_null_views_for_none(monkeypatch):
    """SampleBatch (iteration's column-by-column decoder): a column crosses
    packed (sluice_stream_batch_column, which cannot tell null from empty),
    and the NULL views of the batch say which fields are null. The C call
    is stood in for by one that packs the same views (white box, as above)."""
    import ctypes
    from sluice import sample_batch
    from sluice.formats import field_decoder
    rows = [(b'a', np.array([1], '<i4').tobytes()), (None, None), (b'', b''),
            (b'd', np.array([2, 3], '<i4').tobytes())]
    fields = _views(*(f for row in rows for f in row))

    class PackingLibrary:
        def sluice_stream_batch_column(self, ptr, c, item_size, out, capacity, offsets, needed):
            column = [row[c] or b'' for row in rows]
            data = b''.join(column)
            needed._obj.value = len(data)
            ctypes.memmove(out, data, len(data))
            ends = np.concatenate([[0], np.cumsum([len(f) for f in column])]).astype(np.uint64)
            ctypes.memmove(offsets, ends.tobytes(), ends.nbytes)
            return 0

    monkeypatch.setattr(sample_batch, '_lib_', PackingLibrary())
    items = [(0, 'text', field_decoder('parquet', 'str', 'text')),
             (1, 'ids', field_decoder('parquet', 'list<int32>', 'ids'))]
    batch = sample_batch.SampleBatch(None, items, set(), fields)
    assert [plain(s) for s in batch.samples(len(rows))] == [
        {'text': 'a', 'ids': [1]}, {'text': None, 'ids': None}, {'text': '', 'ids': []},
        {'text': 'd', 'ids': [2, 3]}]


def test_batch_mode_takes_nulls_from_the_null_views(monkeypatch):
    """engine_batches over a Parquet engine: each column's nulls are the
    batch's NULL views (sample k's column c at k * columns + c). The engine
    is stood in for by one that hands out fixed rows in two next_batch
    calls and packs their columns (white box, as above)."""
    import ctypes
    from sluice import _lib, column_batches
    rows = [(np.array([5], '<i8').tobytes(), b'x', np.array([1, 2], '<i4').tobytes()),
            (None, None, None),
            (np.array([-3], '<i8').tobytes(), b'', b'')]
    keep = []

    class FakeEngine:
        _ptr, _n, format = None, 3, 'parquet'
        column_names = ['n', 's', 'ids']
        column_encodings = ['int64', 'str', 'list<int32>']

        def mixes_in_null_fields(self):
            return False

        def begin_iteration(self, *args):
            self.calls = 0

        def masked_fields(self):
            return ()

    engine = FakeEngine()

    class FakeLibrary:
        def sluice_stream_next_batch(self, ptr, max_samples, ids, fields, count):
            part = [rows[:2], rows[2:], []][engine.calls]
            engine.calls += 1
            self.part = part
            for k, row in enumerate(part):
                for c, f in enumerate(row):
                    view = _lib.Bytes()
                    if f is not None:
                        buf = ctypes.create_string_buffer(f, max(len(f), 1))
                        keep.append(buf)
                        view = _lib.Bytes(ctypes.cast(buf, ctypes.POINTER(ctypes.c_uint8)), len(f))
                    fields[k * 3 + c] = view
            count._obj.value = len(part)
            return 0

        def sluice_stream_batch_column(self, ptr, c, item_size, out, capacity, offsets, needed):
            column = [row[c] or b'' for row in self.part]
            data = b''.join(column)
            needed._obj.value = len(data)
            if capacity < len(data):
                return _lib.ERANGE
            ctypes.memmove(out, data, len(data))
            ends = np.concatenate([[0], np.cumsum([len(f) for f in column])]).astype(np.int64)
            ctypes.memmove(offsets, ends.tobytes(), ends.nbytes)
            return 0

        def sluice_stream_release(self, ptr):
            pass

    monkeypatch.setattr(column_batches, '_lib_', FakeLibrary())
    [batch] = list(column_batches.engine_batches(engine, 0, 0, 0, 1, 8))
    assert batch['n'].values.tolist() == [5, 0, -3]
    assert batch['n'].nulls.tolist() == [False, True, False]
    assert batch['s'].to_list() == [b'x', None, b'']
    assert [None if r is None else r.tolist() for r in batch['ids'].to_list()] == [[1, 2], None, []]
