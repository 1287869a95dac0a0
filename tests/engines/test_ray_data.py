"""Ray Data (pinned ray) and Sluice, with no helper of Sluice's: what a Ray
user writes.
Reading: ray.data.from_torch(sluice.StreamingDataset(...)) streams the
dataset through one read task (Ray's from_torch has only that), each row
{'item': sample}; with preserve_order the rows are the epoch's samples in
the order StreamingDataset gives them in one process, each once.
Writing: map_batches(batch_format='pandas', batch_size=None) hands each
task one block as a pandas DataFrame; the task writes it with
sluice.MDSWriter into a folder of its own, and the driver merges the
folders' indexes with sluice.merge_index.
"""
import filecmp
import os

import pytest

import ray_local
import sluice

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


def test_map_batches_writes_mds_per_block_and_merges(ray_with_s3, tmp_path):
    ray = ray_with_s3
    out = str(tmp_path / 'ray')
    ds = ray.data.from_items([sample(i) for i in range(SAMPLES)], override_num_blocks=5)
    blocks = ds.map_batches(write_block, batch_format='pandas', batch_size=None,
                            fn_kwargs={'out': out}).take_all()
    blocks = sorted((int(b['first']), int(b['count'])) for b in blocks)
    assert len(blocks) == 5
    assert [f for f, _ in blocks] == [sum(c for _, c in blocks[:k]) for k in range(5)]
    assert sum(c for _, c in blocks) == SAMPLES
    sluice.merge_index(out)

    # The same blocks written in one process, then merged: the same bytes.
    ref = str(tmp_path / 'one_process')
    for first, count in blocks:
        write_local(os.path.join(ref, '%06d' % first), range(first, first + count))
    sluice.merge_index(ref)
    assert tree(out) == tree(ref)
    assert len(tree(out)) > 2 * 5  # several shards per block, and the indexes
    match, mismatch, errors = filecmp.cmpfiles(out, ref, tree(ref), shallow=False)
    assert (mismatch, errors) == ([], [])

    got = as_tuples(sluice.StreamingDataset(local=out, batch_size=4))
    assert got == as_tuples(sample(i) for i in range(SAMPLES))
