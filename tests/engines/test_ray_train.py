"""Ray Train (pinned ray): TorchTrainer with ScalingConfig(num_workers=2,
use_gpu=False) on a local Ray started by the test. Ray sets RANK,
WORLD_SIZE, LOCAL_RANK and LOCAL_WORLD_SIZE in each training worker before
train_loop_per_worker runs, so sluice.StreamingDataset and
mosaicml-streaming's StreamingDataset (the oracle, same arguments) find the
rank themselves: each rank must be handed the same samples in the same
order by both, in order and shuffled; together the ranks read every sample.
"""
import json

import pytest

import ray_local
import sluice

SAMPLES = 203  # not a multiple of the ranks times the batch: Mosaic pads


def read_as_a_rank(config):
    """train_loop_per_worker: runs in each Ray Train worker."""
    import json
    import os

    import ray.train
    import streaming

    import sluice

    context = ray.train.get_context()
    seen = {'rank': context.get_world_rank(), 'world_size': context.get_world_size(),
            'env': {k: os.environ.get(k) for k in
                    ('RANK', 'WORLD_SIZE', 'LOCAL_RANK', 'LOCAL_WORLD_SIZE', 'MASTER_ADDR')}}
    for shuffle in (False, True):
        args = dict(local=config['folder'], shuffle=shuffle, batch_size=4, shuffle_seed=7)
        seen[f'ours shuffle={shuffle}'] = [int(s['id']) for s in sluice.StreamingDataset(**args)]
        seen[f'theirs shuffle={shuffle}'] = [int(s['id']) for s in streaming.StreamingDataset(**args)]
    path = os.path.join(config['out'], f"rank{seen['rank']}.json")
    with open(path, 'w') as f:
        json.dump(seen, f)


@pytest.fixture
def local_ray():
    with ray_local.started() as ray:
        yield ray


def test_each_worker_reads_what_mosaic_hands_it(local_ray, tmp_path):
    from ray.train import RunConfig, ScalingConfig
    from ray.train.torch import TorchTrainer

    folder = tmp_path / 'data'
    with sluice.MDSWriter(out=str(folder), columns={'id': 'int', 'text': 'str'},
                          size_limit=1 << 10) as w:
        for i in range(SAMPLES):
            w.write({'id': i, 'text': 'sample %d' % i})
    out = tmp_path / 'ranks'
    out.mkdir()
    TorchTrainer(read_as_a_rank,
                 train_loop_config={'folder': str(folder), 'out': str(out)},
                 scaling_config=ScalingConfig(num_workers=2, use_gpu=False),
                 run_config=RunConfig(storage_path=str(tmp_path / 'results'),
                                      name='sluice')).fit()

    ranks = [json.loads((out / f'rank{r}.json').read_text()) for r in range(2)]
    for r, seen in enumerate(ranks):
        assert seen['rank'] == r and seen['world_size'] == 2
        assert seen['env'] == {'RANK': str(r), 'WORLD_SIZE': '2', 'LOCAL_RANK': str(r),
                               'LOCAL_WORLD_SIZE': '2', 'MASTER_ADDR': '127.0.0.1'}
    for shuffle in (False, True):
        ours = [seen[f'ours shuffle={shuffle}'] for seen in ranks]
        for r in range(2):
            assert ours[r] == ranks[r][f'theirs shuffle={shuffle}'], f'rank {r} shuffle={shuffle}'
        # Each rank gets half of the padded epoch; the padding repeats samples.
        assert len(ours[0]) == len(ours[1]) == 102
        assert sorted(set(ours[0] + ours[1])) == list(range(SAMPLES))
    assert ranks[0]['ours shuffle=True'] != ranks[0]['ours shuffle=False']


def train_with_ray_checkpoints(config):
    """train_loop_per_worker of the checkpoint test (trainer_runs.ddp_train),
    checkpointed as Ray Train's users do: ray.train.report with a Checkpoint
    (rank 0's folder) after the steps; a resumed run gets the Result's
    Checkpoint in train_loop_config (TorchTrainer's resume_from_checkpoint
    is deprecated in Ray 2.60: its warning points to ray-project/ray#49454)."""
    import os
    import tempfile

    import ray.train
    import torch

    from trainer_runs import ddp_train

    def save(state):
        with tempfile.TemporaryDirectory() as folder:
            checkpoint = None
            if ray.train.get_context().get_world_rank() == 0:
                torch.save(state, os.path.join(folder, 'state.pt'))
                checkpoint = ray.train.Checkpoint.from_directory(folder)
            ray.train.report({'steps': config['stop']}, checkpoint=checkpoint)

    saved = None
    checkpoint = config['resume']
    if checkpoint is not None:
        with checkpoint.as_directory() as folder:
            saved = torch.load(os.path.join(folder, 'state.pt'))
    ddp_train(config, saved, save)


def test_train_checkpoint_mid_epoch_and_resume_MultiProcess(local_ray, tmp_path):
    """TorchTrainer (2 workers, gloo, CPU) trains a tiny model, reports a
    checkpoint mid-epoch holding the loader's state_dict, and a second
    TorchTrainer given that checkpoint trains the rest: each rank's
    batches across the interruption are its uninterrupted epoch's, sample
    for sample (trainer_runs.check_resumed_epoch)."""
    import torch
    from ray.train import RunConfig, ScalingConfig
    from ray.train.torch import TorchTrainer

    from trainer_runs import (BATCH, RANKS, WORKERS, check_resumed_epoch, planned_batches,
                              write_dataset)
    folder = write_dataset(tmp_path / 'data')
    whole = planned_batches(folder, 0)
    steps = 11  # mid-epoch (30 steps a rank)

    def fit(name, stop, resume):
        out = tmp_path / name
        out.mkdir()
        result = TorchTrainer(
            train_with_ray_checkpoints,
            train_loop_config=dict(folder=folder, out=str(out), batch=BATCH, workers=WORKERS,
                                   stop=stop, resume=resume),
            scaling_config=ScalingConfig(num_workers=RANKS, use_gpu=False),
            run_config=RunConfig(storage_path=str(tmp_path / 'results'), name=name)).fit()
        ranks = [json.loads((out / f'rank{r}.json').read_text()) for r in range(RANKS)]
        for r, seen in enumerate(ranks):
            assert (seen['world_size'], seen['env']) == (RANKS, {
                'RANK': str(r), 'WORLD_SIZE': str(RANKS), 'LOCAL_RANK': str(r),
                'LOCAL_WORLD_SIZE': str(RANKS)})
        return result, ranks

    result, first = fit('first', steps, None)
    for r in range(RANKS):
        assert first[r]['seen'] == whole[r][:steps], f'rank {r}'
    with result.checkpoint.as_directory() as saved:
        loader_state = torch.load(f'{saved}/state.pt')['loader']
    position = loader_state['sample_in_epoch']
    assert (loader_state['epoch'], position) == (0, steps * BATCH * RANKS)
    _, second = fit('second', None, result.checkpoint)
    check_resumed_epoch(folder, position, first, second)
