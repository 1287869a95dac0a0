"""Ray Data (pinned ray) and Sluice: sluice.ray's datasource (read tasks of
whole shards each, below), and what a Ray user writes without it.
Reading: ray.data.from_torch(sluice.StreamingDataset(...)) streams the
dataset through one read task (Ray's from_torch has only that), each row
{'item': sample}; with preserve_order the rows are the epoch's samples in
the order StreamingDataset gives them in one process, each once. In
parallel: a Datasource with one read task per partition, task i opening
StreamingDataset(world=(i, n)), reads what rank i of n reads.
Writing: map_batches(batch_format='pandas', batch_size=None) hands each
task one block as a pandas DataFrame; the task writes it with
sluice.MDSWriter into a folder of its own (local, or uploaded to s3://),
and the driver merges the folders' indexes with sluice.merge_index.
"""
import filecmp
import functools
import os

import pytest

import ray_local
import sluice
from sluice.remote import remote_list, remote_read

SAMPLES = 157
COLUMNS = {'id': 'int64', 'text': 'str', 'data': 'bytes', 'score': 'float64'}
WRITER = dict(columns=COLUMNS, compression='zstd', hashes=['sha1', 'xxh64'], size_limit=1 << 11)


def sample(i):
    return {'id': i, 'text': 'row %d' % i, 'data': bytes((i * 7 + k) % 256 for k in range(i % 40)),
            'score': i / 8}


@pytest.fixture(scope='module')
def ray_with_s3(request):
    """A local Ray whose workers see the s3rver fixture's credentials (the
    `s3` fixture sets them per test, after Ray's workers have started);
    without s3rver (no node), a Ray for the local tests only."""
    from s3rver_fixture import KEY_ID, SECRET
    try:
        env = {'AWS_ACCESS_KEY_ID': KEY_ID, 'AWS_SECRET_ACCESS_KEY': SECRET,
               'S3_ENDPOINT_URL': request.getfixturevalue('s3rver')}
    except pytest.skip.Exception:
        env = {}
    with ray_local.started(env) as ray:
        ctx = ray.data.DataContext.get_current()
        ctx.execution_options.preserve_order = True
        yield ray


def write_local(folder, ids):
    with sluice.MDSWriter(out=str(folder), **WRITER) as w:
        for i in ids:
            w.write(sample(i))


def read_through_ray(ray, **dataset_args):
    rows = ray.data.from_torch(sluice.StreamingDataset(**dataset_args)).take_all()
    return [(int(r['item']['id']), r['item']['text'], bytes(r['item']['data']),
             float(r['item']['score'])) for r in rows]


def as_tuples(samples):
    return [(int(s['id']), s['text'], bytes(s['data']), float(s['score'])) for s in samples]


@pytest.mark.parametrize('shuffle', [False, True])
def test_from_torch_reads_the_epoch_once_local(ray_with_s3, tmp_path, shuffle):
    write_local(tmp_path / 'data', range(SAMPLES))
    args = dict(local=str(tmp_path / 'data'), batch_size=4, shuffle=shuffle, shuffle_seed=3)
    got = read_through_ray(ray_with_s3, **args)
    assert got == as_tuples(sluice.StreamingDataset(**args))
    assert sorted(got) == as_tuples(sample(i) for i in range(SAMPLES))
    if not shuffle:
        assert [g[0] for g in got] == list(range(SAMPLES))


def test_from_torch_reads_the_epoch_once_s3(ray_with_s3, s3, tmp_path):
    remote = f'{s3}/ray-read'
    with sluice.MDSWriter(out=(str(tmp_path / 'src'), remote), **WRITER) as w:
        for i in range(SAMPLES):
            w.write(sample(i))
    got = read_through_ray(ray_with_s3, remote=remote, local=str(tmp_path / 'cache'),
                           batch_size=4, shuffle=True, shuffle_seed=5)
    assert got == as_tuples(sluice.StreamingDataset(
        remote=remote, local=str(tmp_path / 'cache2'), batch_size=4, shuffle=True,
        shuffle_seed=5))
    assert sorted(got) == as_tuples(sample(i) for i in range(SAMPLES))


def partitioned_sluice(ray, partitions, **dataset_args):
    """A Ray Datasource (what a Ray user writes for a parallel read): one
    read task per partition, task i reading as rank i of n through the
    dataset's `world`, without torchrun's variables. Each row also says
    which task read it and where in that task's order. (A class made here:
    ray is imported only once ray_local has set Ray's environment.)"""
    from ray.data.block import BlockMetadata
    from ray.data.datasource import Datasource, ReadTask

    class PartitionedSluice(Datasource):
        def estimate_inmemory_data_size(self):
            return None

        def get_read_tasks(self, parallelism, per_task_row_limit=None, data_context=None):
            return [ReadTask(functools.partial(read_partition, i, partitions, dataset_args),
                             BlockMetadata(num_rows=None, size_bytes=None, exec_stats=None,
                                           input_files=None))
                    for i in range(partitions)]

    return PartitionedSluice()


def read_partition(rank, partitions, dataset_args):
    import pyarrow as pa
    import ray

    import sluice
    ds = sluice.StreamingDataset(world=(rank, partitions), **dataset_args)
    task = ray.get_runtime_context().get_task_id()
    rows = [{'task': task, 'partition': rank, 'position': k, 'id': int(s['id']),
             'text': s['text'], 'data': bytes(s['data']), 'score': float(s['score'])}
            for k, s in enumerate(ds)]
    return [pa.Table.from_pylist(rows)]


def ids_of_rank(monkeypatch, rank, world_size, **dataset_args):
    """What rank `rank` of `world_size` reads under torchrun's variables."""
    with monkeypatch.context() as mp:
        mp.setenv('RANK', str(rank))
        mp.setenv('WORLD_SIZE', str(world_size))
        mp.delenv('LOCAL_WORLD_SIZE', raising=False)
        mp.delenv('LOCAL_RANK', raising=False)
        return as_tuples(sluice.StreamingDataset(**dataset_args))


@pytest.mark.parametrize('where', ['local', 's3'])
def test_read_tasks_one_per_partition_read_the_epoch_once(ray_with_s3, request, monkeypatch,
                                                          tmp_path, where):
    partitions, samples = 3, 156  # 52 a partition: no rank's share padded
    if where == 'local':
        write_local(tmp_path / 'data', range(samples))
        source = dict(local=str(tmp_path / 'data'))
        reference = source
    else:
        remote = f'{request.getfixturevalue("s3")}/ray-parallel-read'
        with sluice.MDSWriter(out=(str(tmp_path / 'src'), remote), **WRITER) as w:
            for i in range(samples):
                w.write(sample(i))
        source = dict(remote=remote, local=str(tmp_path / 'cache'))
        reference = dict(remote=remote, local=str(tmp_path / 'cache_ref'))
    args = dict(batch_size=4, shuffle=True, shuffle_seed=11)
    datasource = partitioned_sluice(ray_with_s3, partitions, **source, **args)
    rows = ray_with_s3.data.read_datasource(datasource,
                                            override_num_blocks=partitions).take_all()
    tasks = {}
    for r in rows:
        tasks.setdefault(r['partition'], []).append(r)
    assert sorted(tasks) == list(range(partitions))
    assert len({r['task'] for r in rows}) == partitions  # one Ray task each
    union = []
    for rank, got in tasks.items():
        assert len({r['task'] for r in got}) == 1
        got.sort(key=lambda r: r['position'])
        got = as_tuples(got)
        assert got == ids_of_rank(monkeypatch, rank, partitions, **reference, **args)
        union += got
    assert sorted(union) == as_tuples(sample(i) for i in range(samples))  # the epoch, once


def write_block(frame, out):
    """map_batches' function (one block per call): writes the block into
    out/<its first id> and says which rows it wrote."""
    import os

    import pandas as pd

    import sluice
    first = int(frame['id'].iloc[0])
    with sluice.MDSWriter(out=os.path.join(out, '%06d' % first), **WRITER) as w:
        for row in frame.to_dict('records'):
            w.write(row)
    return pd.DataFrame({'first': [first], 'count': [len(frame)]})


def tree(folder):
    return sorted(os.path.relpath(os.path.join(d, f), folder)
                  for d, _, files in os.walk(folder) for f in files)


def write_blocks_through_ray(ray, out):
    """Ray writes the samples as 5 blocks under `out` (a folder or URL), one
    MDS folder per block; returns [(first id, count)] of the blocks, sorted."""
    ds = ray.data.from_items([sample(i) for i in range(SAMPLES)], override_num_blocks=5)
    blocks = ds.map_batches(write_block, batch_format='pandas', batch_size=None,
                            fn_kwargs={'out': out}).take_all()
    blocks = sorted((int(b['first']), int(b['count'])) for b in blocks)
    assert len(blocks) == 5
    assert [f for f, _ in blocks] == [sum(c for _, c in blocks[:k]) for k in range(5)]
    assert sum(c for _, c in blocks) == SAMPLES
    return blocks


def write_blocks_in_one_process(folder, blocks):
    """The same blocks written by this process, then merged: the reference."""
    for first, count in blocks:
        write_local(os.path.join(folder, '%06d' % first), range(first, first + count))
    sluice.merge_index(folder)


def test_map_batches_writes_mds_per_block_and_merges(ray_with_s3, tmp_path):
    out = str(tmp_path / 'ray')
    blocks = write_blocks_through_ray(ray_with_s3, out)
    sluice.merge_index(out)

    ref = str(tmp_path / 'one_process')
    write_blocks_in_one_process(ref, blocks)
    assert tree(out) == tree(ref)
    assert len(tree(out)) > 2 * 5  # several shards per block, and the indexes
    match, mismatch, errors = filecmp.cmpfiles(out, ref, tree(ref), shallow=False)
    assert (mismatch, errors) == ([], [])

    got = as_tuples(sluice.StreamingDataset(local=out, batch_size=4))
    assert got == as_tuples(sample(i) for i in range(SAMPLES))


def test_map_batches_writes_mds_per_block_to_s3_and_merges(ray_with_s3, s3, tmp_path):
    """Each Ray task uploads its block's folder (MDSWriter with a remote-only
    `out`: a temporary local folder, removed once uploaded), the driver merges
    the sub-indexes it lists under the remote and uploads index.json."""
    remote = f'{s3}/ray-write'
    blocks = write_blocks_through_ray(ray_with_s3, remote)
    sluice.merge_index(remote)

    ref = str(tmp_path / 'one_process')
    write_blocks_in_one_process(ref, blocks)
    keys = remote_list(remote)
    assert keys == tree(ref)
    assert len(keys) > 2 * 5
    for key in keys:
        with open(os.path.join(ref, key), 'rb') as f:
            assert remote_read(remote, key) == f.read(), key

    got = as_tuples(sluice.StreamingDataset(remote=remote, local=str(tmp_path / 'cache'),
                                            batch_size=4))
    assert got == as_tuples(sample(i) for i in range(SAMPLES))


# sluice.ray: the datasource Sluice ships (read tasks of whole shards each).
RICH = {'id': 'int', 'text': 'str', 'data': 'bytes', 'score': 'float64',
        'vec': 'ndarray:int16:2,3', 'meta': 'json'}


def rich_sample(i):
    import numpy as np
    return {'id': i, 'text': 'row %d é' % i,
            'data': bytes((i * 7 + k) % 256 for k in range(i % 40)),
            'score': i / 8, 'vec': np.arange(6, dtype=np.int16).reshape(2, 3) * (i - 80),
            'meta': {'k': i, 'tags': ['t%d' % t for t in range(i % 3)]}}


def write_rich(out, samples):
    with sluice.MDSWriter(out=out, columns=RICH, compression='zstd', hashes=['xxh64'],
                          size_limit=1 << 11) as w:
        for i in range(samples):
            w.write(rich_sample(i))


def check_rows(rows, samples):
    """Ray's rows are exactly the samples, in id order, each once."""
    assert [r['id'] for r in rows] == list(range(samples))
    for r in rows:
        want = rich_sample(r['id'])
        assert (r['text'], r['data'], r['score'], r['meta']) == \
            (want['text'], want['data'], want['score'], want['meta'])
        assert r['vec'].dtype == want['vec'].dtype and (r['vec'] == want['vec']).all()


def check_read_tasks(ray, source, read, samples, tasks):
    """`read` (a Dataset of read_sluice) ran `tasks` read tasks, each block
    the samples of one run of whole shards, the runs disjoint and covering
    every shard."""
    runs = source.shard_runs(tasks)
    assert len(runs) == tasks
    assert runs[0][0] == 0 and runs[-1][1] == source.num_shards
    assert all(a[1] == b[0] and a[3] == b[2] for a, b in zip(runs, runs[1:]))
    assert runs[0][2] == 0 and runs[-1][3] == samples
    done = read.materialize()
    blocks = [ray.get(ref) for bundle in done.iter_internal_ref_bundles()
              for ref in bundle.block_refs]
    firsts = [b.column('id').to_pylist() for b in blocks]
    assert [(ids[0], ids[-1] + 1) for ids in firsts] == [(r[2], r[3]) for r in runs]
    assert f'ReadSluice: {tasks} tasks executed' in done.stats()


def test_read_sluice_reads_every_sample_once_in_parallel_local(ray_with_s3, tmp_path):
    import pyarrow as pa

    import sluice.ray
    samples = 157
    write_rich(str(tmp_path / 'data'), samples)
    source = sluice.ray.SluiceDatasource(local=str(tmp_path / 'data'))
    assert source.num_shards > 8
    ds = sluice.ray.read_sluice(local=str(tmp_path / 'data'), override_num_blocks=4)
    schema = ds.schema()
    types = dict(zip(schema.names, schema.types))
    assert (types['id'], types['score'], types['text'], types['data']) == \
        (pa.int64(), pa.float64(), pa.large_string(), pa.large_binary())
    assert str(types['vec']) == 'ArrowTensorTypeV2(shape=(2, 3), dtype=int16)'
    check_rows(ds.take_all(), samples)
    check_read_tasks(ray_with_s3, source, ds, samples, 4)
    # Ray's limit stops each task at its row limit.
    assert [r['id'] for r in ds.limit(10).take_all()] == list(range(10))


def test_read_sluice_reads_every_sample_once_in_parallel_s3(ray_with_s3, s3, tmp_path):
    import sluice.ray
    samples = 157
    remote = f'{s3}/ray-datasource'
    write_rich((str(tmp_path / 'src'), remote), samples)
    args = dict(remote=remote, local=str(tmp_path / 'cache'), keep_zip=True, validate_hash='xxh64')
    ds = sluice.ray.read_sluice(override_num_blocks=3, **args)
    check_rows(ds.take_all(), samples)
    source = sluice.ray.SluiceDatasource(**args)
    check_read_tasks(ray_with_s3, source, sluice.ray.read_sluice(override_num_blocks=3, **args),
                     samples, 3)
    # The tasks fetched every shard into the cache, each whole (zips kept).
    keys = remote_list(remote)
    assert len(keys) > 8
    for key in keys:
        with open(tmp_path / 'cache' / key, 'rb') as f:
            assert f.read() == remote_read(remote, key), key


def test_read_sluice_refuses_a_bad_remote_and_epoch_arguments(ray_with_s3, s3, tmp_path):
    import sluice.ray
    """Raised by read_sluice on the driver, before any task: the engine's
    error naming the URL, Mosaic's for a local folder without an index."""
    cache = str(tmp_path / 'cache')
    with pytest.raises(FileNotFoundError) as error:
        sluice.ray.read_sluice(f'{s3}/no-such-dataset', local=cache)
    port = s3rver_port(s3)
    assert str(error.value) == (
        f'not found: stream 0 ({cache}): downloading {s3}/no-such-dataset/index.json to '
        f'{cache}/index.json: {s3}/no-such-dataset/index.json: GET '
        f'http://127.0.0.1:{port}/bkt/no-such-dataset/index.json: HTTP 404 Not Found '
        f'(NoSuchKey: The specified key does not exist.), expected 206 for Range '
        f'bytes=0-8388607')
    missing = str(tmp_path / 'missing')
    with pytest.raises(sluice.dataset.MissingIndexError) as error:
        sluice.ray.read_sluice(local=missing)
    assert str(error.value) == (f'No `remote` provided, but local file {missing}/index.json '
                                f'does not exist either')
    with pytest.raises(TypeError) as error:
        sluice.ray.read_sluice(local=missing, shuffle=True, epoch_size=10)
    assert str(error.value) == (
        "SluiceDatasource: ['epoch_size', 'shuffle'] shape an epoch of a StreamingDataset; a "
        "Ray read reads every sample once (shuffle with Ray's random_shuffle). Read "
        "arguments: ['download_retry', 'download_timeout', 'validate_hash', 'keep_zip', "
        "'predownload', 'cache_limit', 'allow_unsafe_types', 'columns']")


def s3rver_port(s3):
    """The port of the s3rver fixture's endpoint."""
    return os.environ['S3_ENDPOINT_URL'].rsplit(':', 1)[1].strip('/')


def test_import_sluice_leaves_ray_unimported():
    import subprocess
    import sys
    code = 'import sys, sluice; print(sorted(m for m in sys.modules if m.split(".")[0] == "ray"))'
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                         check=True).stdout
    assert out.split() == ['[]']


def test_read_sluice_reads_a_parquet_folder_with_its_nulls(ray_with_s3, tmp_path):
    """A folder of Parquet files (a row group a shard): Ray's columns hold
    the files' values and nulls, null list elements included."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    import sluice.ray
    n = 50
    table = pa.table({
        'id': pa.array(range(n), pa.int64()),
        'maybe': pa.array([None if i % 4 == 0 else i * 3 for i in range(n)], pa.int32()),
        'toks': pa.array([None if i % 7 == 0 else [i, None, i + 1] if i % 5 == 0 else
                          list(range(i % 4)) for i in range(n)], pa.list_(pa.int32())),
        'name': pa.array([None if i % 6 == 0 else 'n%d' % i for i in range(n)], pa.string())})
    folder = tmp_path / 'pq'
    folder.mkdir()
    pq.write_table(table.slice(0, 30), folder / 'a.parquet', row_group_size=10)
    pq.write_table(table.slice(30), folder / 'b.parquet', row_group_size=10)
    ds = sluice.ray.read_sluice(local=str(folder), override_num_blocks=3)
    schema = ds.schema()
    assert dict(zip(schema.names, schema.types)) == {
        'id': pa.int64(), 'maybe': pa.int32(), 'toks': pa.large_list(pa.int32()),
        'name': pa.string()}
    got = pa.Table.from_pylist(ds.take_all())
    assert got.to_pydict() == table.to_pydict()
    assert 'ReadSluice: 3 tasks executed' in ds.materialize().stats()


def test_a_read_task_fetches_its_run_of_shards_from_its_first(tmp_path):
    """One read task (sluice.ray's task function, in this process) with a
    cache of its own: it fetches every shard of its run and none before it;
    the last run's task, none past the dataset's end either."""
    from sluice.ray import SluiceDatasource, _read_samples
    with sluice.MDSWriter(out=str(tmp_path / 'src'), columns={'id': 'int', 'text': 'str'},
                          size_limit=1 << 10) as w:
        for i in range(400):
            w.write({'id': i, 'text': 'x' * 20})
    remote = str(tmp_path / 'src')
    runs = SluiceDatasource(remote=remote, local=str(tmp_path / 'c')).shard_runs(4)
    assert runs == [(0, 4, 0, 92), (4, 9, 92, 207), (9, 13, 207, 299), (13, 18, 299, 400)]
    for k, (first_shard, end_shard, first, end) in enumerate(runs):
        cache = tmp_path / f'c{k}'
        args = dict(remote=remote, local=str(cache), split=None)
        tables = list(_read_samples(args, str(cache), first, end, 1 << 20))
        assert sum(t.num_rows for t in tables) == end - first
        assert [i for t in tables for i in t.column('id').to_pylist()] == list(range(first, end))
        fetched = sorted(int(f.split('.')[1]) for f in os.listdir(cache) if f.startswith('shard.'))
        assert fetched[0] == first_shard
        assert set(range(first_shard, end_shard)) <= set(fetched)
    assert fetched == list(range(13, 18))
