"""What the trainer tests (test_lightning.py, test_composer.py) share: the
dataset they train on, the batches Sluice's plan hands each rank, and a run
of a training script on several ranks through a launcher."""
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
