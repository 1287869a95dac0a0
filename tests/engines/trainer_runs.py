"""What the trainer tests (test_lightning.py, test_composer.py,
test_torch_distributor.py, test_ray_train.py) share: the dataset they train
on, the batches Sluice's plan hands each rank, a run of a training script on
several ranks through a launcher, and a plain DDP training loop for the
launchers that bring no trainer of their own."""
import json
import os
import socket
import subprocess
import sys

import sluice
from sluice.world import World

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLES = 240  # 2 ranks x 2 workers x batch 4 divide it: no padding repeats a sample
BATCH = 4
RANKS = 2
WORKERS = 2


def write_dataset(out):
    with sluice.MDSWriter(out=str(out), columns={'id': 'int', 'text': 'str'},
                          size_limit=1 << 10) as w:
        for i in range(SAMPLES):
            w.write({'id': i, 'text': 'sample %d' % i})
    return str(out)


def planned_batches(folder, sample_in_epoch):
    """Each rank's batches in the order its DataLoader yields them: the
    plan's ids for each worker (shuffled, seed 7), cut into batches, taken
    from the workers in turn (a worker with none left is passed over)."""
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


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def run_ranks(launcher, script, out, **config):
    """Runs `python -m <launcher...> script CONFIG_JSON` (the launcher starts
    RANKS processes, on the loopback); each rank's record, checked for the
    world the launcher gave it."""
    out.mkdir()
    config = dict(config, out=str(out), batch=BATCH, workers=WORKERS)
    env = dict(os.environ, GLOO_SOCKET_IFNAME='lo')
    done = subprocess.run([sys.executable, '-m', *launcher, os.path.join(HERE, script),
                           json.dumps(config)], env=env, cwd=str(out), capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    ranks = [json.loads((out / f'rank{r}.json').read_text()) for r in range(RANKS)]
    for r, seen in enumerate(ranks):
        assert seen['world_size'] == RANKS
        assert seen['env'] == {'RANK': str(r), 'WORLD_SIZE': str(RANKS), 'LOCAL_RANK': str(r),
                               'LOCAL_WORLD_SIZE': str(RANKS)}
    return ranks


def ids_of(ranks):
    return [i for r in ranks for batch in r['seen'] for i in batch['ids']]


def check_resumed_epoch(folder, position, first, second):
    """The resumed run (`second`, from a checkpoint at `position`) trained
    on exactly the plan resumed there; with the interrupted run (`first`)
    each rank had its uninterrupted epoch, in its order; both workers of the
    ranks had batches; and together the ranks saw every sample once."""
    whole = planned_batches(folder, 0)
    rest = planned_batches(folder, position)
    for r in range(RANKS):
        assert second[r]['seen'] == rest[r], f'rank {r}'
    for r in range(RANKS):
        assert ids_of([first[r], second[r]]) == ids_of([{'seen': whole[r]}]), f'rank {r}'
    assert {b['worker'] for r in first + second for b in r['seen']} == {0, 1}
    seen = ids_of(first) + ids_of(second)
    assert len(seen) == len(set(seen))
    assert sorted(seen) == list(range(SAMPLES))


def ddp_train(config, saved, save):
    """A tiny model trained with DDP (the process group is up: gloo, CPU) on
    the batches of a sluice.StreamingDataLoader (config: folder, batch,
    workers, out). With config['stop'], after that many steps the model's,
    the optimizer's and the loader's state_dict go to save(state) on every
    rank and the rank stops; `saved` (such a state, or None) is loaded
    first. Writes out/rank{R}.json as run_ranks reads it."""
    import torch
    import torch.distributed as dist

    def collate(samples):
        info = torch.utils.data.get_worker_info()
        return {'ids': torch.tensor([int(s['id']) for s in samples]),
                'worker': -1 if info is None else info.id}

    torch.manual_seed(0)
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(1, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    dataset = sluice.StreamingDataset(local=config['folder'], shuffle=True, shuffle_seed=7,
                                      batch_size=config['batch'])
    loader = sluice.StreamingDataLoader(dataset, batch_size=config['batch'],
                                        num_workers=config['workers'], collate_fn=collate)
    if saved is not None:
        model.load_state_dict(saved['model'])
        optimizer.load_state_dict(saved['optimizer'])
        loader.load_state_dict(saved['loader'])
    seen = []
    for batch in loader:
        seen.append({'worker': batch['worker'], 'ids': batch['ids'].tolist()})
        x = batch['ids'].float().unsqueeze(1) / 1000
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x), x).backward()
        optimizer.step()
        if len(seen) == config['stop']:
            save({'model': model.state_dict(), 'optimizer': optimizer.state_dict(),
                  'loader': loader.state_dict()})
            break
    dist.barrier()
    world = {k: os.environ.get(k) for k in ('RANK', 'WORLD_SIZE', 'LOCAL_RANK', 'LOCAL_WORLD_SIZE')}
    with open(os.path.join(config['out'], f'rank{dist.get_rank()}.json'), 'w') as f:
        json.dump({'world_size': dist.get_world_size(), 'env': world, 'seen': seen}, f)
