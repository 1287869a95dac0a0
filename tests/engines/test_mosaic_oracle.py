"""mosaicml-streaming from the registry (oracle.txt) as the oracle of the
sample order and of MDS both ways. The recorded vectors in
tests/data/mosaic/order, which the package's tests and the engine's C++
tests compare against, came from Mosaic's git source (its README: 89e7bb90,
0.14.0.dev0, with a transformers stub); here the registry's release
recomputes them, and both libraries stream datasets each other wrote."""
import json
import os
import sys

import numpy as np
import pytest

import sluice

import streaming
from streaming.base.partition import get_partitions
from streaming.base.sampling import get_sampling
from streaming.base.shuffle import get_shuffle

UNITS = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'data', 'mosaic', 'order',
                     'units')


def cases(name):
    with open(os.path.join(UNITS, name)) as f:
        return json.load(f)['cases']


def test_the_oracle_is_the_registrys_release():
    assert streaming.__version__ == '0.13.0'
    assert os.path.realpath(streaming.__file__).startswith(os.path.realpath(sys.prefix) + os.sep)


def test_recorded_shuffles_are_the_registry_mosaics():
    checked = 0
    for case in cases('shuffles.json'):
        a = case['args']
        got = get_shuffle(a['algo'], np.array(a['shard_sizes'], np.int64), a['num_canonical_nodes'],
                          a['seed'], a['epoch'], a['block_size'])
        assert got.tolist() == case['result'], a
        checked += 1
    assert checked > 200


def test_recorded_partitions_are_the_registry_mosaics():
    checked = 0
    for case in cases('partitions.json'):
        a = case['args']
        if 'error' in case:
            with pytest.raises(Exception) as raised:
                get_partitions(**a)
            # The recording kept a message's first 200 characters.
            assert type(raised.value).__name__ == case['error']['type'], a
            assert str(raised.value)[:200] == case['error']['message'], a
            continue
        got = get_partitions(**a)
        assert list(got.shape) == case['shape'] and got.tolist() == case['result'], a
        checked += 1
    assert checked > 150


def test_recorded_samplings_are_the_registry_mosaics():
    checked = 0
    for case in cases('sampling.json'):
        a = case['args']
        got = get_sampling(np.array(a['samples_per_shard'], np.int64), a['choose'],
                           a['granularity'], a['seed'], a['epoch'], a['use_epoch'])
        assert got.tolist() == case['result'], a
        checked += 1
    assert checked > 50


COLUMNS = {'id': 'int', 'text': 'str', 'blob': 'bytes', 'vec': 'ndarray:float32:3'}


def sample(i):
    return {'id': i, 'text': f'sample {i} ' + 'x' * (i % 37), 'blob': bytes([i % 251]) * (i % 90),
            'vec': np.array([i, i / 2, -i], np.float32)}


def write(writer_class, out):
    with writer_class(out=out, columns=COLUMNS, compression='zstd', hashes=['sha1', 'xxh64'],
                      size_limit=1 << 11) as writer:
        for i in range(300):
            writer.write(sample(i))


def files(folder):
    return {name: open(os.path.join(folder, name), 'rb').read() for name in sorted(os.listdir(folder))}


def test_mds_both_ways_is_byte_identical(tmp_path):
    write(streaming.MDSWriter, str(tmp_path / 'mosaic'))
    write(sluice.MDSWriter, str(tmp_path / 'sluice'))
    want, got = files(tmp_path / 'mosaic'), files(tmp_path / 'sluice')
    assert len(want) > 10 and list(got) == list(want)
    for name in want:
        assert got[name] == want[name], name


ORDERS = [
    dict(shuffle=False, batch_size=4),
    dict(shuffle=True, shuffle_algo='py1e', shuffle_seed=9, batch_size=4, shuffle_block_size=50),
    dict(shuffle=True, shuffle_algo='py1s', shuffle_seed=3, batch_size=8, num_canonical_nodes=3),
    dict(shuffle=True, shuffle_algo='py2s', shuffle_seed=5, batch_size=1, num_canonical_nodes=2),
    dict(shuffle=True, shuffle_algo='py1br', shuffle_seed=7, batch_size=4, shuffle_block_size=64),
    dict(shuffle=True, shuffle_algo='py1e', shuffle_seed=11, batch_size=2, shuffle_block_size=40,
         num_canonical_nodes=1),
    dict(shuffle=True, shuffle_algo='naive', shuffle_seed=13, batch_size=4, num_canonical_nodes=4),
    dict(shuffle=True, shuffle_algo='py1e', shuffle_seed=17, batch_size=4, partition_algo='relaxed',
         num_canonical_nodes=5),
    dict(shuffle=True, shuffle_seed=19, batch_size=4, epoch_size=500, sampling_method='fixed'),
    dict(shuffle=True, shuffle_seed=23, batch_size=4, epoch_size=170, sampling_method='balanced'),
]


@pytest.fixture(scope='module')
def datasets(tmp_path_factory):
    root = tmp_path_factory.mktemp('oracle')
    write(streaming.MDSWriter, str(root / 'mosaic'))
    write(sluice.MDSWriter, str(root / 'sluice'))
    return root


@pytest.mark.parametrize('args', ORDERS, ids=[f'config{i}' for i in range(len(ORDERS))])
def test_order_is_the_registry_mosaics_over_either_writers_dataset(datasets, args):
    """Each library streams the other's dataset (the same bytes) in Mosaic's
    order, sample for sample: one process, one worker."""
    try:
        want = [int(s['id']) for s in streaming.StreamingDataset(local=str(datasets / 'sluice'),
                                                                  **args)]
    finally:
        streaming.base.util.clean_stale_shared_memory()
    got = list(sluice.StreamingDataset(local=str(datasets / 'mosaic'), **args))
    assert [int(s['id']) for s in got] == want
    for s in got[:50]:
        w = sample(int(s['id']))
        assert (s['text'], s['blob']) == (w['text'], w['blob'])
        assert s['vec'].tolist() == w['vec'].tolist()
