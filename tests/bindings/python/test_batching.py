"""sluice.batching.generate_work (served as streaming.base.batching): the
whole epoch's 5-D sample partition that Mosaic's generate_work returns, for
every order vector (worlds of several nodes, ranks and workers; all batching
methods; weighted streams; mid-epoch resumption)."""
import json
import os

import numpy as np
import pytest

from sluice.batching import generate_work
from sluice.world import World
from test_streaming import ORDER, dataset_for, load_order


def vectors():
    names = sorted(n[:-len('.json')] for n in os.listdir(ORDER) if n.endswith('.json'))
    out = []
    for name in names:
        cfg = load_order(name)['config']
        if 'error' in name or cfg.get('replication'):
            continue  # errors and replication are tested through the dataset
        out.append(name)
    return out


@pytest.mark.parametrize('name', vectors())
def test_generate_work_is_mosaics_partition(tmp_path, name):
    vec = load_order(name)
    cfg = vec['config']
    ds = dataset_for(cfg, str(tmp_path))
    ds.initial_physical_nodes = cfg['initial_physical_nodes']
    w = cfg['world']
    world = World(num_nodes=w['num_nodes'], ranks_per_node=w['ranks_per_node'],
                  workers_per_rank=w['workers_per_rank'], worker=0)
    work = generate_work(batching_method=cfg['batching_method'], dataset=ds, world=world,
                         epoch=cfg['epoch'], sample_in_epoch=cfg['sample_in_epoch'])
    assert work.dtype == np.int64
    assert list(work.shape) == vec['work_shape']
    assert work.tolist() == vec['work']


def test_the_batching_method_given_wins_over_the_datasets(tmp_path):
    device = load_order('device_per_stream_py1e')
    cfg = dict(device['config'], batching_method='per_stream')
    ds = dataset_for(cfg, str(tmp_path))  # built for per_stream
    w = cfg['world']
    world = World(w['num_nodes'], w['ranks_per_node'], w['workers_per_rank'], 0)
    epoch, offset = cfg['epoch'], cfg['sample_in_epoch']
    assert generate_work('device_per_stream', ds, world, epoch, offset).tolist() == device['work']
    assert ds.work(world, epoch, offset).tolist() != device['work']  # the dataset's own
