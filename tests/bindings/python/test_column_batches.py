"""Batch mode (sluice.column_batches): every column of every batch holds
exactly the values __iter__ yields, in __iter__'s order, one process and
DataLoader workers alike."""
import os

import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader

import sluice
from sluice.column_batches import ColumnBatches, VarColumn, to_torch
from sluice.mds_encodings import make_decoder
from conftest import DATA

pytestmark = pytest.mark.filterwarnings('ignore:This DataLoader will create')


def same(a, b):
    if hasattr(a, 'tobytes') and hasattr(b, 'tobytes'):  # arrays, PIL images
        return type(a) is type(b) and a.tobytes() == b.tobytes()
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and (a == b or repr(a) == repr(b))  # NaNs equal by repr


def all_encodings(tmp_path, **kw):
    return sluice.StreamingDataset(remote=os.path.join(DATA, 'compressed_zstd_hashed'),
                                   local=str(tmp_path), allow_unsafe_types=True, batch_size=4,
                                   shuffle=True, shuffle_seed=5, **kw)


def test_every_encoding_batched_as_iter_yields_it(tmp_path):
    samples = list(all_encodings(tmp_path / 'a'))
    ds = all_encodings(tmp_path / 'b')
    batches = list(ds.iter_batches(5))
    assert [len(b['a_int']) for b in batches] == [5] * 6 + [2]
    encodings = dict(zip(ds._engine.column_names, ds._engine.column_encodings))
    fixed = {'a_int': np.int64, 'b_int8': np.int8, 'b_uint64': np.uint64,
             'c_float16': np.float16, 'c_float64': np.float64, 'h_nd_f32_2x3': np.float32,
             'h_nd_u64_1x2x2': np.uint64, 'h_nd_u8_5': np.uint8}
    for name, encoding in encodings.items():
        column = [b[name] for b in batches]
        if name in fixed or encoding.startswith(('int', 'uint', 'float')):
            # One array per batch; its rows are the decoded values.
            assert all(isinstance(c, np.ndarray) for c in column), name
            values = np.concatenate(column)
            if name in fixed:
                assert values.dtype == fixed[name], name
            for s, v in zip(samples, values):
                want = np.asarray(s[name])  # exact bytes (NaNs included)
                assert want.dtype == v.dtype and want.tobytes() == v.tobytes(), (name, want, v)
            assert len(values) == len(samples)
        else:
            assert all(isinstance(c, VarColumn) for c in column), name
            assert all(c.offsets.dtype == np.int64 and c.offsets[0] == 0 and
                       c.offsets[-1] == len(c.data) for c in column), name
            decode = make_decoder(encoding, name)
            fields = [f for c in column for f in c.to_list()]
            assert len(fields) == len(samples)
            for s, f in zip(samples, fields):
                assert same(decode(f), s[name]), name
    # Int columns decode to Python ints one by one, to int64 rows here.
    assert [int(v) for b in batches for v in b['a_int']] == [s['a_int'] for s in samples]


def write_ids(folder, sizes):
    with sluice.MDSWriter(out=folder, columns={'id': 'int', 'data': 'bytes', 'name': 'str'},
                          size_limit=1 << 12) as w:
        for i, size in enumerate(sizes):
            w.write({'id': i, 'data': bytes([i % 251]) * size, 'name': f'n{i}'})
    return folder


def test_dataloader_workers_yield_the_per_sample_loaders_batches(tmp_path):
    sizes = [(i * 37) % 300 for i in range(200)]  # empty fields too, several shards
    folder = write_ids(str(tmp_path / 'ds'), sizes)
    def dataset():  # one each: an iteration moves its dataset's epoch on
        return sluice.StreamingDataset(local=folder, batch_size=8, shuffle=True, shuffle_seed=1)
    per_sample = [(b['id'].tolist(), list(b['data']), list(b['name']))
                  for b in DataLoader(dataset(), batch_size=8, num_workers=2)]
    batched = []
    ds = dataset()
    for b in DataLoader(ColumnBatches(ds, 8), batch_size=None, num_workers=2):
        assert isinstance(b['id'], torch.Tensor) and b['id'].dtype == torch.int64
        data, offsets = b['data']
        assert isinstance(data, torch.Tensor) and data.dtype == torch.uint8
        fields = VarColumn(data.numpy(), offsets.numpy()).to_list()
        names = [x.decode() for x in VarColumn(*(t.numpy() for t in b['name'])).to_list()]
        batched.append((b['id'].tolist(), fields, names))
    assert batched == per_sample
    assert sorted(i for ids, _, _ in batched for i in ids) == list(range(200))
    assert len(ColumnBatches(ds, 8)) == 25


def test_batches_grow_past_a_first_guess_and_to_torch_shares_memory(tmp_path):
    sizes = [10] * 40 + [5000] * 10  # the second batch's fields outgrow the first's guess
    folder = write_ids(str(tmp_path / 'ds'), sizes)
    ds = sluice.StreamingDataset(local=folder, batch_size=25)
    batches = list(ds.iter_batches())
    assert [b['id'].tolist() for b in batches] == [list(range(25)), list(range(25, 50))]
    got = [f for b in batches for f in b['data'].to_list()]
    assert got == [bytes([i % 251]) * n for i, n in enumerate(sizes)]
    t = to_torch(batches[1])
    assert t['id'].data_ptr() == batches[1]['id'].ctypes.data
    assert t['data'].data.data_ptr() == batches[1]['data'].data.ctypes.data
    # The next epoch: iter_batches moves the epoch on as __iter__ does.
    assert ds.next_epoch == 1
    with pytest.raises(ValueError, match='batch_size must be a positive int'):
        next(ds.iter_batches(0))


def test_a_batch_that_grows_with_bytes_in_it_keeps_them(tmp_path):
    # Shards of 4 KiB and a predownload window of 4 samples: a batch is
    # filled by several engine calls, and its large samples come after
    # small ones, so its buffer grows with fields in it.
    sizes = [10] * 30 + [3000] * 30
    folder = write_ids(str(tmp_path / 'ds'), sizes)
    ds = sluice.StreamingDataset(local=folder, batch_size=20, predownload=4)
    batches = list(ds.iter_batches())
    assert [b['id'].tolist() for b in batches] == [list(range(k, k + 20)) for k in (0, 20, 40)]
    assert [f for b in batches for f in b['data'].to_list()] == \
        [bytes([i % 251]) * n for i, n in enumerate(sizes)]
    assert [b['name'].to_list() for b in batches] == \
        [[f'n{i}'.encode() for i in range(k, k + 20)] for k in (0, 20, 40)]


def test_one_large_first_sample_does_not_claim_a_batch_of_large_ones(tmp_path, monkeypatch):
    # The batch is filled 4 samples at a time (predownload=4): from the
    # first call (a 100 KB sample and three small ones) the column guesses
    # 25 MB for the batch of 1,000; the cap (here 8x what it has seen)
    # holds it to about 800 KB.
    monkeypatch.setattr(sluice.column_batches, '_GUESS_CAP', 0)
    sizes = [100_000] + [10] * 999
    folder = write_ids(str(tmp_path / 'ds'), sizes)
    ds = sluice.StreamingDataset(local=folder, batch_size=1000, predownload=4)
    (batch,) = list(ds.iter_batches())
    assert batch['data'].to_list() == [bytes([i % 251]) * n for i, n in enumerate(sizes)]
    assert batch['data'].data.base.size <= 8 * (100_000 + 30)


def test_column_batches_widen_what_torch_lacks_and_refuse_uint64(tmp_path):
    def write(folder, columns, rows):
        with sluice.MDSWriter(out=folder, columns=columns) as w:
            for row in rows:
                w.write(row)
        return sluice.StreamingDataset(local=folder, batch_size=6)
    a = [65535 - i for i in range(6)]
    b = [4294967295 - i for i in range(6)]
    ds = write(str(tmp_path / 'ab'), {'a': 'uint16', 'b': 'uint32'},
               [{'a': np.uint16(x), 'b': np.uint32(y)} for x, y in zip(a, b)])
    (batch,) = list(DataLoader(ColumnBatches(ds), batch_size=None))
    assert batch['a'].dtype == torch.int32 and batch['a'].tolist() == a
    assert batch['b'].dtype == torch.int64 and batch['b'].tolist() == b
    ds = write(str(tmp_path / 'c'), {'c': 'uint64'}, [{'c': np.uint64(i)} for i in range(6)])
    with pytest.raises(TypeError, match="column 'c' is uint64"):
        list(DataLoader(ColumnBatches(ds), batch_size=None))


def test_a_streaming_dataloader_resumes_column_batches_exactly(tmp_path):
    sizes = [(i * 37) % 300 for i in range(200)]
    folder = write_ids(str(tmp_path / 'ds'), sizes)

    def loader():
        ds = sluice.StreamingDataset(local=folder, batch_size=8, shuffle=True, shuffle_seed=1)
        return sluice.StreamingDataLoader(ColumnBatches(ds), batch_size=None, num_workers=2)
    full = [b['id'].tolist() for b in loader()]
    assert sorted(i for ids in full for i in ids) == list(range(200))
    for k in (1, 4, 7):
        first = loader()
        it = iter(first)
        head = [next(it)['id'].tolist() for _ in range(k)]
        state = first.state_dict()
        del it
        # Counted per batch from its columns (the VarColumns' offsets too).
        assert state['sample_in_epoch'] == 8 * k
        resumed = loader()
        resumed.load_state_dict(state)
        assert head + [b['id'].tolist() for b in resumed] == full, k


def test_engine_batches_stop_at_their_limit(tmp_path):
    """limit: the order's next `limit` samples from sample_in_epoch, in
    batches never asked past them (sluice.ray's read tasks)."""
    from sluice.column_batches import engine_batches
    def dataset(local):
        return sluice.StreamingDataset(
            remote=os.path.join(DATA, 'compressed_zstd_hashed'), local=str(local),
            allow_unsafe_types=True, num_canonical_nodes=1, world=(0, 1), batch_size=4)
    ds = dataset(tmp_path / 'a')
    order = [int(s['a_int']) for s in dataset(tmp_path / 'b')]
    assert len(order) == 32
    batches = list(engine_batches(ds._engine, 0, 9, 0, 1, 10, with_ids=True, limit=13))
    assert [len(b['sample_id']) for b in batches] == [10, 3]
    assert np.concatenate([b['sample_id'] for b in batches]).tolist() == list(range(9, 22))
    assert np.concatenate([b['a_int'] for b in batches]).tolist() == order[9:22]
    assert list(engine_batches(ds._engine, 0, 9, 0, 1, 10, limit=0)) == []
    tail = list(engine_batches(ds._engine, 0, 25, 0, 1, 10, with_ids=True, limit=100))
    assert np.concatenate([b['sample_id'] for b in tail]).tolist() == list(range(25, 32))
