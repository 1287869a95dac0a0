"""sluice.world.World with Mosaic's constructor and fields: a given world
World(num_nodes, ranks_per_node, workers_per_rank, worker), and World() /
World.detect() for this process."""
import warnings

import pytest

import sluice.world
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


def _torchrun(monkeypatch, **values):
    for name in ('RANK', 'WORLD_SIZE', 'LOCAL_RANK', 'LOCAL_WORLD_SIZE'):
        monkeypatch.delenv(name, raising=False)
    for name, value in values.items():
        monkeypatch.setenv(name, value)


def test_without_local_world_size_every_rank_is_a_node_as_mosaic(monkeypatch):
    # Mosaic's get_local_world_size() is 1 without LOCAL_WORLD_SIZE; the
    # engine, which the package asks, once took WORLD_SIZE (one node).
    _torchrun(monkeypatch, RANK='3', WORLD_SIZE='4')
    assert fields(World()) == fields(World(4, 1, 1, 3))
    # LOCAL_RANK, which Mosaic never reads, changes nothing then.
    monkeypatch.setenv('LOCAL_RANK', '3')
    assert fields(World()) == fields(World(4, 1, 1, 3))
    _torchrun(monkeypatch)
    assert fields(World()) == fields(World(1, 1, 1, 0))


def test_a_dataset_plans_for_that_world(monkeypatch, tmp_path):
    # Two ranks without LOCAL_WORLD_SIZE are two nodes: Mosaic's default
    # num_canonical_nodes (64 per node for py1s) follows.
    from test_streaming import write_stream
    import sluice
    folder = write_stream(str(tmp_path / 'ds'), [10, 10], 0)
    _torchrun(monkeypatch, RANK='1', WORLD_SIZE='2')
    ds = sluice.StreamingDataset(local=folder, batch_size=2, shuffle_algo='py1s')
    assert ds.state_dict(0, from_beginning=True)['num_canonical_nodes'] == 128


def test_malformed_or_disagreeing_variables_are_the_engines_errors(monkeypatch):
    _torchrun(monkeypatch, RANK='0', WORLD_SIZE='x')
    with pytest.raises(ValueError, match=r"^invalid argument: world: environment variable "
                                         r"WORLD_SIZE 'x' is not an integer$"):
        World()
    _torchrun(monkeypatch, RANK='0', WORLD_SIZE='6', LOCAL_WORLD_SIZE='4')
    with pytest.raises(ValueError, match=r'^invalid argument: world: rank 0, world_size 6, '
                                         r'local_rank 0, local_world_size 4: inconsistent'):
        World()


def test_the_engine_reading_the_environment_plans_as_the_package_does(monkeypatch, tmp_path):
    # Without LOCAL_WORLD_SIZE: a config without "world" (the engine reads
    # the environment) gives rank 1 of 2 the same ids as one with the world
    # the package read (sluice.world), and not rank 0's.
    from test_streaming import write_stream
    from sluice import engine
    folder = write_stream(str(tmp_path / 'ds'), [10, 10, 10], 0)
    _torchrun(monkeypatch, RANK='1', WORLD_SIZE='2')
    config = {'local': folder, 'batch_size': 2, 'shuffle': True, 'shuffle_seed': 7}

    def ids(config):
        opened = engine.Engine(config)
        try:
            return list(opened.iterate_ids(0, 0, 0, 1))
        finally:
            opened.close()

    w = World()
    assert (w.num_nodes, w.ranks_per_node, w.rank) == (2, 1, 1)
    as_package = ids({**config, 'world': {'rank': w.rank, 'world_size': w.num_ranks,
                                          'local_rank': w.rank_of_node,
                                          'local_world_size': w.ranks_per_node}})
    assert ids(config) == as_package
    rank0 = ids({**config, 'world': {'rank': 0, 'world_size': 2, 'local_rank': 0,
                                     'local_world_size': 1}})
    assert len(as_package) == 15 and sorted(as_package + rank0) == list(range(30))


UNRANKED = ("world: WORLD_SIZE is 4 but RANK is not set, so this process takes itself for "
            "rank 0 and reads the same samples as every other process started this way "
            "(PyTorch Lightning's own launcher sets WORLD_SIZE and LOCAL_RANK but not RANK). "
            "Launch with torchrun, which sets RANK, WORLD_SIZE, LOCAL_RANK and "
            "LOCAL_WORLD_SIZE for every process, or set RANK in each process.")


def _warnings_of(make):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        result = make()
    return result, [(w.category, str(w.message)) for w in caught]


def test_world_size_without_rank_warns_once_and_stays_rank_0(monkeypatch):
    # PyTorch Lightning's own launcher: WORLD_SIZE and LOCAL_RANK, no RANK.
    monkeypatch.setattr(sluice.world, '_warned', False)
    _torchrun(monkeypatch, WORLD_SIZE='4', LOCAL_RANK='2')
    worlds, caught = _warnings_of(lambda: [fields(World()), fields(World.detect())])
    # Mosaic's world (rank 0 of 4 one-rank nodes), and one warning only.
    assert worlds == [fields(World(4, 1, 1, 0))] * 2
    assert caught == [(UserWarning, UNRANKED)]


def test_a_dataset_in_a_world_without_rank_warns_once(monkeypatch, tmp_path):
    from test_streaming import write_stream
    import sluice
    folder = write_stream(str(tmp_path / 'ds'), [10, 10], 0)
    monkeypatch.setattr(sluice.world, '_warned', False)
    _torchrun(monkeypatch, WORLD_SIZE='4', LOCAL_RANK='2')
    ds, caught = _warnings_of(lambda: sluice.StreamingDataset(local=folder, batch_size=2))
    assert caught == [(UserWarning, UNRANKED)]
    assert len(ds) == 5  # rank 0's share of 20 samples over 4 ranks, as Mosaic


@pytest.mark.parametrize('env', [{}, {'WORLD_SIZE': '1'}, {'RANK': '0', 'WORLD_SIZE': '4'},
                                 {'RANK': '3', 'WORLD_SIZE': '4', 'LOCAL_RANK': '1',
                                  'LOCAL_WORLD_SIZE': '2'}],
                         ids=['alone', 'world-of-1', 'rank-set', 'torchrun'])
def test_a_world_with_its_rank_does_not_warn(monkeypatch, env):
    monkeypatch.setattr(sluice.world, '_warned', False)
    _torchrun(monkeypatch, **env)
    _, caught = _warnings_of(World)
    assert caught == []


@pytest.mark.parametrize('env', [{}, {'RANK': '3', 'WORLD_SIZE': '4'},
                                 {'RANK': '5', 'WORLD_SIZE': '8', 'LOCAL_RANK': '1',
                                  'LOCAL_WORLD_SIZE': '4'}, {'WORLD_SIZE': '4'}],
                         ids=['alone', 'no-local-world-size', 'torchrun', 'no-rank'])
def test_mosaics_one_variable_accessors_agree_with_the_engines_world(monkeypatch, env):
    # sluice.distributed (Mosaic's streaming.base.distributed) reads each
    # variable alone, unchecked, as Mosaic's does; its defaults are the
    # engine's, so wherever the engine accepts the variables they agree.
    from sluice import distributed
    monkeypatch.setattr(sluice.world, '_warned', True)  # the warning is tested above
    _torchrun(monkeypatch, **env)
    w = World()
    assert (distributed.get_rank(), distributed.get_world_size(),
            distributed.get_local_world_size()) == (w.rank, w.num_ranks, w.ranks_per_node)


def _dataset_ids(ds):
    """The ids a dataset's pass reads, in order, with its len() and the
    num_samples its state counts for one rank's 2 samples."""
    ids = [int(s['id']) for s in ds]
    return ids, len(ds), ds.state_dict(2, from_beginning=True)['sample_in_epoch']


@pytest.mark.parametrize('shuffle', [False, True])
def test_a_datasets_world_reads_as_that_rank_without_torchruns_variables(monkeypatch, tmp_path,
                                                                         shuffle):
    # A Ray task reading partition i of n: world=(i, n) reads, counts and
    # saves exactly what rank i of n reads under torchrun, and the n
    # partitions are the epoch once.
    from test_streaming import write_stream
    import sluice
    folder = write_stream(str(tmp_path / 'ds'), [10, 4, 10], 0)
    args = dict(local=folder, batch_size=2, shuffle=shuffle, shuffle_seed=5)
    union = []
    for rank in range(3):
        _torchrun(monkeypatch, RANK=str(rank), WORLD_SIZE='3')
        under_torchrun = _dataset_ids(sluice.StreamingDataset(**args))
        _torchrun(monkeypatch)
        given = _dataset_ids(sluice.StreamingDataset(world=(rank, 3), **args))
        assert given == under_torchrun
        as_dict = sluice.StreamingDataset(world={'rank': rank, 'world_size': 3}, **args)
        assert _dataset_ids(as_dict) == under_torchrun
        union += given[0]
    assert sorted(union) == list(range(24))


def test_a_datasets_world_is_not_mixed_with_the_environment(monkeypatch, tmp_path):
    # Inside a torchrun job (4 ranks on one node), world=(1, 2) still reads
    # as rank 1 of 2 one-rank nodes: the environment fills in no field.
    from test_streaming import write_stream
    import sluice
    folder = write_stream(str(tmp_path / 'ds'), [10, 10], 0)
    _torchrun(monkeypatch, RANK='1', WORLD_SIZE='2')
    args = dict(local=folder, batch_size=2, shuffle=True, shuffle_seed=5)
    rank1_of_2 = _dataset_ids(sluice.StreamingDataset(**args))
    _torchrun(monkeypatch, RANK='0', WORLD_SIZE='4', LOCAL_RANK='0', LOCAL_WORLD_SIZE='4')
    assert _dataset_ids(sluice.StreamingDataset(world=(1, 2), **args)) == rank1_of_2
    ds = sluice.StreamingDataset(world={'rank': 0}, **args)
    assert fields(ds._world()) == fields(World(1, 1, 1, 0))


def test_a_bad_world_is_an_error_before_anything_is_read(monkeypatch, tmp_path):
    from test_streaming import write_stream
    import sluice
    folder = write_stream(str(tmp_path / 'ds'), [10], 0)
    _torchrun(monkeypatch)
    with pytest.raises(ValueError, match=r'^invalid argument: world: rank 3, world_size 3, '
                                         r'local_rank 0, local_world_size 1: inconsistent'):
        sluice.StreamingDataset(local=folder, batch_size=2, world=(3, 3))
    with pytest.raises(ValueError, match=r"^world: unknown keys \['node'\]"):
        sluice.StreamingDataset(local=folder, batch_size=2, world={'node': 1})
    with pytest.raises(TypeError, match=r'^world: expected None, \(rank, world_size\)'):
        sluice.StreamingDataset(local=folder, batch_size=2, world=3)
    with pytest.raises(ValueError, match=r"^invalid argument: dataset config: 'world.rank' "
                                         r"must be an integer$"):
        sluice.StreamingDataset(local=folder, batch_size=2, world=('1', 3))
