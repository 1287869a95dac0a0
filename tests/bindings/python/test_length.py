"""len(StreamingDataset) is Mosaic's ceil(epoch_size / ranks) over the
replicated world, for every configuration of Mosaic's order vectors with
its length recorded (weighted streams, epoch_size, replication and every
batching method included)."""
import json
import os

import numpy as np
import pytest

from test_streaming import ORDER, write_stream

import sluice


def configs():
    out = []
    for name in sorted(os.listdir(ORDER)):
        with open(os.path.join(ORDER, name)) as f:
            vector = json.load(f)
        if 'error' not in vector and 'length_per_rank' in vector.get('derived', {}):
            out.append(name[:-len('.json')])
    return out


@pytest.mark.parametrize('path', ['local', 'streamed'])
@pytest.mark.parametrize('name', configs())
def test_length_is_mosaics(name, path, tmp_path, monkeypatch):
    with open(os.path.join(ORDER, name + '.json')) as f:
        vector = json.load(f)
    cfg = vector['config']
    world = cfg['world']
    monkeypatch.setenv('RANK', '0')
    monkeypatch.setenv('WORLD_SIZE', str(world['num_nodes'] * world['ranks_per_node']))
    monkeypatch.setenv('LOCAL_WORLD_SIZE', str(world['ranks_per_node']))
    streams = []
    offset = 0
    for i, s in enumerate(cfg['streams']):
        folder = write_stream(str(tmp_path / f's{i}'), s['shard_sizes'], offset)
        offset += sum(s['shard_sizes'])
        where = ({'local': folder} if path == 'local' else
                 {'remote': folder, 'local': str(tmp_path / f'cache{i}')})
        streams.append(sluice.Stream(**where, proportion=s.get('proportion'),
                                     repeat=s.get('repeat'), choose=s.get('choose')))
    ds = sluice.StreamingDataset(
        streams=streams, epoch_size=cfg['epoch_size'], batch_size=cfg['batch_size'],
        shuffle=cfg['shuffle'], shuffle_algo=cfg['shuffle_algo'],
        shuffle_seed=cfg['shuffle_seed'], shuffle_block_size=cfg['shuffle_block_size'],
        num_canonical_nodes=cfg['num_canonical_nodes'], partition_algo=cfg['partition_algo'],
        batching_method=cfg['batching_method'], sampling_method=cfg['sampling_method'],
        sampling_granularity=cfg['sampling_granularity'], replication=cfg['replication'])
    assert len(ds) == vector['derived']['length_per_rank']


def test_replication_with_weighted_streams(tmp_path, monkeypatch):
    monkeypatch.setenv('RANK', '1')
    monkeypatch.setenv('WORLD_SIZE', '4')
    monkeypatch.setenv('LOCAL_WORLD_SIZE', '2')
    a = write_stream(str(tmp_path / 'a'), [40, 60], 0)
    b = write_stream(str(tmp_path / 'b'), [50], 100)
    ds = sluice.StreamingDataset(streams=[sluice.Stream(local=a, proportion=0.25),
                                          sluice.Stream(local=b, proportion=0.75)],
                                 epoch_size=101, batch_size=4, replication=2)
    assert len(ds) == 51  # ceil(101 / (4 ranks / 2))


@pytest.mark.parametrize('path', ['local', 'streamed'])
def test_shard_and_stream_attributes_are_mosaics(tmp_path, path):
    a = write_stream(str(tmp_path / 'a'), [4, 6, 5], 0)
    b = write_stream(str(tmp_path / 'b'), [7, 3], 15)

    def stream(folder, name):
        if path == 'local':
            return sluice.Stream(local=folder)
        return sluice.Stream(remote=folder, local=str(tmp_path / f'cache_{name}'))
    ds = sluice.StreamingDataset(streams=[stream(a, 'a'), stream(b, 'b')], batch_size=2)
    assert ds.num_streams == 2
    assert ds.num_shards == len(ds.shards) == 5
    assert ds.samples_per_shard.tolist() == [4, 6, 5, 7, 3]
    assert ds.stream_per_shard.tolist() == [0, 0, 0, 1, 1]
    assert ds.shards_per_stream.tolist() == [3, 2]
    assert ds.shard_offset_per_stream.tolist() == [0, 3]
    assert ds.samples_per_stream.tolist() == [15, 10]
    assert ds.sample_offset_per_stream.tolist() == [0, 15]


def test_each_shards_stream_comes_from_the_streams_shard_counts(tmp_path):
    # The engine's per-shard stream array is not kept: each shard's stream is
    # derived from each stream's shard count, here across three boundaries.
    a = write_stream(str(tmp_path / 'a'), [4, 6, 5], 0)
    m = write_stream(str(tmp_path / 'm'), [1], 15)
    b = write_stream(str(tmp_path / 'b'), [7, 3], 16)
    ds = sluice.StreamingDataset(streams=[sluice.Stream(local=f) for f in (a, m, b)],
                                 batch_size=2)
    assert ds.shards_per_stream.tolist() == [3, 1, 2]
    assert ds.shard_offset_per_stream.tolist() == [0, 3, 4]
    assert ds.samples_per_stream.tolist() == [15, 1, 10]
    assert ds.sample_offset_per_stream.tolist() == [0, 15, 16]
    assert ds.stream_per_shard.tolist() == [0, 0, 0, 1, 2, 2]
    assert ds.stream_per_shard.dtype == np.int64
    origins = ds.sample_origins([0, 14, 15, 16, 25])
    assert [(o['stream'], o['shard'], o['index_in_shard']) for o in origins] == \
        [(0, 0, 0), (0, 2, 4), (1, 3, 0), (2, 4, 0), (2, 5, 2)]
