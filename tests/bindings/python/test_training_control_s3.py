"""The training controls over a real S3 server (s3rver): a mixture schedule
through DataLoader workers and its resume mid-schedule, skipped steps (by
step and by sample id) and per-batch provenance read the same samples, in
the same order, from s3:// as from the local folders they were uploaded
from."""
import glob
import os

import pytest

import sluice
from sluice.remote import remote_write
from s3rver_fixture import s3, s3rver  # noqa: F401

torch = pytest.importorskip('torch')

MIXTURE = dict(epoch_size=48, shuffle=True, shuffle_seed=5,
               mixture=[(0, [1, 1, 1]), (20, [0, 1, 4])], mixture_interpolation='linear')


def write(folder, values):
    with sluice.MDSWriter(out=folder, columns={'value': 'int'}, size_limit=1 << 8) as w:
        for v in values:
            w.write({'value': v})
    return folder


def upload(folder, url):
    for path in sorted(glob.glob(folder + '/*')):
        with open(path, 'rb') as f:
            remote_write(url, os.path.basename(path), f.read())


@pytest.fixture
def streams(tmp_path, s3):
    """(local folders, s3 URLs) of three streams of several shards each."""
    local, remote = [], []
    for name, first, n in (('web', 0, 40), ('code', 1000, 30), ('math', 2000, 20)):
        folder = write(str(tmp_path / name), range(first, first + n))
        url = f'{s3}/control-{tmp_path.name}-{name}'
        upload(folder, url)
        local.append(folder)
        remote.append(url)
    return local, remote


def mixed(roots, cache=None, batch_size=4, **kwargs):
    if cache is None:
        made = [sluice.Stream(local=r) for r in roots]
    else:
        made = [sluice.Stream(remote=r, local=os.path.join(cache, str(i)))
                for i, r in enumerate(roots)]
    return sluice.StreamingDataset(streams=made, batch_size=batch_size, num_canonical_nodes=1,
                                   **dict(MIXTURE, **kwargs))


def values_of(batch):
    return [int(v) for v in batch['value']]


def loader(ds):
    return sluice.StreamingDataLoader(ds, batch_size=4, num_workers=2)


def read(ds):
    return [values_of(b) for b in loader(ds)]


def test_a_schedule_through_workers_and_its_resume(streams, tmp_path):
    local, remote = streams
    whole = read(mixed(local))
    assert len(whole) == 12 and sum(map(len, whole)) == 48
    assert read(mixed(remote, str(tmp_path / 'c0'))) == whole
    for stop in (3, 5, 8):
        first = loader(mixed(remote, str(tmp_path / f'a{stop}')))
        head = []
        for batch in first:
            head.append(values_of(batch))
            if len(head) == stop:
                state = first.state_dict()
                break
        assert state['sample_in_epoch'] == 4 * stop
        again = loader(mixed(remote, str(tmp_path / f'b{stop}')))
        again.load_state_dict(state)
        assert head + [values_of(b) for b in again] == whole, stop


def test_a_schedule_changed_at_a_checkpoint_MultiProcess(streams, tmp_path):
    """adapt='schedule' over s3:// through workers: the past kept, the same
    continuation as from the local folders."""
    local, remote = streams
    new = dict(mixture=[(0, [3, 0, 1]), (40, [1, 1, 1])])

    def change(roots, cache):
        first = loader(mixed(roots, cache and cache + '-a'))
        head = []
        for batch in first:
            head.append(values_of(batch))
            if len(head) == 4:
                state = first.state_dict()
                break
        again = loader(mixed(roots, cache and cache + '-b', **new))
        with pytest.raises(ValueError, match=r'adapt "schedule"\)$'):
            again.load_state_dict(state)
        again.load_state_dict(state, adapt='schedule')
        return head, [values_of(b) for b in again]

    head, rest = change(local, None)
    assert (head, rest) == change(remote, str(tmp_path / 'change'))
    assert head == read(mixed(local))[:4] and sum(map(len, rest)) == 48 - 16
    assert rest != read(mixed(local))[4:]
    # No sample of a stream twice before its pass ends.
    order = [v for b in head + rest for v in b]
    for low, n in ((0, 40), (1000, 30), (2000, 20)):
        mine = [v for v in order if low <= v < low + n]
        assert len(set(mine)) == len(mine), low


def test_skips_by_step_and_by_sample_id(streams, tmp_path):
    local, remote = streams
    whole = [v for b in read(mixed(local)) for v in b]
    state = {'epoch': 0, 'sample_in_epoch': 8, 'num_canonical_nodes': 1, 'shuffle_seed': 5,
             'initial_physical_nodes': 1}
    expected = whole[8:12] + whole[20:]  # steps 3 and 4 left out
    by_steps = mixed(remote, str(tmp_path / 's'))
    by_steps.load_state_dict(state, skip_steps=[(3, 5)])
    assert [v for b in read(by_steps) for v in b] == expected
    # Steps named by samples they hold (the ids the local run gives): every
    # step after the state holding one goes, also where the schedule reads
    # a sample twice (math's 20 samples come around again at weight 4).
    ids = [int(i) for b in mixed(local).iter_batches(4, with_ids=True) for i in b['sample_id']]
    bad = [ids[13], ids[19]]
    steps = {k // 4 for k in range(8, 48) if ids[k] in bad}
    assert {3, 4} <= steps
    by_ids = mixed(remote, str(tmp_path / 'i'))
    by_ids.load_state_dict(state, skip_sample_ids=bad)
    assert [v for b in read(by_ids) for v in b] == \
        [whole[k] for k in range(8, 48) if k // 4 not in steps]


def test_provenance_of_remote_batches(streams, tmp_path):
    local, remote = streams
    here = mixed(local)
    there = mixed(remote, str(tmp_path / 'p'))
    near = list(here.iter_batches(4, with_ids=True))
    far = list(there.iter_batches(4, with_ids=True))
    assert [b['sample_id'].tolist() for b in far] == [b['sample_id'].tolist() for b in near]
    assert [b['value'].tolist() for b in far] == [b['value'].tolist() for b in near]
    ids = [i for b in far for i in b['sample_id'].tolist()]
    origins = there.sample_origins(ids)
    assert origins == here.sample_origins(ids)
    # Each value names its stream (0.., 1000.., 2000..) and the origin agrees.
    values = [v for b in far for v in b['value'].tolist()]
    assert [o['stream'] for o in origins] == [v // 1000 for v in values]
