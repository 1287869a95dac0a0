"""Mixture schedules from Python: StreamingDataset(streams=..., mixture=...,
epoch_size=...) yields the schedule's exact order (hand-checked below),
resumes mid-schedule from a state_dict (on the same world and on two
ranks), and the engine's errors reach the caller as ValueError."""
import pytest

import sluice
from sluice.world import World


def write(folder, values, size_limit=None):
    kwargs = {'size_limit': size_limit} if size_limit else {}
    with sluice.MDSWriter(out=folder, columns={'value': 'int'}, **kwargs) as w:
        for v in values:
            w.write({'value': v})
    return folder


@pytest.fixture
def streams(tmp_path):
    web = write(str(tmp_path / 'web'), range(0, 6))
    code = write(str(tmp_path / 'code'), range(100, 104))
    math = write(str(tmp_path / 'math'), range(200, 203))
    return [web, code, math]


def values(ds):
    return [int(s['value']) for s in ds]


def make(folders, **kwargs):
    return sluice.StreamingDataset(streams=[sluice.Stream(local=f) for f in folders],
                                   batch_size=1, num_canonical_nodes=1, **kwargs)


def ids_collate(batch):
    return [int(s['value']) for s in batch]


def test_step_schedule_order(streams):
    # Weights 2:1:1 until 4 samples seen, then math alone. Streams by the
    # largest-deficit rule (targets after t+1 samples, ties to the lower index):
    # t=0 (.5,.25,.25) web; t=1 (1,.5,.5) code; t=2 (1.5,.75,.75) math;
    # t=3 (2,1,1) web; then math: 201, 202, and its second pass 200, 201.
    ds = make(streams, epoch_size=8, mixture=[(0, [2, 1, 1]), (4, [0, 0, 1])])
    assert values(ds) == [0, 100, 200, 1, 201, 202, 200, 201]
    assert ds.epoch_size == 8 and len(ds) == 8


def test_linear_schedule_order(streams):
    # web -> code linearly over 4 samples: T_web = x - x^2/8, T_code = x^2/8:
    # t=0 web (7/8 vs 1/8), t=1 tie at 1/2 -> web, then code from t=2 on
    # (T_web stays 2 after 4 samples); code wraps to its second pass.
    ds = make(streams[:2], epoch_size=7, mixture=[(0, [1, 0]), (4, [0, 1])],
              mixture_interpolation='linear')
    assert values(ds) == [0, 1, 100, 101, 102, 103, 100]
    step = make(streams[:2], epoch_size=7, mixture=[(0, [1, 0]), (4, [0, 1])])
    assert values(step) == [0, 1, 2, 3, 100, 101, 102]


def test_the_python_plan_is_the_engines(streams):
    ds = make(streams, epoch_size=40, shuffle=True, shuffle_seed=11,
              mixture=[(0, [0.7, 0.2, 0.1]), (20, [0.1, 0.3, 0.6])], mixture_interpolation='linear')
    got = values(ds)
    plan_ids = ds.plan(world=World()).worker_ids(0, 0, 0).tolist()
    offsets = {0: 0, 1: 100 - 6, 2: 200 - 10}  # global id -> value
    stream_of = lambda i: 0 if i < 6 else 1 if i < 10 else 2  # noqa: E731
    assert got == [i + offsets[stream_of(i)] for i in plan_ids]
    # Each stream's draws, pass by pass, hold each of its samples once.
    for low, n in ((0, 6), (100, 4), (200, 3)):
        mine = [v for v in got if low <= v < low + 100]
        for at in range(0, len(mine) - n + 1, n):
            assert sorted(mine[at:at + n]) == list(range(low, low + n))


def test_resume_mid_schedule(streams, monkeypatch):
    kwargs = dict(epoch_size=30, shuffle=True, shuffle_seed=5,
                  mixture=[(0, [1, 1, 1]), (12, [0, 1, 4])], mixture_interpolation='linear')
    whole = values(make(streams, **kwargs))
    for stop in (1, 7, 12, 13, 29):
        loader = sluice.StreamingDataLoader(make(streams, **kwargs), batch_size=1,
                                            collate_fn=ids_collate)
        seen = []
        for i, batch in enumerate(loader):
            seen += batch
            if i + 1 == stop:
                state = loader.state_dict()
                break
        assert state['sample_in_epoch'] == stop
        again = sluice.StreamingDataLoader(make(streams, **kwargs), batch_size=1,
                                           collate_fn=ids_collate)
        again.load_state_dict(state)
        assert seen + [v for b in again for v in b] == whole, stop
    # The same state resumed on two ranks (two nodes): rank r reads positions
    # stop + r, stop + r + 2, ... of the same sequence, up to 30 rounded up
    # to a multiple of the ranks (position 30 continues the sequence).
    stop = 13
    state = {'epoch': 0, 'sample_in_epoch': stop, 'num_canonical_nodes': 1,
             'shuffle_seed': 5, 'initial_physical_nodes': 1}
    longer = values(make(streams, **dict(kwargs, epoch_size=32)))  # the continuation
    assert longer[:30] == whole
    monkeypatch.setenv('WORLD_SIZE', '2')
    for rank in (0, 1):
        monkeypatch.setenv('RANK', str(rank))
        ds = make(streams, **kwargs)
        ds.load_state_dict(state)
        assert values(ds) == longer[stop + rank:31:2], rank


@pytest.mark.parametrize(('kwargs', 'message'), [
    ({'mixture': [(0, [1, 1, 1])]},
     'mixture: epoch_size is required with a mixture schedule (its points are samples seen in '
     'the epoch)'),
    ({'epoch_size': 10, 'mixture': [(0, [1, 1])]}, 'mixture: point 0 has 2 weights for 3 streams'),
    ({'epoch_size': 10, 'mixture': [(0, [1, -1, 1])]},
     "mixture: point 0's weight 1 is negative (-1)"),
    ({'epoch_size': 10, 'mixture': [(0, [0, 0, 0])]}, "mixture: point 0's weights are all zero"),
    ({'epoch_size': 10, 'mixture': [(0, [1, 1, 1]), (0, [1, 2, 1])]},
     'mixture: points must be strictly increasing in samples seen: point 1 at 0 follows point 0 '
     'at 0'),
    ({'epoch_size': 10, 'mixture': [(0, [1, 1, 1])], 'mixture_interpolation': 'cubic'},
     "mixture_interpolation must be 'step' or 'linear', got 'cubic'"),
    ({'epoch_size': 10, 'mixture_interpolation': 'linear'},
     "invalid argument: dataset config: 'mixture_interpolation' is set without a 'mixture'"),
])
def test_engine_errors_reach_python(streams, kwargs, message):
    with pytest.raises(ValueError) as e:
        make(streams, **kwargs)
    assert str(e.value) == message


def test_dataloader_workers_read_the_same_sequence(streams):
    kwargs = dict(epoch_size=30, shuffle=True, shuffle_seed=5,
                  mixture=[(0, [1, 1, 1]), (12, [0, 1, 4])], mixture_interpolation='linear')
    whole = values(make(streams, **kwargs))
    ds = sluice.StreamingDataset(streams=[sluice.Stream(local=f) for f in streams], batch_size=4,
                                 num_canonical_nodes=1, **kwargs)
    loader = sluice.StreamingDataLoader(ds, batch_size=4, num_workers=2, collate_fn=ids_collate)
    # Worker w holds batches w, w + 2, ... of the rank's sequence; the loader
    # takes them in turn, so the batches come in sequence order.
    assert [v for b in loader for v in b] == whole


def test_a_state_records_the_schedule(streams):
    kwargs = dict(epoch_size=20, shuffle=True, shuffle_seed=5, mixture=[(0, [1, 1, 1]), (8, [0, 1, 4])])
    loader = sluice.StreamingDataLoader(make(streams, **kwargs), batch_size=1, collate_fn=ids_collate)
    for i, _ in enumerate(loader):
        if i + 1 == 6:
            state = loader.state_dict()
            break
    other = make(streams, **dict(kwargs, mixture=[(0, [1, 1, 1]), (9, [0, 1, 4])]))
    with pytest.raises(ValueError) as e:
        other.load_state_dict(state)
    assert 'sampling mixture changed' in str(e.value)
    linear = make(streams, **dict(kwargs, mixture_interpolation='linear'))
    with pytest.raises(ValueError) as e:
        linear.load_state_dict(state)
    assert 'sampling mixture_interpolation changed' in str(e.value)
    # Told to adapt, the new schedule takes over at sample 6, the past kept
    # (test_mixture_change.py has the exact orders).
    other.load_state_dict(state, adapt='sampling')
    assert len(values(other)) == 14
    same = make(streams, **kwargs)
    same.load_state_dict(state)
    assert len(values(same)) == 14
