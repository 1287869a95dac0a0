"""A resume that proves itself: state_dict carries the engine's order record
("sluice_order") beside Mosaic's keys, load_state_dict refuses a state saved
over other data, options or world (naming what changed) unless adapted,
skip_steps leaves whole steps out on every rank, and
sluice.testing.assert_resume_exact catches a resume that is not exact."""
import ctypes
import json

import pytest

import sluice
from sluice import _lib
from sluice.testing import assert_resume_exact

MOSAIC_KEYS = ['epoch', 'sample_in_epoch', 'num_canonical_nodes', 'shuffle_seed',
               'initial_physical_nodes']


def write(root, n):
    """An MDS dataset of `n` samples, column id = sample index, small shards."""
    with sluice.MDSWriter(out=str(root), columns={'id': 'int'}, size_limit=1 << 9) as w:
        for i in range(n):
            w.write({'id': i})
    return str(root)


def dataset(root, **kwargs):
    args = dict(local=root, batch_size=4, shuffle=True, shuffle_seed=11)
    args.update(kwargs)
    return sluice.StreamingDataset(**args)


def ids(samples):
    return [int(s['id']) for s in samples]


def take(ds, n):
    out = []
    for s in ds:
        out.append(int(s['id']))
        if len(out) == n:
            break
    return out


def saved(root, job_samples, ranks=1, **kwargs):
    """The state a job saves after `job_samples` samples of epoch 0 (this
    rank read its share: a state_dict is taken while an epoch is read)."""
    ds = dataset(root, **kwargs)
    take(ds, job_samples // ranks)
    return ds.state_dict(job_samples, True)


@pytest.fixture
def one_rank(monkeypatch):
    for name in ('RANK', 'WORLD_SIZE', 'LOCAL_WORLD_SIZE', 'LOCAL_RANK'):
        monkeypatch.delenv(name, raising=False)


def set_rank(monkeypatch, rank, ranks):
    monkeypatch.setenv('RANK', str(rank))
    monkeypatch.setenv('WORLD_SIZE', str(ranks))
    monkeypatch.setenv('LOCAL_WORLD_SIZE', '1')  # one rank per node
    monkeypatch.setenv('LOCAL_RANK', '0')


def test_state_dict_has_mosaics_keys_then_the_record(tmp_path, one_rank):
    root = write(tmp_path / 'd', 100)
    ds = dataset(root)
    take(ds, 12)
    state = ds.state_dict(12, True)
    assert list(state)[:5] == MOSAIC_KEYS
    assert [state[k] for k in MOSAIC_KEYS] == [0, 12, 1, 11, 1]
    order = state['sluice_order']
    assert list(order) == ['version', 'digest', 'parts'] and order['version'] == 1
    parts = order['parts']
    assert parts['sampling'] == {
        'epoch_size': None, 'sampling_method': 'balanced', 'sampling_granularity': 1,
        'partition_algo': 'relaxed', 'shuffle': True, 'shuffle_algo': 'py1e',
        'shuffle_seed': 11, 'shuffle_block_size': None, 'batch_size': 4,
        'batching_method': 'random', 'num_canonical_nodes': 1, 'replication': None}
    assert parts['worlds'] == [{'nodes': 1, 'ranks_per_node': 1}]
    assert parts['skips'] == []
    [stream] = parts['streams']
    assert stream['remote'] is None and stream['split'] is None
    assert stream['samples'] == 100 and stream['shards'] == ds.num_shards
    assert len(stream['index']) == 16  # xxh64 hex
    # The same data written again elsewhere has the same fingerprint.
    again = dataset(write(tmp_path / 'e', 100))
    take(again, 1)
    assert again.state_dict(0, True)['sluice_order']['parts']['streams'] == parts['streams']
    # A state survives JSON (what checkpoints hold) and resumes.
    resumed = dataset(root)
    resumed.load_state_dict(json.loads(json.dumps(state)))
    assert resumed.state_dict(0, False) == state


def expect_refusal(ds, state, text, **kwargs):
    with pytest.raises(ValueError) as e:
        ds.load_state_dict(state, **kwargs)
    assert str(e.value) == 'invalid argument: resume state does not match this dataset: ' + text


def test_refusal_names_each_changed_option(tmp_path, one_rank):
    root = write(tmp_path / 'd', 100)
    state = saved(root, 8)
    expect_refusal(dataset(root, batch_size=8), state,
                   'sampling batch_size changed: saved 4, now 8 (to resume anyway, adapt '
                   '"sampling")')
    expect_refusal(dataset(root, shuffle_algo='py1s', shuffle_block_size=64), state,
                   'sampling shuffle_algo changed: saved "py1e", now "py1s"; sampling '
                   'shuffle_block_size changed: saved null, now 64 (to resume anyway, adapt '
                   '"sampling")')
    expect_refusal(dataset(root, sampling_method='fixed', partition_algo='orig'), state,
                   'sampling sampling_method changed: saved "balanced", now "fixed"; sampling '
                   'partition_algo changed: saved "relaxed", now "orig" (to resume anyway, '
                   'adapt "sampling")')
    adapted = dataset(root, batch_size=8)
    adapted.load_state_dict(state, adapt=['sampling'])
    resaved = adapted.state_dict(0, False)
    assert resaved['sample_in_epoch'] == 8
    assert resaved['sluice_order']['parts']['sampling']['batch_size'] == 8
    # The state's seed and canonical nodes are adopted, as Mosaic's: no change.
    other_seed = dataset(root, shuffle_seed=5, num_canonical_nodes=3)
    other_seed.load_state_dict(state)
    assert other_seed.state_dict(0, False) == state


def test_refusal_names_the_stream_whose_data_changed(tmp_path, one_rank):
    root = write(tmp_path / 'd', 100)
    state = saved(root, 8)
    grown = dataset(write(tmp_path / 'g', 130))
    was = state['sluice_order']['parts']['streams'][0]
    now = saved(str(tmp_path / 'g'), 0)['sluice_order']['parts']['streams'][0]
    name = f'stream 0 ({tmp_path / "g"})'
    changes = [f'{name} shards changed: saved {was["shards"]}, now {now["shards"]}'] \
        if was['shards'] != now['shards'] else []
    changes += [f'{name} samples changed: saved 100, now 130',
                f'{name} index changed: saved "{was["index"]}", now "{now["index"]}"']
    expect_refusal(grown, state, '; '.join(changes) + ' (to resume anyway, adapt "streams")')
    grown.load_state_dict(state, adapt='streams')
    assert grown.state_dict(0, False)['sample_in_epoch'] == 8


def test_refusal_of_another_world_and_adapting_to_it(tmp_path, monkeypatch):
    root = write(tmp_path / 'd', 100)
    set_rank(monkeypatch, 0, 2)
    state = saved(root, 16, ranks=2)
    assert state['sluice_order']['parts']['worlds'] == [{'nodes': 2, 'ranks_per_node': 1}]
    set_rank(monkeypatch, 0, 1)
    expect_refusal(dataset(root), state,
                   'world changed: saved 2 nodes x 1 ranks per node, now 1 nodes x 1 ranks per '
                   'node (to resume anyway, adapt "world")')
    ds = dataset(root)
    ds.load_state_dict(state, adapt=('world',))
    worlds = ds.state_dict(0, False)['sluice_order']['parts']['worlds']
    assert worlds == [{'nodes': 2, 'ranks_per_node': 1}, {'nodes': 1, 'ranks_per_node': 1}]
    # What the elastic resume reads is Mosaic's: the rest of the global order
    # (the state's 2 canonical nodes, read by one node).
    whole = take(dataset(root, num_canonical_nodes=2), 100)
    assert take(ds, 100) == whole[16:]
    with pytest.raises(ValueError, match="adapt: unknown part 'seed'"):
        dataset(root).load_state_dict(state, adapt='seed')


def test_a_state_without_the_record_loads_as_before(tmp_path, one_rank):
    root = write(tmp_path / 'd', 100)
    mosaic = {'epoch': 0, 'sample_in_epoch': 20, 'num_canonical_nodes': 1, 'shuffle_seed': 11,
              'initial_physical_nodes': 1}
    whole = take(dataset(root), 100)
    ds = dataset(root, batch_size=2)  # other options: nothing to compare with
    ds.load_state_dict(mosaic)
    assert take(ds, 100) == whole[20:]


def test_an_edited_record_is_refused(tmp_path, one_rank):
    root = write(tmp_path / 'd', 100)
    state = saved(root, 8)
    state['sluice_order']['parts']['sampling']['batch_size'] = 2
    with pytest.raises(ValueError, match='sluice_order: its digest .* does not match its parts'):
        dataset(root).load_state_dict(state)


def rank_order(root, **kwargs):
    return take(dataset(root, **kwargs), 10 ** 6)


def test_skip_steps_leave_out_exactly_those_steps_on_one_rank(tmp_path, one_rank):
    root = write(tmp_path / 'd', 90)
    whole = rank_order(root)
    assert sorted(whole) == list(range(90))
    state = saved(root, 8)  # step 2 (global batch 4)
    ds = dataset(root)
    ds.load_state_dict(state, skip_steps=[(3, 5), (9, 10)])
    expected = whole[8:12] + whole[20:36] + whole[40:]
    assert take(ds, 10 ** 6) == expected
    # skip_samples says the same in sample_in_epoch's unit.
    ds = dataset(root)
    ds.load_state_dict(state, skip_samples=[(12, 20), (36, 40)])
    assert take(ds, 10 ** 6) == expected
    with pytest.raises(ValueError, match=r'skip_samples: \[12, 18\) is not whole steps'):
        dataset(root).load_state_dict(state, skip_samples=[(12, 18)])


def test_skip_steps_through_a_dataloader_with_workers_and_saved_states(tmp_path, one_rank):
    root = write(tmp_path / 'd', 90)
    whole = rank_order(root)
    state = saved(root, 8)
    expected = whole[8:12] + whole[20:]
    loader = sluice.StreamingDataLoader(dataset(root), batch_size=4, num_workers=2,
                                        collate_fn=ids)
    loader.load_state_dict(state, skip_steps=[(3, 5)])
    got = []
    for batch in loader:
        got += batch
        if len(got) == 8:  # steps 2 and 5: the position passed over steps 3, 4
            mid = loader.state_dict()
            assert mid['sample_in_epoch'] == 24
    assert got == expected
    # A state saved before the skipped steps skips them again.
    ds = dataset(root)
    ds.load_state_dict(state, skip_steps=[(3, 5)])
    early = ds.state_dict(0, False)
    assert early['sample_in_epoch'] == 8
    assert early['sluice_order']['parts']['skips'] == [[0, 12, 20]]
    again = dataset(root)
    again.load_state_dict(early)
    assert take(again, 10 ** 6) == expected
    later = dataset(root)
    later.load_state_dict(mid)
    assert take(later, 10 ** 6) == whole[24:]


def test_every_rank_skips_the_same_steps(tmp_path, monkeypatch):
    root = write(tmp_path / 'd', 96)
    whole, resumed = {}, {}
    for rank in (0, 1):
        set_rank(monkeypatch, rank, 2)
        whole[rank] = rank_order(root)
        assert len(whole[rank]) == 48
    set_rank(monkeypatch, 0, 2)
    state = saved(root, 8, ranks=2)  # step 1 of global batch 8
    for rank in (0, 1):
        set_rank(monkeypatch, rank, 2)
        ds = dataset(root)
        ds.load_state_dict(state, skip_steps=[(2, 4)])
        resumed[rank] = take(ds, 10 ** 6)
        # Rank r's k-th batch is step k: step 1, then steps 4.. on.
        assert resumed[rank] == whole[rank][4:8] + whole[rank][16:], rank
    skipped = set(whole[0][8:16]) | set(whole[1][8:16])
    assert len(skipped) == 16
    assert not skipped & (set(resumed[0]) | set(resumed[1]))
    assert sorted(skipped | set(resumed[0]) | set(resumed[1]) |
                  set(whole[0][:4]) | set(whole[1][:4])) == list(range(96))


def test_skip_sample_ids_skip_the_steps_holding_them_on_every_rank(tmp_path, monkeypatch):
    root = write(tmp_path / 'd', 96)
    whole = {}
    for rank in (0, 1):
        set_rank(monkeypatch, rank, 2)
        whole[rank] = rank_order(root)
    set_rank(monkeypatch, 0, 2)
    state = saved(root, 8, ranks=2)  # step 1 of global batch 8
    # Rank 1's step 2 and rank 0's step 5 (the id column is the sample id).
    bad = [whole[1][9], whole[0][22]]
    for rank in (0, 1):
        set_rank(monkeypatch, rank, 2)
        ds = dataset(root)
        ds.load_state_dict(state, skip_sample_ids=bad)
        assert ds.state_dict(0, False)['sluice_order']['parts']['skips'] == \
            [[0, 16, 24], [0, 40, 48]]
        assert take(ds, 10 ** 6) == whole[rank][4:8] + whole[rank][12:20] + whole[rank][24:], rank
    set_rank(monkeypatch, 0, 2)
    read = whole[1][2]  # step 0, before the state
    with pytest.raises(ValueError, match=rf'^invalid argument: skip_sample_ids: sample {read} is '
                                         rf'not read in epoch 0 after sample_in_epoch 8 '
                                         rf'\(read before the state was saved, or not a sample '
                                         rf'of this dataset\'s 96 per epoch\)$'):
        dataset(root).load_state_dict(state, skip_sample_ids=[read])
    with pytest.raises(ValueError, match=r"'skip_sample_ids' must be a list of sample ids"):
        dataset(root).load_state_dict(state, skip_sample_ids=[-1])


def test_assert_resume_exact_passes_for_an_exact_resume(tmp_path, one_rank):
    root = write(tmp_path / 'd', 60)
    points = assert_resume_exact(lambda: dataset(root), interruptions=3, seed=4)
    assert len(points) == 3 and points == sorted(points) and 0 < points[0]
    assert assert_resume_exact(lambda: dataset(root), num_workers=2, interruptions=2,
                               key=lambda s: int(s['id']))


class Forgetful(sluice.StreamingDataset):
    """Restarts from the beginning whatever state it is given (the silent
    resume bug of Hugging Face datasets #8308)."""

    def load_state_dict(self, obj, **kwargs):
        pass


def test_assert_resume_exact_catches_a_resume_that_restarts(tmp_path, one_rank):
    root = write(tmp_path / 'd', 60)
    points = assert_resume_exact(lambda: dataset(root), interruptions=2, seed=1)
    whole = rank_order(root)

    def forgetful():
        return Forgetful(local=root, batch_size=4, shuffle=True, shuffle_seed=11)
    with pytest.raises(AssertionError) as e:
        assert_resume_exact(forgetful, interruptions=2, seed=1, key=lambda s: int(s['id']))
    p = points[0]
    assert str(e.value) == (
        f'resume is not exact: position {p} differs (interrupted after {points} samples of '
        f'this rank (seed 1); it came from piece 1, resumed at {p}): uninterrupted '
        f'{whole[p]}, resumed {whole[0]}')


def test_assert_resume_exact_catches_a_factory_that_changes_the_seed(tmp_path, one_rank):
    root = write(tmp_path / 'd', 60)
    seeds = iter(range(100, 200))
    with pytest.raises(AssertionError, match='resume is not exact: position 0 differs'):
        assert_resume_exact(lambda: dataset(root, shuffle_seed=next(seeds)), interruptions=2,
                            key=lambda s: int(s['id']))


def test_the_c_abi_load_keeps_mosaics_elastic_resume(tmp_path, monkeypatch):
    """sluice_stream_load_state (no options) accepts another world, refuses
    other options."""
    root = write(tmp_path / 'd', 100)
    set_rank(monkeypatch, 0, 2)
    state = saved(root, 16, ranks=2)
    set_rank(monkeypatch, 0, 1)
    engine = dataset(root)._engine
    epoch, sie = ctypes.c_uint64(), ctypes.c_uint64()
    assert _lib.lib.sluice_stream_load_state(engine._ptr, json.dumps(state).encode(),
                                             ctypes.byref(epoch), ctypes.byref(sie)) == 0
    assert (epoch.value, sie.value) == (0, 16)
    other = dataset(root, batch_size=2)._engine
    status = _lib.lib.sluice_stream_load_state(other._ptr, json.dumps(state).encode(),
                                               ctypes.byref(epoch), ctypes.byref(sie))
    assert status != 0
    assert _lib.last_error() == (
        'invalid argument: resume state does not match this dataset: sampling batch_size '
        'changed: saved 4, now 2 (to resume anyway, adapt "sampling")')
