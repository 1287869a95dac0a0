"""Hugging Face Accelerate (pinned accelerate) on 2 processes (`accelerate
launch`, CPU, gloo on the loopback), each reading a sluice.StreamingDataset
through sluice.StreamingDataLoader with 2 DataLoader workers
(accelerate_fit.py). Every batch the training loop is given must be the one
Sluice's plan for that world (2 ranks x 2 workers) puts there. Stopped after
some steps, accelerator.save_state writes the loader's state_dict (the
loader is registered for checkpointing); a run that load_state()s it gives
exactly the rest of the epoch: the plan resumed at that position, which with
the first part is each rank's uninterrupted epoch, sample for sample.
"""
import pytest
import torch

from trainer_runs import (BATCH, RANKS, SAMPLES, check_resumed_epoch, free_port, planned_batches,
                          run_ranks, write_dataset)


def fit(out, folder, max_steps=-1, save=None, resume=None, notebook=False):
    if notebook:  # notebook_launcher in one Python process (accelerate_notebook.py)
        return run_ranks(['accelerate_notebook'], 'accelerate_fit.py', out, folder=folder,
                         max_steps=max_steps, save=save, resume=resume)
    # --multi_gpu picks Accelerate's torchrun launcher; without a GPU the
    # processes are MULTI_CPU. torchrun's default --redirects/--tee "0" do
    # not parse with Debian's torch 1.13 on Python 3.11 (test_lightning.py):
    # --tee is Accelerate's to pass on, --redirects torchrun's PET_REDIRECTS
    # (the fixture sets it).
    launcher = ['accelerate.commands.launch', '--multi_gpu', f'--num_processes={RANKS}',
                '--num_machines=1', '--main_process_ip=127.0.0.1',
                f'--main_process_port={free_port()}', '--tee=1', '--mixed_precision=no',
                '--dynamo_backend=no']
    return run_ranks(launcher, 'accelerate_fit.py', out, folder=folder, max_steps=max_steps,
                     save=save, resume=resume)


@pytest.mark.parametrize('notebook', [False, True], ids=['accelerate_launch',
                                                       'notebook_launcher'])
def test_accelerate_fit_and_resume_MultiProcess(tmp_path, monkeypatch, notebook):
    monkeypatch.setenv('PET_REDIRECTS', '1')
    folder = write_dataset(tmp_path / 'data')
    whole = planned_batches(folder, 0)
    assert sorted(i for rank in whole for b in rank for i in b['ids']) == list(range(SAMPLES))

    steps = 11  # mid-epoch (30 steps a rank), worker 0 one batch ahead of worker 1
    first = fit(tmp_path / 'first', folder, max_steps=steps, save=str(tmp_path / 'mid'),
                notebook=notebook)
    for r in range(RANKS):
        assert first[r]['seen'] == whole[r][:steps], f'rank {r}'

    # The loader's state in Accelerate's checkpoint (written by rank 0): the
    # position the trained batches of both ranks reach.
    saved = torch.load(str(tmp_path / 'mid' / 'custom_checkpoint_0.pkl'))
    position = saved['sample_in_epoch']
    assert (saved['epoch'], position) == (0, steps * BATCH * RANKS)

    second = fit(tmp_path / 'second', folder, resume=str(tmp_path / 'mid'), notebook=notebook)
    check_resumed_epoch(folder, position, first, second)
