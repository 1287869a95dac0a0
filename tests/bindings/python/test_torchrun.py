"""Two ranks launched with torchrun (gloo, --nproc_per_node 2) each receive
their partition of the epoch; batches line up; together they cover it."""
import json
import os
import socket
import subprocess
import sys

import numpy as np

import sluice
from sluice.world import World

HERE = os.path.dirname(os.path.abspath(__file__))


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def test_two_ranks_under_torchrun(tmp_path):
    data = str(tmp_path / 'data')
    with sluice.MDSWriter(out=data, columns={'id': 'int'}, size_limit=400) as w:
        for i in range(203):
            w.write({'id': i})
    out = str(tmp_path / 'result.json')
    env = dict(os.environ)
    env['PYTHONPATH'] = os.pathsep.join(p for p in [os.path.dirname(sluice.__path__[0]), HERE,
                                                    env.get('PYTHONPATH', '')] if p)
    # Debian's torch 1.13 torchrun needs non-zero --redirects/--tee on Python 3.11.
    # --monitor_interval: the agent polls its workers every 5 s by default.
    cmd = [sys.executable, '-m', 'torch.distributed.run', '--nproc_per_node', '2',
           '--redirects', '2', '--tee', '1', '--monitor_interval', '0.2',
           '--master_port', str(free_port()),
           os.path.join(HERE, 'torchrun_worker.py'), data, out]
    proc = subprocess.run(cmd, env=env, cwd=str(tmp_path), capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    with open(out) as f:
        ranks = json.load(f)
    assert [r['rank'] for r in ranks] == [0, 1]

    # Each rank got exactly its partition of the plan for a 1 node x 2 ranks x 2 workers world.
    ds = sluice.StreamingDataset(local=data, batch_size=4, shuffle=True, shuffle_seed=5,
                                 num_canonical_nodes=2)
    world = World.__new__(World)
    world.num_nodes, world.ranks_per_node = 1, 2
    plan = ds.plan(world=world, workers=2)
    for r in ranks:
        expect = [i for w in range(2) for i in plan.worker_ids(0, r['rank'], w)]
        got = [i for b in r['batches'] for i in b]
        assert sorted(got) == sorted(int(x) for x in expect)
        assert r['len'] == 102  # ceil(203 / 2)
    # Steps line up: both ranks run the same number of batches, of equal sizes.
    assert [len(b) for b in ranks[0]['batches']] == [len(b) for b in ranks[1]['batches']]
    every = sorted(i for r in ranks for b in r['batches'] for i in b)
    assert set(every) == set(range(203))
    assert len(every) == 204  # one sample is repeated to even out the two ranks
    assert np.all(np.bincount(every) >= 1)
