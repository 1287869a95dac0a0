"""A mixture schedule changed at a checkpoint, the past kept:
load_state_dict(state, adapt='schedule') on a dataset built with a new
schedule. The samples consumed stay as they were; from the state's position
on, the new schedule's weights decide, and each stream goes on with its
shuffled passes where it stopped (no sample of a stream twice before its
pass ends). Hand-checked orders, two changes, DataLoader workers, another
world, and the refusal without adapt (exact text)."""
import pytest

import sluice
from sluice.world import World

OLD = [(0, [2, 1, 1]), (4, [0, 0, 1])]
CODE_ONLY = [(0, [0, 1, 0])]
WEB_AND_MATH = [(0, [1, 0, 1])]


def write(folder, values):
    with sluice.MDSWriter(out=folder, columns={'value': 'int'}) as w:
        for v in values:
            w.write({'value': v})
    return folder


@pytest.fixture
def streams(tmp_path):
    return [write(str(tmp_path / 'web'), range(0, 6)), write(str(tmp_path / 'code'), range(100, 104)),
            write(str(tmp_path / 'math'), range(200, 203))]


def make(folders, mixture, batch_size=1, **kwargs):
    return sluice.StreamingDataset(streams=[sluice.Stream(local=f) for f in folders], batch_size=batch_size,
                                   num_canonical_nodes=1, mixture=mixture, **kwargs)


def ids_collate(batch):
    return [int(s['value']) for s in batch]


def take(ds, n, **load):
    """The first n samples of ds (after load_state_dict(**load) when given) and the state there."""
    loader = sluice.StreamingDataLoader(ds, batch_size=1, collate_fn=ids_collate)
    if load:
        loader.load_state_dict(load.pop('state'), **load)
    seen = []
    for batch in loader:
        seen += batch
        if len(seen) == n:
            return seen, loader.state_dict()
    return seen, None


def test_a_change_keeps_the_past(streams):
    # OLD draws web code math (0 100 200); from position 3 code alone: code
    # has drawn one sample, so it goes on with 101 102 103, then its second
    # pass 100 101. (Replaying the new schedule from 0 would start at 103.)
    assert [int(s['value']) for s in make(streams, OLD, epoch_size=8)] == [0, 100, 200, 1, 201, 202, 200, 201]
    head, state = take(make(streams, OLD, epoch_size=8), 3)
    assert head == [0, 100, 200]
    rest, _ = take(make(streams, CODE_ONLY, epoch_size=8), 5, state=state, adapt='schedule')
    assert rest == [101, 102, 103, 100, 101]
    # The planner offline (plan(), as provenance and prefetching use it)
    # gives the same epoch: the replaced schedule comes from the engine.
    ds = make(streams, CODE_ONLY, epoch_size=8)
    ds.load_state_dict(state, adapt='schedule')
    value = lambda i: i if i < 6 else 94 + i if i < 10 else 190 + i  # noqa: E731  global id -> value
    assert [value(i) for i in ds.plan(world=World()).worker_ids(0, 0, 0)] == [0, 100, 200, 101, 102, 103,
                                                                              100, 101]
    # adapt='sampling' accepts it too, the same way.
    rest, _ = take(make(streams, CODE_ONLY, epoch_size=8), 5, state=state, adapt='sampling')
    assert rest == [101, 102, 103, 100, 101]


def test_the_refusal_names_the_schedule(streams):
    _, state = take(make(streams, OLD, epoch_size=8), 3)
    with pytest.raises(ValueError) as e:
        make(streams, CODE_ONLY, epoch_size=8).load_state_dict(state)
    assert str(e.value) == (
        'invalid argument: resume state does not match this dataset: sampling mixture changed: saved '
        '[[0, [2.0, 1.0, 1.0]], [4, [0.0, 0.0, 1.0]]], now [[0, [0.0, 1.0, 0.0]]] (to resume anyway, adapt '
        '"schedule")')
    with pytest.raises(ValueError) as e:
        make(streams, CODE_ONLY, epoch_size=8, shuffle_block_size=4).load_state_dict(state, adapt='schedule')
    assert str(e.value) == (
        'invalid argument: resume state does not match this dataset: sampling shuffle_block_size changed: '
        'saved null, now 4 (to resume anyway, adapt "sampling")')
    with pytest.raises(ValueError, match=r"^invalid argument: adapt: unknown part 'mixture' \(the parts are 'world', 'streams', "
                                         r"'sampling', 'schedule'\)$"):
        make(streams, CODE_ONLY, epoch_size=8).load_state_dict(state, adapt='mixture')


def test_two_changes(streams):
    _, first = take(make(streams, OLD, epoch_size=8), 3)
    mid, second = take(make(streams, CODE_ONLY, epoch_size=8), 2, state=first, adapt='schedule')
    assert mid == [101, 102] and second['sample_in_epoch'] == 5
    # From 5, web and math 1:1 (ties to the lower stream): web goes on at
    # its second sample, math at its second.
    rest, _ = take(make(streams, WEB_AND_MATH, epoch_size=8), 3, state=second, adapt='schedule')
    assert rest == [1, 201, 2]
    # The state saved under the second schedule carries the first change:
    # resumed on that schedule, no adapt is needed and the past is replayed.
    again, _ = take(make(streams, CODE_ONLY, epoch_size=8), 3, state=second)
    assert again == [103, 100, 101]
    assert second['sluice_order']['parts']['mixture_past'] == [
        {'epoch': 0, 'until': 3, 'mixture': [[0, [2.0, 1.0, 1.0]], [4, [0.0, 0.0, 1.0]]],
         'mixture_interpolation': 'step'}]


SHUFFLED = dict(epoch_size=60, shuffle=True, shuffle_seed=7, mixture_interpolation='linear')
FIRST = [(0, [1, 1, 1]), (30, [0, 1, 4])]
SECOND = [(0, [4, 1, 0]), (50, [1, 1, 1])]


def per_stream_passes_hold_each_sample_once(order):
    for low, n in ((0, 6), (100, 4), (200, 3)):
        mine = [v for v in order if low <= v < low + 100]
        for at in range(0, len(mine), n):
            part = mine[at:at + n]
            assert len(set(part)) == len(part), (low, at, mine)


def test_workers_and_another_world_continue_the_same_order_MultiProcess(streams, monkeypatch):
    head, state = take(make(streams, FIRST, **SHUFFLED), 20)
    rest, _ = take(make(streams, SECOND, **SHUFFLED), 40, state=state, adapt='schedule')
    per_stream_passes_hold_each_sample_once(head + rest)
    old_rest, _ = take(make(streams, FIRST, **SHUFFLED), 40, state=state)
    assert rest != old_rest
    # DataLoader workers (batch 4, so adapt "sampling" too; 2 workers) read
    # the same continuation: the sequence does not depend on the batching.
    ds = make(streams, SECOND, batch_size=4, **SHUFFLED)
    loader = sluice.StreamingDataLoader(ds, batch_size=4, num_workers=2, collate_fn=ids_collate)
    loader.load_state_dict(state, adapt=('schedule', 'sampling'))
    assert [v for b in loader for v in b] == rest
    # Two ranks (two nodes): rank r reads positions 20 + r, 22 + r, ...
    monkeypatch.setenv('WORLD_SIZE', '2')
    for rank in (0, 1):
        monkeypatch.setenv('RANK', str(rank))
        ds = make(streams, SECOND, **SHUFFLED)
        with pytest.raises(ValueError, match=r'adapt "world", "schedule"\)$'):
            ds.load_state_dict(state)
        ds.load_state_dict(state, adapt=('world', 'schedule'))
        assert [int(s['value']) for s in ds] == rest[rank::2], rank
