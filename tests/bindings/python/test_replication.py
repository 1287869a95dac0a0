"""Replication across nodes: the defaults Mosaic derives from its replicated
world (num_canonical_nodes, initial_physical_nodes) come from that world,
not the real one, so 2 nodes x 2 ranks with replication=2 reads the
planner's order and saves the state Mosaic saves."""
import pytest

import sluice
from sluice.world import World

SAMPLES = 640


@pytest.fixture
def data(tmp_path):
    folder = str(tmp_path / 'data')
    with sluice.MDSWriter(out=folder, columns={'id': 'int'}, size_limit=1024) as w:
        for i in range(SAMPLES):
            w.write({'id': i})
    return folder


def as_rank(monkeypatch, rank):
    monkeypatch.setenv('RANK', str(rank))
    monkeypatch.setenv('WORLD_SIZE', '4')
    monkeypatch.setenv('LOCAL_WORLD_SIZE', '2')


def test_world_replicate_follows_mosaic(monkeypatch):
    as_rank(monkeypatch, 3)
    world = World()
    two = world.replicate(2)  # 2 merged ranks: 2 ranks per node divides them, one node
    assert (two.num_nodes, two.ranks_per_node, two.rank, two.node, two.rank_of_node) == \
        (1, 2, 1, 0, 1)
    four = world.replicate(4)
    assert (four.num_nodes, four.ranks_per_node, four.rank) == (1, 1, 0)
    one = world.replicate(1)
    assert (one.num_nodes, one.ranks_per_node, one.rank) == (2, 2, 3)
    with pytest.raises(ValueError, match='divisible'):
        world.replicate(3)
    with pytest.raises(ValueError, match='positive'):
        world.replicate(0)


@pytest.mark.parametrize('algo', ['py1s', 'py1e'])
def test_two_nodes_replication_two_reads_the_planners_order(monkeypatch, data, algo):
    def make():
        return sluice.StreamingDataset(local=data, batch_size=4, shuffle=True, shuffle_algo=algo,
                                       shuffle_seed=5, replication=2)

    as_rank(monkeypatch, 0)
    config = make()._config(World(), 1, 0, 0)
    # The planner derives both defaults itself from the replicated world.
    config['num_canonical_nodes'] = None
    config['initial_physical_nodes'] = None
    plan = sluice.Plan(config)
    for rank in range(4):
        as_rank(monkeypatch, rank)
        ds = make()
        got = [int(s['id']) for s in ds]
        group = rank // 2  # planning rank in a world of 1 node x 2 ranks
        assert got == plan.worker_ids(0, group, 0).tolist(), rank
        state = ds.state_dict(len(got), True)
        assert state['num_canonical_nodes'] == (64 if algo == 'py1s' else 1)
        assert state['initial_physical_nodes'] == 1
