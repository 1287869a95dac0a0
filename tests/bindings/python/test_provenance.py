"""Where samples came from: iter_batches(with_ids=True) hands each batch's
global sample ids (the ids __iter__ walks, in its order), sample_origins and
Mosaic's spanner turn an id into its stream, shard, shard file and index in
the shard, checked against the index.json files the writer made."""
import json
import os

import numpy as np
import pytest

import sluice


def write(folder, first, count, size_limit):
    with sluice.MDSWriter(out=folder, columns={'id': 'int', 'data': 'bytes'},
                          size_limit=size_limit) as w:
        for i in range(first, first + count):
            w.write({'id': i, 'data': bytes([i % 251]) * (10 + i % 7)})


def expected_origins(folders):
    """sample id -> (stream, global shard, shard file, index in shard), from
    the index.json files alone."""
    out, shard = [], 0
    for stream, folder in enumerate(folders):
        with open(os.path.join(folder, 'index.json')) as f:
            for entry in json.load(f)['shards']:
                out += [(stream, shard, entry['raw_data']['basename'], k)
                        for k in range(entry['samples'])]
                shard += 1
    return out


@pytest.fixture
def two_streams(tmp_path):
    a, b = str(tmp_path / 'a'), str(tmp_path / 'b')
    write(a, 0, 150, 600)
    write(b, 150, 90, 400)
    return a, b


def test_batches_carry_their_ids_and_each_id_says_where_it_came_from(two_streams, tmp_path):
    a, b = two_streams
    def dataset():
        return sluice.StreamingDataset(streams=[sluice.Stream(local=a), sluice.Stream(local=b)],
                                       batch_size=16, shuffle=True, shuffle_seed=3)

    order = [s['id'] for s in dataset()]  # epoch 0, as the batches below
    ds = dataset()
    batches = list(ds.iter_batches(16, with_ids=True))
    ids = np.concatenate([batch['sample_id'] for batch in batches])
    assert ids.dtype == np.int64
    # The ids are the samples' global ids (each sample's 'id' column holds
    # its own), in __iter__'s order.
    assert ids.tolist() == order
    assert all((batch['sample_id'] == batch['id']).all() for batch in batches)

    want = expected_origins([a, b])
    origins = ds.sample_origins(ids)
    assert [(o['stream'], o['shard'], o['shard_file'], o['index_in_shard']) for o in origins] == \
        [want[i] for i in ids]
    assert [o['sample_id'] for o in origins] == ids.tolist()
    assert {o['stream'] for o in origins} == {0, 1}
    assert [ds.spanner[i] for i in range(len(want))] == [(w[1], w[3]) for w in want]


def test_out_of_range_ids_and_a_column_named_sample_id_are_refused(two_streams, tmp_path):
    a, _ = two_streams
    ds = sluice.StreamingDataset(local=a, batch_size=4)
    with pytest.raises(IndexError, match=r'^Invalid sample index `150`: 0 <= 150 < 150$'):
        ds.spanner[150]
    with pytest.raises(IndexError, match=r'^Invalid sample index `-1`: 0 <= -1 < 150$'):
        ds.sample_origins([0, -1])
    named = str(tmp_path / 'named')
    with sluice.MDSWriter(out=named, columns={'sample_id': 'int'}) as w:
        w.write({'sample_id': 7})
    clash = sluice.StreamingDataset(local=named, batch_size=1)
    with pytest.raises(ValueError, match="with_ids adds the key 'sample_id', which is already"):
        next(iter(clash.iter_batches(with_ids=True)))
    assert 'sample_id' in next(iter(clash.iter_batches()))  # the column itself, as always
