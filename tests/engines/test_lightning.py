"""PyTorch Lightning (pinned lightning): lightning.Trainer trains a tiny
model on 2 processes (torchrun, strategy="ddp", CPU, gloo on the loopback),
each reading a sluice.StreamingDataset through sluice.StreamingDataLoader
with 2 DataLoader workers (lightning_fit.py, started as Mosaic's guide
starts one). Every batch a training_step is given must be the one Sluice's
plan for that world (2 ranks x 2 workers) puts there, and the ranks together
see the epoch, every sample once. Stopped after some steps, the checkpoint
ModelCheckpoint writes holds the loader's state_dict (Lightning 2.2 asks
every loader with state_dict/load_state_dict for it); fit(ckpt_path=...)
from it gives exactly the rest of the epoch: the plan resumed at that
position, which with the first part is each rank's uninterrupted epoch,
sample for sample.
"""
import torch

from trainer_runs import (BATCH, RANKS, SAMPLES, check_resumed_epoch, free_port, planned_batches,
                          run_ranks, write_dataset)


def fit(out, folder, max_steps=-1, save=None, resume=None):
    # torchrun's default --redirects/--tee "0" do not parse with Debian's
    # torch 1.13 on Python 3.11 (test_torch_distributor.py); "1" does.
    launcher = ['torch.distributed.run', f'--nproc_per_node={RANKS}', '--redirects=1',
                '--tee=1', '--master_addr=127.0.0.1', f'--master_port={free_port()}']
    return run_ranks(launcher, 'lightning_fit.py', out, folder=folder, devices=RANKS,
                     max_steps=max_steps, save=save, resume=resume)


def test_ddp_fit_and_resume_MultiProcess(tmp_path):
    folder = write_dataset(tmp_path / 'data')
    whole = planned_batches(folder, 0)
    assert sorted(i for rank in whole for b in rank for i in b['ids']) == list(range(SAMPLES))

    steps = 11  # mid-epoch (30 steps a rank), worker 0 one batch ahead of worker 1
    first = fit(tmp_path / 'first', folder, max_steps=steps, save=str(tmp_path / 'mid'))
    for r in range(RANKS):
        assert first[r]['seen'] == whole[r][:steps], f'rank {r}'

    # The loader's state in Lightning's checkpoint: the position the
    # trained batches of both ranks reach.
    checkpoint = str(tmp_path / 'mid.ckpt')
    saved = torch.load(checkpoint, map_location='cpu')
    [loader_state] = saved['loops']['fit_loop']['state_dict']['combined_loader']
    position = loader_state['sample_in_epoch']
    assert (loader_state['epoch'], position) == (0, steps * BATCH * RANKS)

    second = fit(tmp_path / 'second', folder, resume=checkpoint)
    check_resumed_epoch(folder, position, first, second)
