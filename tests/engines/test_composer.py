"""MosaicML Composer (pinned mosaicml): composer.Trainer trains a tiny
ComposerModel on 2 processes (Composer's launcher, CPU, gloo on the
loopback), each reading a sluice.StreamingDataset through
sluice.StreamingDataLoader with 2 DataLoader workers (composer_fit.py).
Every batch the model is given must be the one Sluice's plan for that world
(2 ranks x 2 workers) puts there. A checkpoint Composer saves after some
batches holds the dataset's state_dict (Composer asks the train loader's
dataset for it, Mosaic's signature); a Trainer loading it (load_path) gives
exactly the rest of the epoch: the plan resumed at that position, which
with the first part is each rank's uninterrupted epoch, sample for sample.
"""
import torch

from trainer_runs import (BATCH, RANKS, check_resumed_epoch, free_port, planned_batches, run_ranks,
                          write_dataset)


def fit(out, **config):
    launcher = ['composer.cli.launcher', '-n', str(RANKS), '--master_addr', '127.0.0.1',
                '--master_port', str(free_port())]
    return run_ranks(launcher, 'composer_fit.py', out, **config)


def test_fit_checkpoint_and_resume_MultiProcess(tmp_path):
    folder = write_dataset(tmp_path / 'data')
    whole = planned_batches(folder, 0)

    steps = 11  # mid-epoch (30 batches a rank), worker 0 one batch ahead of worker 1
    saves = tmp_path / 'checkpoints'
    first = fit(tmp_path / 'first', folder=folder, max_duration=f'{steps}ba', load=None,
                save={'folder': str(saves), 'filename': 'mid-rank{rank}.pt',
                      'interval': f'{steps}ba'})
    for r in range(RANKS):
        assert first[r]['seen'] == whole[r][:steps], f'rank {r}'

    checkpoint = str(saves / 'mid-rank0.pt')
    state = torch.load(checkpoint, map_location='cpu')['state']
    loader_state = state['dataset_state']['train']
    position = loader_state['sample_in_epoch']
    assert (loader_state['epoch'], position) == (0, steps * BATCH * RANKS)

    second = fit(tmp_path / 'second', folder=folder, max_duration='1ep', load=checkpoint,
                 save=None)
    check_resumed_epoch(folder, position, first, second)
