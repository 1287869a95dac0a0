"""The samples of global training steps from Python (issue 38's
provenance): StreamingDataset.step_samples asks the engine
(sluice_plan_steps) and gives exactly what `sluice plan DATASET --steps`
prints, over several worlds and shuffles, and what DataLoaders of a job
actually yielded at those steps (every rank of a 2 x 2 world, workers
forked, a second epoch, a resumed run); a step past the epoch is a
ValueError saying how many steps there are."""
import os
import subprocess

import pytest

import sluice
from sluice.world import World

BATCH = 4


@pytest.fixture(scope='module')
def folder(tmp_path_factory):
    out = str(tmp_path_factory.mktemp('steps') / 'ds')
    with sluice.MDSWriter(out=out, columns={'id': 'int', 'data': 'bytes'}, size_limit=700) as w:
        for i in range(173):
            w.write({'id': i, 'data': bytes([i % 251]) * (8 + i % 13)})
    return out


@pytest.fixture(scope='module')
def cli():
    """The `sluice` program built beside the library the package loads."""
    path = os.path.join(
        os.path.dirname(os.path.dirname(os.path.realpath(sluice._lib.lib._name))), 'cli', 'sluice')
    if not os.path.exists(path):
        pytest.skip(f'no sluice program at {path} (built with the library)')
    return path


def cli_steps(cli, folder, world, steps, options, rank=None):
    """`sluice plan --steps`'s lines as (step, rank, stream, shard, index, sample)."""
    args = [cli, 'plan', folder, '--world', ':'.join(map(str, world)), '--steps', steps,
            '--batch-size', str(BATCH)] + options + ([] if rank is None else ['--rank', str(rank)])
    run = subprocess.run(args, capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == 'step\trank\tstream\tshard\tindex\tsample'
    return [tuple(int(x) for x in line.split('\t')) for line in lines[1:]]


def rows(samples):
    return [(s['step'], s['rank'], s['stream'], s['shard'], s['index_in_shard'], s['sample_id'])
            for s in samples]


SHUFFLES = [
    ({'shuffle': False}, []),
    ({'shuffle': True, 'shuffle_seed': 7, 'shuffle_block_size': 30},
     ['--shuffle', '--shuffle-seed', '7', '--shuffle-block-size', '30']),
    ({'shuffle': True, 'shuffle_algo': 'py1s', 'shuffle_seed': 11},
     ['--shuffle', '--shuffle-algo', 'py1s', '--shuffle-seed', '11']),
    ({'shuffle': True, 'shuffle_algo': 'py1br', 'shuffle_block_size': 25},
     ['--shuffle', '--shuffle-algo', 'py1br', '--shuffle-block-size', '25']),
]


@pytest.mark.parametrize('world', [(1, 1, 1), (1, 1, 3), (2, 2, 2), (1, 4, 3), (3, 1, 2)])
@pytest.mark.parametrize('shuffle', range(len(SHUFFLES)))
def test_step_samples_are_what_the_cli_prints(folder, cli, world, shuffle):
    kwargs, options = SHUFFLES[shuffle]
    ds = sluice.StreamingDataset(local=folder, batch_size=BATCH, **kwargs)
    given = World.of(world[0], world[1], workers_per_rank=world[2])
    for epoch in (0, 2):
        got = rows(ds.step_samples(range(1, 10_000), epoch=epoch, world=given))
        want = cli_steps(cli, folder, world, '1:10000', options + ['--epoch', str(epoch)])
        assert got == want
        assert len({r[5] for r in got}) > 100  # most of the epoch's samples, each once
        last_rank = world[0] * world[1] - 1
        got = rows(ds.step_samples(3, epoch=epoch, world=given, rank=last_rank))
        assert got == cli_steps(cli, folder, world, '3', options + ['--epoch', str(epoch)],
                                rank=last_rank)
        assert len(got) == BATCH


def test_a_step_past_the_epoch_is_refused_saying_how_many_there_are(folder):
    ds = sluice.StreamingDataset(local=folder, batch_size=BATCH, shuffle=True)
    world = World.of(2, 2, workers_per_rank=2)
    # 173 samples over 4 ranks: 44 a rank (padded), 11 batches.
    assert ds.step_samples(10, world=world)[-1]['step'] == 10
    with pytest.raises(ValueError, match=r'^invalid argument: steps start at step 11, past the '
                                         r'last: each rank takes at most 11 steps in epoch 0$'):
        ds.step_samples(11, world=world)
    with pytest.raises(ValueError, match=r'^invalid argument: steps start at step 5, past the '
                                         r'last: the rank takes 5 steps in epoch 0 from '
                                         r'sample 96$'):
        ds.step_samples(range(5, 8), world=world, rank=1, sample_in_epoch=96)
    with pytest.raises(ValueError, match=r"^invalid argument: steps: rank 4 is outside the "
                                         r"world's 4 ranks$"):
        ds.step_samples(0, world=world, rank=4)
    with pytest.raises(ValueError, match=r'^invalid argument: steps -1 to 0 - 1: expected '
                                         r'0 <= first step < end$'):
        ds.step_samples(-1, world=world)
    with pytest.raises(TypeError, match=r'steps is a step or a range\(first, end\)'):
        ds.step_samples([1, 2], world=world)


def loader_of(folder, rank, **kwargs):
    """Rank `rank`'s loader of a 2 nodes x 2 ranks job, 2 workers each."""
    ds = sluice.StreamingDataset(local=folder, batch_size=BATCH, shuffle=True, shuffle_seed=5,
                                 world={'rank': rank, 'world_size': 4, 'local_world_size': 2},
                                 **kwargs)
    return sluice.StreamingDataLoader(ds, batch_size=BATCH, num_workers=2)


def test_step_samples_are_what_each_ranks_dataloader_yielded_MultiProcess(folder):
    yielded = {}  # (epoch, step, rank) -> ids
    for rank in range(4):
        loader = loader_of(folder, rank)
        for epoch in (0, 1):
            for step, batch in enumerate(loader):
                yielded[epoch, step, rank] = batch['id'].tolist()
    # Rank 2 asks for the whole job's steps, as a trainer tracing a loss
    # spike would (its loader's workers, its dataset's world).
    loader = loader_of(folder, 2)
    for epoch in (0, 1):
        got = {}
        for s in loader.step_samples(range(0, 100), epoch=epoch):
            got.setdefault((epoch, s['step'], s['rank']), []).append(s['sample_id'])
        assert got == {k: v for k, v in yielded.items() if k[0] == epoch}
        assert len(got) == 4 * 11
    # One step of one rank, with where its samples are.
    step = loader.step_samples(7, epoch=1, rank=3)
    assert [s['sample_id'] for s in step] == yielded[1, 7, 3]
    assert [{k: v for k, v in s.items() if k not in ('step', 'rank')} for s in step] == \
        loader.dataset.sample_origins(yielded[1, 7, 3])


def test_a_resumed_loader_counts_steps_from_its_state_MultiProcess(folder):
    first = loader_of(folder, 1)
    for step, _ in enumerate(first):
        if step == 4:
            break
    state = first.state_dict()
    assert state['sample_in_epoch'] == 5 * BATCH * 4
    resumed = loader_of(folder, 1)
    resumed.load_state_dict(state)
    yielded = [batch['id'].tolist() for batch in resumed]
    got = resumed.step_samples(range(0, 100), sample_in_epoch=state['sample_in_epoch'], rank=1)
    steps = {}
    for s in got:
        steps.setdefault(s['step'], []).append(s['sample_id'])
    assert [steps[k] for k in sorted(steps)] == yielded
    assert len(yielded) == 11 - 5


def test_step_samples_of_weighted_streams_are_what_the_loader_yielded(folder, tmp_path):
    other = str(tmp_path / 'other')
    with sluice.MDSWriter(out=other, columns={'id': 'int', 'data': 'bytes'}, size_limit=500) as w:
        for i in range(1000, 1090):
            w.write({'id': i, 'data': bytes([i % 251]) * (5 + i % 11)})
    ds = sluice.StreamingDataset(streams=[sluice.Stream(local=folder, proportion=0.3),
                                          sluice.Stream(local=other, proportion=0.7)],
                                 epoch_size=200, batch_size=BATCH, shuffle=True, shuffle_seed=2)
    loader = sluice.StreamingDataLoader(ds, batch_size=BATCH, num_workers=0)
    yielded = [batch['id'].tolist() for batch in loader]
    got = loader.step_samples(range(0, len(yielded)))
    # Each sample's `id` column names it: below 1000 the first stream's.
    ids = [ds[s['sample_id']]['id'] for s in got]
    assert ids == [i for batch in yielded for i in batch]
    assert [s['stream'] for s in got] == [int(i >= 1000) for i in ids]
    assert [s['step'] for s in got] == [k for k, batch in enumerate(yielded) for _ in batch]
