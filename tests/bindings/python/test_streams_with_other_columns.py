"""Streams whose columns differ, as mosaicml-streaming reads them: each
sample is a dict of its own stream's columns, in its shards' order, decoded
by its own stream's encodings and format (Mosaic refuses none of this)."""
import itertools

import numpy as np
import pytest
from torch.utils.data import DataLoader

import sluice


def write_mds(path, columns, samples):
    with sluice.MDSWriter(out=str(path), columns=columns, size_limit=200) as w:
        for s in samples:
            w.write(s)


# Stream A: id (int) and text; stream B: id as str (the same name with
# another encoding), label, img. MDS stores columns sorted by name, so A's
# samples are {id, text} and B's {id, img, label}.
A = [{'id': i, 'text': f'a{i}' * (i % 4)} for i in range(23)]
B = [{'id': f'b{i}', 'img': bytes([i]) * (i % 7), 'label': np.int32(-i)} for i in range(17)]


def typed(samples):
    """Key order, types and values: what a sample dict must match exactly."""
    return [[(k, type(v).__name__, repr(v)) for k, v in s.items()] for s in samples]


def sorted_keys(s):
    return dict(sorted(s.items()))


@pytest.fixture
def folders(tmp_path):
    write_mds(tmp_path / 'a', {'text': 'str', 'id': 'int'}, A)
    write_mds(tmp_path / 'b', {'label': 'int32', 'img': 'bytes', 'id': 'str'}, B)
    return tmp_path


def streams(folders, where):
    if where == 'local':
        return [sluice.Stream(local=str(folders / n)) for n in 'ab']
    return [sluice.Stream(remote=str(folders / n), local=str(folders / f'cache_{n}')) for n in 'ab']


WANT = [sorted_keys(s) for s in A + B]


@pytest.mark.parametrize('where', ['local', 'remote'])
def test_iteration_and_random_access_give_each_streams_own_columns(folders, where):
    ds = sluice.StreamingDataset(streams=streams(folders, where), batch_size=4)
    assert ds.num_samples == 40
    assert typed(ds) == typed(WANT)
    assert typed([ds[0], ds[22], ds[23], ds[39], ds[-1]]) == \
        typed([WANT[0], WANT[22], WANT[23], WANT[39], WANT[39]])
    assert typed(ds[21:25]) == typed(WANT[21:25])
    assert list(ds[23]) == ['id', 'img', 'label']
    assert ds[23]['id'] == 'b0' and ds[0]['id'] == 0


def test_a_stream_keeps_its_own_column_order(tmp_path):
    # Writers store columns sorted by name: stream x's are (id, name), stream
    # y's (a, id, name), so the dataset's are (id, name, a) and y's samples
    # come in y's own order, as Mosaic's reader gives them (JSONL's too).
    for name, columns in (('x', {'name': 'str', 'id': 'int'}),
                          ('y', {'id': 'int', 'name': 'str', 'a': 'int'})):
        with sluice.JSONWriter(out=str(tmp_path / name), columns=columns) as w:
            for i in range(3):
                w.write({'id': i, 'name': f'{name}{i}', 'a': -i})
    ds = sluice.StreamingDataset(streams=[sluice.Stream(local=str(tmp_path / n)) for n in 'xy'],
                                 batch_size=2)
    assert ds._engine.column_names == ['id', 'name', 'a']
    assert typed(ds) == typed([{'id': i, 'name': f'x{i}'} for i in range(3)] +
                              [{'a': -i, 'id': i, 'name': f'y{i}'} for i in range(3)])
    assert list(ds[4]) == ['a', 'id', 'name']


def test_shuffled_order_is_the_plans(folders):
    ds = sluice.StreamingDataset(streams=streams(folders, 'local'), batch_size=4, shuffle=True,
                                 shuffle_seed=7, num_canonical_nodes=2)
    ids = ds.plan().worker_ids(0, 0, 0).tolist()
    assert sorted(ids) == list(range(40)) and ids != list(range(40))
    assert typed(ds) == typed([WANT[i] for i in ids])


def test_dataloader_workers_yield_each_streams_own_columns(folders):
    ds = sluice.StreamingDataset(streams=streams(folders, 'remote'), batch_size=4, shuffle=True,
                                 shuffle_seed=3)
    per_worker = [ds.plan(workers=2).worker_ids(0, 0, w).tolist() for w in range(2)]
    # batch_size=None: one sample per item, the workers' items taken in turn.
    loader = DataLoader(ds, batch_size=None, num_workers=2)
    got = [{k: v.item() if hasattr(v, 'item') else v for k, v in s.items()} for s in loader]
    order = [i for pair in itertools.zip_longest(*per_worker) for i in pair if i is not None]
    want = [{k: int(v) if isinstance(v, np.integer) else v for k, v in WANT[i].items()}
            for i in order]
    assert got == want
    # Batches of samples with different keys: as Mosaic's, a collate_fn that
    # keeps the dicts works (torch's default one needs every sample's keys).
    ds = sluice.StreamingDataset(streams=streams(folders, 'local'), batch_size=4, shuffle=True,
                                 shuffle_seed=3)
    batches = list(DataLoader(ds, batch_size=4, num_workers=0, collate_fn=list))
    assert [len(b) for b in batches] == [4] * 10
    assert typed(sum(batches, [])) == typed([WANT[i] for i in ds.plan().worker_ids(0, 0, 0)])


def test_batch_mode_refuses_streams_with_other_columns(folders):
    ds = sluice.StreamingDataset(streams=streams(folders, 'local'), batch_size=4)
    with pytest.raises(ValueError, match=r"batch mode needs every stream to have the same "
                                         r"columns, and this dataset's differ \(stream 0: "
                                         r"\['id', 'text'\]; stream 1: \['id', 'img', 'label'\]\)"):
        next(ds.iter_batches())
    # Refused before the epoch counters move: the next iteration is epoch 0's.
    assert typed(ds) == typed(WANT)
