"""TorchDistributor (pyspark.ml.torch.distributor, pinned pyspark): how
Databricks runs a torch training function over a cluster, here in local mode:
torchrun starts the processes on this machine with the environment a
distributed job has (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, ...).
Every rank reads one dataset with Sluice and with mosaicml-streaming (the
oracle, same arguments) and must be handed the same samples in the same
order; together the ranks read every sample. And a tiny model trained with
DDP under TorchDistributor, checkpointed mid-epoch with the loader's
state_dict and resumed by a second run, sees each rank's uninterrupted epoch.
"""
import json
import os

import pytest

import sluice

SAMPLES = 203  # not a multiple of the ranks times the batch: Mosaic pads


def read_as_a_rank(folder, out_dir, shuffle):
    """The training function: runs in each torchrun process."""
    import json
    import os

    import streaming

    import sluice

    rank = int(os.environ['RANK'])
    args = dict(local=folder, shuffle=shuffle, batch_size=4, shuffle_seed=7)
    ours = [int(s['id']) for s in sluice.StreamingDataset(**args)]
    theirs = [int(s['id']) for s in streaming.StreamingDataset(**args)]
    world = {k: os.environ.get(k) for k in ('WORLD_SIZE', 'LOCAL_RANK', 'LOCAL_WORLD_SIZE')}
    with open(os.path.join(out_dir, f'rank{rank}.json'), 'w') as f:
        json.dump({'world': world, 'ours': ours, 'theirs': theirs}, f)
    return rank


@pytest.mark.parametrize('shuffle', [False, True])
def test_each_rank_reads_what_mosaic_hands_it(spark_sessions, tmp_path, monkeypatch, shuffle):
    from pyspark.ml.torch.distributor import TorchDistributor

    # Debian's torch 1.13 predates Python 3.11, whose IntFlag no longer
    # iterates its zero member: torchrun's default --redirects/--tee "0"
    # parse to None and it fails before starting a process. torchrun reads
    # its options from PET_* too; "1" (stdout) parses.
    monkeypatch.setenv('PET_REDIRECTS', '1')
    monkeypatch.setenv('PET_TEE', '1')

    spark_sessions.fresh()  # TorchDistributor asks for the active session
    folder = tmp_path / 'data'
    with sluice.MDSWriter(out=str(folder), columns={'id': 'int', 'text': 'str'},
                          size_limit=1 << 10) as w:
        for i in range(SAMPLES):
            w.write({'id': i, 'text': 'sample %d' % i})
    out = tmp_path / 'ranks'
    out.mkdir()
    # Its return value is one rank's (which one, pyspark 3.5.9's local mode
    # does not fix: every rank writes the same output file).
    got = TorchDistributor(num_processes=2, local_mode=True, use_gpu=False).run(
        read_as_a_rank, str(folder), str(out), shuffle)
    assert got in (0, 1)
    ranks = [json.loads((out / f'rank{r}.json').read_text()) for r in range(2)]
    for r, seen in enumerate(ranks):
        assert seen['world'] == {'WORLD_SIZE': '2', 'LOCAL_RANK': str(r), 'LOCAL_WORLD_SIZE': '2'}
        assert seen['ours'] == seen['theirs'], f'rank {r}'
    ours = ranks[0]['ours'] + ranks[1]['ours']
    # Each rank gets half of the padded epoch; the padding repeats samples.
    assert len(ranks[0]['ours']) == len(ranks[1]['ours']) == 102
    assert sorted(set(ours)) == list(range(SAMPLES))


def train_as_a_rank(config):
    """The training function of the checkpoint test (trainer_runs.ddp_train),
    its checkpoint a file: rank 0 saves it, a resumed run loads it."""
    import os

    import torch
    import torch.distributed as dist

    from trainer_runs import ddp_train

    def save(state):
        if dist.get_rank() == 0:
            torch.save(state, config['save'])

    dist.init_process_group('gloo')
    ddp_train(config, torch.load(config['resume']) if config['resume'] else None, save)
    dist.destroy_process_group()
    return int(os.environ['RANK'])


def test_train_checkpoint_mid_epoch_and_resume_MultiProcess(spark_sessions, tmp_path,
                                                              monkeypatch):
    """TorchDistributor trains on 2 processes, checkpoints mid-epoch (the
    loader's state_dict beside the model's), and a second TorchDistributor
    run resumes from it: each rank's batches across the interruption are its
    uninterrupted epoch's, sample for sample (trainer_runs.check_resumed_epoch,
    as the Lightning and Composer tests check)."""
    import torch
    from pyspark.ml.torch.distributor import TorchDistributor

    from trainer_runs import (BATCH, RANKS, WORKERS, check_resumed_epoch, planned_batches,
                              write_dataset)
    monkeypatch.setenv('PET_REDIRECTS', '1')  # as in the test above
    monkeypatch.setenv('PET_TEE', '1')
    monkeypatch.setenv('GLOO_SOCKET_IFNAME', 'lo')
    spark_sessions.fresh()
    folder = write_dataset(tmp_path / 'data')
    whole = planned_batches(folder, 0)
    steps = 11  # mid-epoch (30 steps a rank)
    save = str(tmp_path / 'mid.pt')

    def run(name, stop, resume):
        out = tmp_path / name
        out.mkdir()
        config = dict(folder=folder, out=str(out), batch=BATCH, workers=WORKERS, stop=stop,
                      save=save, resume=resume)
        TorchDistributor(num_processes=RANKS, local_mode=True, use_gpu=False).run(
            train_as_a_rank, config)
        ranks = [json.loads((out / f'rank{r}.json').read_text()) for r in range(RANKS)]
        for r, seen in enumerate(ranks):
            assert (seen['world_size'], seen['env']) == (RANKS, {
                'RANK': str(r), 'WORLD_SIZE': str(RANKS), 'LOCAL_RANK': str(r),
                'LOCAL_WORLD_SIZE': str(RANKS)})
        return ranks

    first = run('first', steps, None)
    for r in range(RANKS):
        assert first[r]['seen'] == whole[r][:steps], f'rank {r}'
    loader_state = torch.load(save)['loader']
    position = loader_state['sample_in_epoch']
    assert (loader_state['epoch'], position) == (0, steps * BATCH * RANKS)
    second = run('second', None, save)
    check_resumed_epoch(folder, position, first, second)
