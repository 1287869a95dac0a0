"""sluice.world.World with Mosaic's constructor and fields: a given world
World(num_nodes, ranks_per_node, workers_per_rank, worker), and World() /
World.detect() for this process."""
import pytest

from sluice.world import World


def fields(w):
    return {k: getattr(w, k) for k in (
        'node', 'num_nodes', 'is_multinode', 'rank', 'num_ranks', 'rank_of_node',
        'ranks_per_node', 'worker', 'num_workers', 'worker_of_node', 'workers_per_node',
        'worker_of_rank', 'workers_per_rank', 'is_leader', 'is_local_leader')}


def test_a_given_world_has_mosaics_fields():
    # worker 13 of 2 nodes x 2 ranks x 4 workers: node 1, rank 3, 2nd rank of its node
    assert fields(World(num_nodes=2, ranks_per_node=2, workers_per_rank=4, worker=13)) == {
        'node': 1, 'num_nodes': 2, 'is_multinode': True, 'rank': 3, 'num_ranks': 4,
        'rank_of_node': 1, 'ranks_per_node': 2, 'worker': 13, 'num_workers': 16,
        'worker_of_node': 5, 'workers_per_node': 8, 'worker_of_rank': 1, 'workers_per_rank': 4,
        'is_leader': False, 'is_local_leader': False}
    first = World(1, 1, 1, 0)
    assert (first.is_leader, first.is_local_leader, first.is_multinode) == (True, True, False)
    assert World(2, 2, 4, 13).to_json() == fields(World(2, 2, 4, 13))
    assert fields(World(2, 2, 4, 13).copy()) == fields(World(2, 2, 4, 13))
    assert fields(World.of(2, 2, rank=3, worker=1, workers_per_rank=4)) == \
        fields(World(2, 2, 4, 13))
    with pytest.raises(TypeError, match='give all of num_nodes'):
        World(num_nodes=2)


def test_this_process_from_torchrun_variables(monkeypatch):
    monkeypatch.setenv('RANK', '5')
    monkeypatch.setenv('WORLD_SIZE', '8')
    monkeypatch.setenv('LOCAL_WORLD_SIZE', '4')
    assert fields(World()) == fields(World(2, 4, 1, 5))
    assert fields(World.detect()) == fields(World(2, 4, 1, 5))
    assert fields(World(2, 4, 3, 16).detect_workers()) == fields(World(2, 4, 1, 5))
    # replication 2: 4 merged ranks, 4 per node: one node; rank 5 -> 2
    assert fields(World().replicate(2)) == fields(World(1, 4, 1, 2))
