"""PyTorch Lightning (pinned lightning): lightning.Trainer trains a tiny
model on 2 processes (torchrun, strategy="ddp", CPU, gloo on the loopback), each
reading a sluice.StreamingDataset through sluice.StreamingDataLoader with
2 DataLoader workers (lightning_fit.py, started as its users start it).
Every batch a training_step is given must be the one Sluice's plan for
that world (2 ranks x 2 workers) puts there, and the ranks together see
the epoch, every sample once. Interrupted after some steps, the checkpoint
Lightning writes holds the loader's state_dict (Lightning 2.2 asks every
loader with state_dict/load_state_dict for it); fit(ckpt_path=...) from it
gives exactly the rest of the epoch: the plan resumed at that position, and
with the first part, every sample once.
"""
import json
import os
import socket
import subprocess
import sys

import pytest
import torch

import sluice
from sluice.world import World

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLES = 240  # 2 ranks x 2 workers x batch 4 divide it: no padding repeats a sample
BATCH = 4
RANKS = 2
WORKERS = 2


@pytest.fixture(scope='module')
def folder(tmp_path_factory):
    out = tmp_path_factory.mktemp('lightning') / 'data'
    with sluice.MDSWriter(out=str(out), columns={'id': 'int', 'text': 'str'},
                          size_limit=1 << 10) as w:
        for i in range(SAMPLES):
            w.write({'id': i, 'text': 'sample %d' % i})
    return str(out)


def fit(out, folder, max_steps=-1, save=None, resume=None):
    """Runs lightning_fit.py on RANKS processes; each rank's record."""
    out.mkdir()
    config = dict(folder=folder, out=str(out), batch=BATCH, workers=WORKERS, devices=RANKS,
                  max_steps=max_steps, save=save, resume=resume)
    # torchrun's default --redirects/--tee "0" do not parse with Debian's
    # torch 1.13 on Python 3.11 (test_torch_distributor.py); "1" does.
    env = dict(os.environ, GLOO_SOCKET_IFNAME='lo', PET_REDIRECTS='1', PET_TEE='1')
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        port = s.getsockname()[1]
    done = subprocess.run([sys.executable, '-m', 'torch.distributed.run',
                           f'--nproc_per_node={RANKS}', '--master_addr=127.0.0.1',
                           f'--master_port={port}', os.path.join(HERE, 'lightning_fit.py'),
                           json.dumps(config)], env=env, cwd=str(out), capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    ranks = [json.loads((out / f'rank{r}.json').read_text()) for r in range(RANKS)]
    for r, seen in enumerate(ranks):
        assert seen['world_size'] == RANKS
        assert seen['env'] == {'RANK': str(r), 'WORLD_SIZE': str(RANKS), 'LOCAL_RANK': str(r),
                               'LOCAL_WORLD_SIZE': str(RANKS)}
    return ranks


def planned_batches(folder, sample_in_epoch):
    """Each rank's batches in the order its DataLoader yields them: the
    plan's ids for each worker, cut into batches, taken from the workers
    in turn (a worker with none left is passed over)."""
    dataset = sluice.StreamingDataset(local=folder, shuffle=True, shuffle_seed=7,
                                      batch_size=BATCH)
    plan = dataset.plan(sample_in_epoch=sample_in_epoch,
                        world=World.of(1, RANKS, workers_per_rank=WORKERS), workers=WORKERS)
    out = []
    for rank in range(RANKS):
        queues = []
        for worker in range(WORKERS):
            ids = plan.worker_ids(0, rank, worker).tolist()
            queues.append([{'worker': worker, 'ids': ids[k:k + BATCH]}
                           for k in range(0, len(ids), BATCH)])
        batches = []
        while any(queues):
            for q in queues:
                if q:
                    batches.append(q.pop(0))
        out.append(batches)
    return out


def ids_of(ranks):
    return [i for r in ranks for batch in r['seen'] for i in batch['ids']]


def test_ddp_fit_and_resume_MultiProcess(folder, tmp_path):
    whole = planned_batches(folder, 0)
    assert sorted(i for rank in whole for b in rank for i in b['ids']) == list(range(SAMPLES))

    steps = 11  # mid-epoch (30 steps a rank), worker 0 one batch ahead of worker 1
    first = fit(tmp_path / 'first', folder, max_steps=steps, save=str(tmp_path / 'mid'))
    checkpoint = str(tmp_path / 'mid.ckpt')
    for r in range(RANKS):
        assert first[r]['seen'] == whole[r][:steps], f'rank {r}'

    # The loader's state in Lightning's checkpoint: the position the
    # trained batches of both ranks reach.
    saved = torch.load(checkpoint, map_location='cpu')
    [loader_state] = saved['loops']['fit_loop']['state_dict']['combined_loader']
    position = loader_state['sample_in_epoch']
    assert (loader_state['epoch'], position) == (0, steps * BATCH * RANKS)

    second = fit(tmp_path / 'second', folder, resume=checkpoint)
    rest = planned_batches(folder, position)
    for r in range(RANKS):
        assert second[r]['seen'] == rest[r], f'rank {r}'
    # Every worker of every rank had batches on both sides of the resume.
    assert {b['worker'] for r in first + second for b in r['seen']} == {0, 1}
    seen = ids_of(first) + ids_of(second)
    assert len(seen) == len(set(seen))
    assert sorted(seen) == list(range(SAMPLES))
