"""A dataset's `shards` describe each shard as Mosaic's shard readers do
(from index.json, one shard at a time when asked), cache_limit is checked with Mosaic's rules and texts,
and prepare_shard fetches a shard into the cache."""
import json
import os
import pickle
import shutil

import numpy as np
import pytest

import sluice
import sluice.engine
from conftest import DATA, compat_dirs
from sluice.shard_info import ShardInfo, read_shard_infos

PARQUET = os.path.join(os.path.dirname(DATA), '..', 'parquet')


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


def _described(info):
    """Every attribute of a ShardInfo, for comparing descriptions field by field."""
    return vars(info)


@pytest.mark.parametrize('name', compat_dirs())
def test_lazy_shards_equal_the_index_json_descriptions(tmp_path, name):
    """`shards` is made one shard at a time from the engine's entries: each
    equals the description read from the whole index.json (Mosaic's compat
    datasets: every format, compression and hash)."""
    folder = os.path.join(DATA, name)
    eager = read_shard_infos(os.path.join(folder, 'index.json'))
    ds = sluice.StreamingDataset(remote=folder, local=str(tmp_path / 'cache'), batch_size=1,
                                 allow_unsafe_types=True)
    assert len(ds.shards) == ds.num_shards == len(eager)
    assert [_described(s) for s in ds.shards] == [_described(s) for s in eager]
    assert [_described(s) for s in ds.shards[1::2]] == [_described(s) for s in eager[1::2]]
    assert _described(ds.shards[-1]) == _described(eager[-1])
    assert ds.shards[-1] is ds.shards[len(eager) - 1]  # made once, then kept
    assert ds.shards[np.int64(0)] is ds.shards[0]


def test_lazy_shards_of_several_streams_are_each_streams_in_order(tmp_path):
    names = ['compressed_zstd_hashed', 'tsv_plain', 'json_plain']
    streams = [sluice.Stream(remote=os.path.join(DATA, n), local=str(tmp_path / n))
               for n in names]
    ds = sluice.StreamingDataset(streams=streams, batch_size=1, allow_unsafe_types=True)
    eager = [info for n in names
             for info in read_shard_infos(os.path.join(DATA, n, 'index.json'))]
    assert len(ds.shards) == len(eager) == ds.num_shards
    assert [_described(s) for s in ds.shards] == [_described(s) for s in eager]
    assert [s.format for s in ds.shards] == [s.format for s in eager]
    assert {s.format for s in ds.shards} == {'mds', 'tsv', 'json'}
    assert [len(s) for s in ds.shards] == ds.samples_per_shard.tolist()


def test_shards_are_described_only_when_asked(monkeypatch):
    asked = []
    entry = sluice.engine.Engine.shard_entry

    def counting(self, shard):
        asked.append(shard)
        return entry(self, shard)

    monkeypatch.setattr(sluice.engine.Engine, 'shard_entry', counting)
    ds = sluice.StreamingDataset(local=os.path.join(DATA, 'csv_plain'), batch_size=1)
    assert len(ds.shards) == ds.num_shards and asked == []
    assert ds.shards[1].raw_data.basename == 'shard.00001.csv'
    assert ds.shards[1].samples == ds.samples_per_shard[1]
    assert asked == [1]
    assert ds.sample_origins([0])[0]['shard_file'] == 'shard.00000.csv'
    assert asked == [1, 0]
    with pytest.raises(IndexError, match='^list index out of range$'):
        ds.shards[ds.num_shards]
    with pytest.raises(IndexError, match='^list index out of range$'):
        ds.shards[-ds.num_shards - 1]
    with pytest.raises(TypeError):
        ds.shards['0']
    assert asked == [1, 0]


def test_shards_of_a_dataset_survive_pickling():
    ds = sluice.StreamingDataset(local=os.path.join(DATA, 'csv_plain'), batch_size=1)
    first = _described(ds.shards[0])
    copy = pickle.loads(pickle.dumps(ds))
    assert len(copy.shards) == ds.num_shards
    assert _described(copy.shards[0]) == first
    assert _described(copy.shards[-1]) == _described(ds.shards[-1])


def test_shards_without_an_index_json_are_their_counts(tmp_path):
    """A Parquet folder's row groups: no index.json describes them, so a
    shard is its sample count alone (as before)."""
    folder = tmp_path / 'pq'
    folder.mkdir()
    shutil.copy(os.path.join(PARQUET, 'duckdb_default.parquet'), folder / 'a.parquet')
    shutil.copy(os.path.join(PARQUET, 'duckdb_default.parquet'), folder / 'b.parquet')
    ds = sluice.StreamingDataset(local=str(folder), batch_size=1)
    assert ds.num_shards >= 2
    assert [len(s) for s in ds.shards] == ds.samples_per_shard.tolist()
    assert all(_described(s) == _described(ShardInfo({'samples': int(n)}))
               for s, n in zip(ds.shards, ds.samples_per_shard))


def test_index_errors_of_a_later_stream_keep_mosaics_texts(tmp_path):
    """Mosaic's index checks, with several streams: the engine could not
    open them, so their index.json files are read again for Mosaic's error."""
    good = sluice.Stream(local=os.path.join(DATA, 'csv_plain'))
    broken = tmp_path / 'broken'
    broken.mkdir()
    (broken / 'index.json').write_text('{"shards": [')
    index = os.path.join(str(broken), '', 'index.json')
    with pytest.raises(json.JSONDecodeError) as e:
        sluice.StreamingDataset(streams=[good, sluice.Stream(local=str(broken))], batch_size=1)
    assert str(e.value) == (f'Index file at {index} is empty or corrupted. Expecting value: '
                            f'line 1 column 13 (char 12)')
    (broken / 'index.json').write_text('{"shards": [], "version": 2}')
    with pytest.raises(RuntimeError) as e:
        sluice.StreamingDataset(streams=[good, sluice.Stream(local=str(broken))], batch_size=1)
    assert str(e.value) == f'Stream contains no samples: {index}.'
    # The first stream's error comes first, as Mosaic reads them in order.
    with pytest.raises(RuntimeError) as e:
        sluice.StreamingDataset(streams=[sluice.Stream(local=str(broken)), good], batch_size=1)
    assert str(e.value) == f'Stream contains no samples: {index}.'


def test_an_empty_remote_index_is_mosaics_error_naming_the_cached_copy(tmp_path):
    remote = tmp_path / 'remote'
    remote.mkdir()
    (remote / 'index.json').write_text('{"shards": [], "version": 2}')
    cache = tmp_path / 'cache'
    with pytest.raises(RuntimeError) as e:
        sluice.StreamingDataset(remote=str(remote), local=str(cache), batch_size=1)
    assert str(e.value) == f"Stream contains no samples: {os.path.join(str(cache), '', 'index.json')}."


def test_shards_of_no_samples_in_a_later_stream_are_mosaics_error(tmp_path):
    """Shards listed with 0 samples each: the engine refuses the stream, and
    the error is Mosaic's, naming that stream's index.json."""
    zero = tmp_path / 'zero'
    shutil.copytree(os.path.join(DATA, 'csv_plain'), zero)
    index = json.loads((zero / 'index.json').read_text())
    for shard in index['shards']:
        shard['samples'] = 0
    (zero / 'index.json').write_text(json.dumps(index))
    good = sluice.Stream(local=os.path.join(DATA, 'csv_plain'))
    with pytest.raises(RuntimeError) as e:
        sluice.StreamingDataset(streams=[good, sluice.Stream(local=str(zero))], batch_size=1)
    assert str(e.value) == f"Stream contains no samples: {os.path.join(str(zero), '', 'index.json')}."
