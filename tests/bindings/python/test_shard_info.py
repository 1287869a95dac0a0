"""A dataset's `shards` describe each shard as Mosaic's shard readers do
(from index.json), cache_limit is checked with Mosaic's rules and texts,
and prepare_shard fetches a shard into the cache."""
import os
import shutil

import pytest

import sluice
from conftest import DATA


def test_shards_describe_each_shard_from_index_json(tmp_path):
    folder = str(tmp_path / 'ds')
    shutil.copytree(os.path.join(DATA, 'compressed_zstd_hashed'), folder)
    ds = sluice.StreamingDataset(local=folder, batch_size=1, allow_unsafe_types=True)
    assert ds.num_shards == len(ds.shards) == 5
    first = ds.shards[0]
    assert (len(first), first.samples, first.format, first.compression, first.hashes,
            first.size_limit) == (7, 7, 'mds', 'zstd', ['sha1', 'xxh3_64', 'xxh64'], 16384)
    assert first.column_names[:2] == ['a_bytes', 'a_int'] and first.column_sizes[1] == 8
    assert (first.raw_data.basename, first.raw_data.bytes) == ('shard.00000.mds', 15390)
    assert (first.zip_data.basename, first.zip_data.bytes) == ('shard.00000.mds.zstd', 7188)
    assert first.raw_data.hashes['xxh64'] == '6603ff6b055d4198'
    assert (first.get_raw_size(), first.get_zip_size(), first.get_max_size()) == \
        (15390, 7188, 22578)
    assert (first.get_persistent_size(True), first.get_persistent_size(False)) == (22578, 15390)
    assert [len(s) for s in ds.shards] == ds.samples_per_shard.tolist()


def test_split_shards_have_data_and_meta_files():
    ds = sluice.StreamingDataset(local=os.path.join(DATA, 'csv_plain'), batch_size=1)
    shard = ds.shards[0]
    assert shard.format == 'csv' and shard.compression is None
    assert [p[0].basename for p in shard.file_pairs] == ['shard.00000.csv', 'shard.00000.csv.meta']
    assert shard.get_zip_size() is None
    assert shard.get_raw_size() == shard.raw_data.bytes + shard.raw_meta.bytes


@pytest.fixture
def remote(tmp_path):
    folder = str(tmp_path / 'remote')
    with sluice.MDSWriter(out=folder, columns={'data': 'bytes'}, size_limit=2000) as w:
        for i in range(20):
            w.write({'data': bytes([i]) * 400})
    return folder


def test_cache_limit_follows_mosaics_rules(tmp_path, remote):
    index_size = os.path.getsize(os.path.join(remote, 'index.json'))
    largest = max(os.path.getsize(os.path.join(remote, f)) for f in os.listdir(remote)
                  if f.endswith('.mds'))
    with pytest.raises(ValueError) as e:
        sluice.StreamingDataset(remote=remote, local=str(tmp_path / 'a'), batch_size=1,
                                cache_limit=index_size)
    assert os.path.isdir(tmp_path / 'a')  # the cache folder exists, as Mosaic's
    assert str(e.value) == (f'Minimum cache usage ({index_size} bytes) is larger than the cache '
                            f'limit ({index_size} bytes). Please raise `cache_limit`. '
                            f'Recommendation is to provide a `cache_limit` as high as possible '
                            f'to avoid thrashing.')
    assert index_size < 4 * largest - 1
    with pytest.raises(ValueError) as e:
        sluice.StreamingDataset(remote=remote, local=str(tmp_path / 'b'), batch_size=1,
                                cache_limit=f'{4 * largest - 1}b')
    assert str(e.value) == (f'Cache limit ({4 * largest - 1} bytes) is too low. Increase the `cache_limit` to '
                            f'at-least four times the largest shard size ({largest} bytes) which '
                            f'includes raw (decompressed) and zip (compressed) file size. '
                            f'Recommendation is to provide a `cache_limit` as high as possible to '
                            f'avoid thrashing.')
    ds = sluice.StreamingDataset(remote=remote, local=str(tmp_path / 'c'), batch_size=1,
                                 cache_limit=4 * largest)
    assert sorted(int(s['data'][0]) for s in ds) == list(range(20))


def test_prepare_shard_fetches_it(tmp_path, remote):
    local = tmp_path / 'cache'
    ds = sluice.StreamingDataset(remote=remote, local=str(local), batch_size=1)
    assert not (local / 'shard.00003.mds').exists()
    ds.prepare_shard(3)
    with open(os.path.join(remote, 'shard.00003.mds'), 'rb') as f:
        assert (local / 'shard.00003.mds').read_bytes() == f.read()
    with pytest.raises(IndexError, match='shard 99 out of range'):
        ds.prepare_shard(99)
