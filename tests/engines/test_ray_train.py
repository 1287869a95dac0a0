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
