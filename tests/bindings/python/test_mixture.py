"""Mixture schedules from Python: StreamingDataset(streams=..., mixture=...,
epoch_size=...) yields the schedule's exact order (hand-checked below),
resumes mid-schedule from a state_dict (on the same world and on two
ranks), keeps every stream's count within one sample of its target for any
number of streams (Tijdeman's rule), resumes a state saved under the rule
before it with that rule, and the engine's errors reach the caller as
ValueError."""
import copy
import json
import random
from fractions import Fraction

import pytest

import sluice
from sluice.hashing import get_hash
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
    # Weights 2:1:1 until 4 samples seen, then math alone. Streams by
    # Tijdeman's rule (targets after t+1 samples; eligible when target -
    # count >= 1/4, then the earliest time the target reaches count + 3/4):
    # t=0 (.5,.25,.25) all eligible, due (2,3,3): web; t=1 (1,.5,.5) code and
    # math, due 3 and 3: code; t=2 (1.5,.75,.75) web due 4, math due 3: math;
    # t=3 (2,1,1) web; then math: 201, 202, and its second pass 200, 201.
    ds = make(streams, epoch_size=8, mixture=[(0, [2, 1, 1]), (4, [0, 0, 1])])
    assert values(ds) == [0, 100, 200, 1, 201, 202, 200, 201]
    assert ds.epoch_size == 8 and len(ds) == 8


def test_linear_schedule_order(streams):
    # web -> code linearly over 4 samples: T_web = x - x^2/8, T_code = x^2/8:
    # t=0 web (7/8 vs 1/8 < 1/2), t=1 both eligible and due at 2 -> web, then
    # code from t=2 on
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


def target(mixture, linear, stream, t):
    """The exact cumulative target of `stream` after t samples (the weights
    normalised per point; step or linear between points)."""
    shares = [[Fraction(w) / sum(Fraction(x) for x in ws) for w in ws] for _, ws in mixture]
    out = Fraction(0)
    for k, (at, _) in enumerate(mixture):
        end = mixture[k + 1][0] if k + 1 < len(mixture) else None
        if t <= at:
            break
        x = min(t, end) - at if end is not None else t - at
        q0 = shares[k][stream]
        if linear and end is not None:
            slope = (shares[k + 1][stream] - q0) / (end - at)
            out += x * q0 + slope * x * x / 2
        else:
            out += x * q0
    return out


@pytest.fixture
def twelve_streams(tmp_path):
    return [write(str(tmp_path / f's{i}'), range(100 * i, 100 * i + 4)) for i in range(12)]


def test_counts_stay_within_one_sample_of_the_schedule_for_any_number_of_streams(twelve_streams):
    rng = random.Random(39)
    for n in range(2, 13):
        for linear in (False, True):
            mixture, at = [], 0
            for k in range(5):
                weights = [0 if rng.random() < 0.3 else rng.random() for _ in range(n)]
                weights[k % n] += 0.5
                mixture.append((at, weights))
                at += rng.randint(1, 60)
            epoch = at + 40
            ds = make(twelve_streams[:n], epoch_size=epoch, mixture=mixture,
                      mixture_interpolation='linear' if linear else 'step')
            counts = [0] * n
            bound = 1 - Fraction(1, 2 * n - 2) + Fraction(1, 10**9)  # + the 2^-48 quantisation
            for t, v in enumerate(values(ds), start=1):
                counts[v // 100] += 1
                for i in range(n):
                    assert abs(counts[i] - target(mixture, linear, i, t)) <= bound, (n, linear, t, i)
            assert t == epoch


def deficit_rule_state(state):
    """`state` as a Sluice before Tijdeman's rule saved it: its record names
    no rule (the digest recomputed as the engine computes it)."""
    state = copy.deepcopy(state)
    parts = state['sluice_order']['parts']
    del parts['sampling']['mixture_rule']
    state['sluice_order']['digest'] = get_hash('xxh64', json.dumps(parts, sort_keys=True).encode())
    return state


def test_a_state_saved_under_the_rule_before_resumes_with_it(streams):
    # (0: [1, 1, 2]) to (8: [1, 1, 0]), linear: the streams by Tijdeman's rule
    # are math, web, code, web, code, math, web, code, ...; by the largest
    # deficit math, web, code, math, web, code, web, code, ...
    # (tests/engine/planner/mixture_schedule_test.cc derives both).
    kwargs = dict(epoch_size=12, mixture=[(0, [1, 1, 2]), (8, [1, 1, 0])], mixture_interpolation='linear')
    tijdeman = [200, 0, 100, 1, 101, 201, 2, 102, 3, 103, 4, 100]
    deficit = [200, 0, 100, 201, 1, 101, 2, 102, 3, 103, 4, 100]
    assert values(make(streams, **kwargs)) == tijdeman
    loader = sluice.StreamingDataLoader(make(streams, **kwargs), batch_size=1, collate_fn=ids_collate)
    for i, _ in enumerate(loader):
        if i + 1 == 3:
            state = loader.state_dict()
            break
    assert state['sluice_order']['parts']['sampling']['mixture_rule'] == 'tijdeman'
    again = make(streams, **kwargs)
    again.load_state_dict(state)
    assert values(again) == tijdeman[3:]
    old = make(streams, **kwargs)
    old.load_state_dict(deficit_rule_state(state))
    assert values(old) == deficit[3:]
    # The offline planner plans the resumed epoch by the state's rule too.
    ids = old.plan(world=World()).worker_ids(0, 0, 0).tolist()
    offsets = {0: 0, 1: 100 - 6, 2: 200 - 10}  # global id -> value
    assert [i + offsets[0 if i < 6 else 1 if i < 10 else 2] for i in ids] == deficit
    assert again.plan(world=World()).worker_ids(0, 0, 0).tolist() != ids
    # Its own states keep the rule they resumed with.
    assert 'mixture_rule' not in old.state_dict(3, False)['sluice_order']['parts']['sampling']


def test_the_rule_of_a_state_is_the_engines():
    """Python asks the engine what a state's record draws its schedule by
    (sluice_recorded_mixture_rule) instead of writing the default itself:
    a schedule recorded without "mixture_rule" is the engine's 'deficit'."""
    schedule = [[0, [1.0, 1.0]]]
    assert sluice.plan.recorded_mixture_rule({'mixture': schedule}) == 'deficit'
    assert sluice.plan.recorded_mixture_rule({'mixture': schedule, 'mixture_rule': 'tijdeman'}) == 'tijdeman'
    assert sluice.plan.recorded_mixture_rule({'shuffle': True}) is None
    with pytest.raises(ValueError, match="'parts.sampling.mixture_rule' must be 'tijdeman' or 'deficit'"):
        sluice.plan.recorded_mixture_rule({'mixture': schedule, 'mixture_rule': 'fair'})
