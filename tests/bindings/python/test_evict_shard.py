"""StreamingDataset.evict_shard and prepare_shard (Mosaic's manual cache
control) over a remote folder, and the cache folder holding nothing but the
dataset's files: Sluice's cache state lives outside it."""
import os

import pytest

import sluice


def write_remote(root, compression):
    with sluice.MDSWriter(out=root, columns={'id': 'int', 'data': 'bytes'},
                          compression=compression, size_limit=1 << 10) as w:
        for i in range(200):
            w.write({'id': i, 'data': bytes([i % 251]) * 20})
    return sorted(os.listdir(root))


@pytest.mark.parametrize('compression, keep_zip', [(None, False), ('zstd', False),
                                                   ('zstd', True)])
def test_evict_then_read_fetches_again(tmp_path, compression, keep_zip):
    remote, local = str(tmp_path / 'remote'), str(tmp_path / 'local')
    remote_files = write_remote(remote, compression)
    ds = sluice.StreamingDataset(remote=remote, local=local, keep_zip=keep_zip, batch_size=1)
    assert ds.num_shards == 9
    for shard in range(ds.num_shards):
        ds.prepare_shard(shard)
    full = sorted(os.listdir(local))
    raw = sorted(f'shard.{i:05d}.mds' for i in range(9))
    if compression is None:
        assert full == remote_files  # exactly the remote's files, nothing of Sluice's
    elif keep_zip:
        assert full == sorted(['index.json'] + raw + [f + '.zstd' for f in raw])
    else:
        assert full == ['index.json'] + raw
    for shard in range(ds.num_shards):
        ds.evict_shard(shard)
    assert os.listdir(local) == ['index.json']
    ds.evict_shard(3)  # evicting an absent shard is fine
    assert [ds[i]['id'] for i in range(ds.num_samples)] == list(range(200))
    assert ds[57]['data'] == bytes([57]) * 20
    assert sorted(os.listdir(local)) == full


def test_evict_shard_errors(tmp_path):
    remote = str(tmp_path / 'remote')
    write_remote(remote, None)
    ds = sluice.StreamingDataset(remote=remote, local=str(tmp_path / 'local'), batch_size=1)
    with pytest.raises(IndexError, match='^shard 9 out of range: the dataset has 9$'):
        ds.evict_shard(9)
    # A folder read in place is the dataset itself: never deleted.
    in_place = sluice.StreamingDataset(local=remote, batch_size=1)
    with pytest.raises(ValueError) as e:
        in_place.evict_shard(0)
    assert str(e.value) == (f'invalid argument: sluice_stream_evict_shard: stream 0: {remote}: '
                            f'cannot evict shard 0: the stream is read in place (no remote), '
                            f'its files are the dataset')
    assert sorted(os.listdir(remote))[:2] == ['index.json', 'shard.00000.mds']
