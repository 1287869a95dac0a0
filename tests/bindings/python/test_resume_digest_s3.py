"""The resume digest over a real S3 server (s3rver), with a mixture
schedule: a state saved over s3:// names each stream by its redacted remote
and the same index fingerprints as the local folders it was uploaded from,
resumes from another cache folder without adapting, refuses (naming the
stream and what changed) once the data under a remote changed, continues
exactly on another world size when told to adapt "world", and passes
sluice.testing.assert_resume_exact. A refusal names a stream by its
redacted remote, or by its folder when it has none."""
import json

import pytest

from sluice.testing import assert_resume_exact
from s3rver_fixture import SECRET, s3, s3rver  # noqa: F401
from test_training_control_s3 import loader, mixed, streams, upload, values_of, write  # noqa: F401

pytest.importorskip('torch')


def stop_at(ds, batches):
    """The first `batches` batches through two workers and the state there."""
    first = loader(ds)
    head = []
    for batch in first:
        head.append(values_of(batch))
        if len(head) == batches:
            return head, first.state_dict()
    raise AssertionError('the epoch ended first')


@pytest.fixture
def one_rank(monkeypatch):
    for name in ('RANK', 'WORLD_SIZE', 'LOCAL_WORLD_SIZE', 'LOCAL_RANK'):
        monkeypatch.delenv(name, raising=False)


def test_a_remote_state_resumes_from_another_cache_folder_MultiProcess(streams, tmp_path, one_rank):
    local, remote = streams
    whole = [values_of(b) for b in loader(mixed(local))]
    head, state = stop_at(mixed(remote, str(tmp_path / 'a')), 5)
    assert head == whole[:5] and state['sample_in_epoch'] == 20
    parts = state['sluice_order']['parts']
    assert [s['remote'] for s in parts['streams']] == remote
    _, local_state = stop_at(mixed(local), 5)
    assert [s['index'] for s in parts['streams']] == \
        [s['index'] for s in local_state['sluice_order']['parts']['streams']]
    assert parts['sampling'] == local_state['sluice_order']['parts']['sampling']
    assert SECRET not in json.dumps(state)
    # The cache folder is not part of the order: no adapt needed.
    again = loader(mixed(remote, str(tmp_path / 'b')))
    again.load_state_dict(state)
    assert head + [values_of(b) for b in again] == whole


def test_changed_data_under_a_remote_is_refused_by_stream_MultiProcess(streams, tmp_path, one_rank):
    local, remote = streams
    _, state = stop_at(mixed(remote, str(tmp_path / 'a')), 3)
    was = state['sluice_order']['parts']['streams'][1]
    # code's prefix now holds 36 samples (index.json overwritten).
    upload(write(str(tmp_path / 'code2'), range(1000, 1036)), remote[1])
    now = mixed(remote, str(tmp_path / 'b'))
    _, fresh = stop_at(mixed(remote, str(tmp_path / 'c')), 1)
    is_ = fresh['sluice_order']['parts']['streams'][1]
    assert is_['samples'] == 36 and is_['index'] != was['index']
    # Errors name a stream as the record does: by its redacted remote (the
    # cache folder is not part of the order), never by the cache.
    assert was['remote'] == remote[1]
    name = f'stream 1 ({remote[1]})'
    with pytest.raises(ValueError) as e:
        now.load_state_dict(state)
    assert str(e.value) == refusal(name, was, is_, 30, 36)
    assert str(tmp_path) not in str(e.value) and SECRET not in str(e.value)
    now.load_state_dict(state, adapt='streams')
    assert now.state_dict(0, False)['sample_in_epoch'] == 12


def refusal(name, was, is_, saved, now):
    """The text of a resume refused because stream `name`'s data changed."""
    changes = [f'{name} shards changed: saved {was["shards"]}, now {is_["shards"]}'] \
        if was['shards'] != is_['shards'] else []
    changes += [f'{name} samples changed: saved {saved}, now {now}',
                f'{name} index changed: saved "{was["index"]}", now "{is_["index"]}"']
    return ('invalid argument: resume state does not match this dataset: ' +
            '; '.join(changes) + ' (to resume anyway, adapt "streams")')


def test_changed_data_in_a_local_folder_is_refused_naming_the_folder_MultiProcess(tmp_path, one_rank):
    """A stream without a remote is named by its folder."""
    local = [write(str(tmp_path / name), range(first, first + n))
             for name, first, n in (('web', 0, 40), ('code', 1000, 30), ('math', 2000, 20))]
    _, state = stop_at(mixed(local), 3)
    was = state['sluice_order']['parts']['streams'][1]
    assert was['remote'] is None
    grown = write(str(tmp_path / 'code2'), range(1000, 1036))
    roots = [local[0], grown, local[2]]
    _, fresh = stop_at(mixed(roots), 1)
    is_ = fresh['sluice_order']['parts']['streams'][1]
    with pytest.raises(ValueError) as e:
        mixed(roots).load_state_dict(state)
    assert str(e.value) == refusal(f'stream 1 ({grown})', was, is_, 30, 36)


def test_another_world_size_continues_exactly(streams, tmp_path, monkeypatch):
    """Saved on one rank at position 20, resumed on two (one rank per node):
    rank r reads positions 20 + r, 22 + r, ... of the one-rank order, from
    s3:// as from the local folders."""
    local, remote = streams
    for name in ('RANK', 'WORLD_SIZE', 'LOCAL_WORLD_SIZE', 'LOCAL_RANK'):
        monkeypatch.delenv(name, raising=False)
    whole = [int(s['value']) for s in mixed(local, batch_size=1)]
    assert len(whole) == 48
    ds = mixed(remote, str(tmp_path / 'one'), batch_size=1)
    head = []
    for s in ds:
        head.append(int(s['value']))
        if len(head) == 20:
            break
    state = ds.state_dict(20, True)
    assert head == whole[:20]
    monkeypatch.setenv('WORLD_SIZE', '2')
    monkeypatch.setenv('LOCAL_WORLD_SIZE', '1')
    monkeypatch.setenv('LOCAL_RANK', '0')
    for rank in (0, 1):
        monkeypatch.setenv('RANK', str(rank))
        two = mixed(remote, str(tmp_path / f'two{rank}'), batch_size=1)
        with pytest.raises(ValueError, match=r'world changed: saved 1 nodes x 1 ranks per node, now 2 '
                                             r'nodes x 1 ranks per node \(to resume anyway, adapt "world"\)$'):
            two.load_state_dict(state)
        two.load_state_dict(state, adapt='world')
        assert two.state_dict(0, False)['sluice_order']['parts']['worlds'] == \
            [{'nodes': 1, 'ranks_per_node': 1}, {'nodes': 2, 'ranks_per_node': 1}]
        assert [int(s['value']) for s in two] == whole[20:][rank::2], rank


@pytest.mark.parametrize('workers', [0, 2])
def test_assert_resume_exact_over_s3_MultiProcess(streams, tmp_path, one_rank, workers):
    """The users' CI helper on a schedule read from s3://, each dataset it
    makes with a cache folder of its own."""
    _, remote = streams
    made = []

    def make():
        made.append(str(tmp_path / f'cache{len(made)}'))
        return mixed(remote, made[-1])

    points = assert_resume_exact(make, interruptions=3, seed=4, num_workers=workers,
                                 key=lambda s: int(s['value']))
    assert len(points) == 3 and len(set(made)) == len(made) >= 5
    if workers:
        assert all(p % 4 == 0 for p in points)  # whole batches
