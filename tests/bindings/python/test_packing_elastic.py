"""An elastic resume of packed rows (docs/resumption.rst, "Elastic packed
resume"): a packed state saved on one world shape resumes on another
(load_state_dict(adapt='world')), and every token of the epoch comes out
exactly once across the change: the rows consumed before the checkpoint,
then the rest, re-formed over the new shape's ranks and workers."""
import glob
import os

import numpy as np
import pytest

from sluice import MDSWriter, StreamingDataset
from sluice.remote import remote_write
from s3rver_fixture import s3, s3rver  # noqa: F401

torch = pytest.importorskip('torch')

ELASTIC_DOCS = 60
ELASTIC_SEQ_LEN = 8


def elastic_doc(i):
    """Document i: 1 + (7 i mod 19) tokens i * 100 + 1, + 2, ...: every token
    unique, none 0 (eos and padding)."""
    return np.arange(1, 2 + (7 * i) % 19, dtype=np.int32) + 100 * i


def write_docs(out, doc):
    """ELASTIC_DOCS documents doc(0), doc(1), .. as MDS, several shards."""
    with MDSWriter(out=out, columns={'tokens': 'ndarray:int32'}, size_limit=300) as w:
        for i in range(ELASTIC_DOCS):
            w.write({'tokens': doc(i)})
    return out


@pytest.fixture
def elastic_data(tmp_path):
    return write_docs(str(tmp_path / 'mds'), elastic_doc)


def elastic_dataset(local, **pack):
    spec = dict(column='tokens', seq_len=ELASTIC_SEQ_LEN, eos_id=0, pad_id=0, drop_last=False)
    spec.update(pack)
    return StreamingDataset(local=local, batch_size=2, pack=spec)


def set_ranks(monkeypatch, ranks, rank, one_node=True):
    """Rank `rank` of `ranks`, all on one node or each its own node."""
    monkeypatch.setenv('WORLD_SIZE', str(ranks))
    if one_node:
        monkeypatch.setenv('LOCAL_WORLD_SIZE', str(ranks))
    else:
        monkeypatch.delenv('LOCAL_WORLD_SIZE', raising=False)
    monkeypatch.setenv('RANK', str(rank))


def uneven_doc(i):
    """Like elastic_doc, but the documents of every other batch of 2 (those
    of DataLoader worker 1 of 2 on one rank) are longer, up to 41 tokens:
    worker 0 runs out of rows long before worker 1 (41 rows against 94
    under concat)."""
    if (i // 2) % 2 == 0:
        return elastic_doc(i)
    return np.arange(1, 3 + (5 * i) % 40, dtype=np.int32) + 100 * i


@pytest.fixture
def uneven_data(tmp_path):
    return write_docs(str(tmp_path / 'uneven'), uneven_doc)


def assert_every_token_once(rows, doc=elastic_doc):
    got = np.sort(np.concatenate([np.asarray(r).ravel() for r in rows]))
    got = got[got != 0]
    want = np.sort(np.concatenate([doc(i) for i in range(ELASTIC_DOCS)]))
    assert got.tolist() == want.tolist()


def stack_tokens(rows):
    return np.stack([r['tokens'] for r in rows])


def take(it, n):
    return [next(it)['tokens'] for _ in range(n)]


# bin in windows of 4 documents: a checkpoint falls before, inside and at
# the end of a window.
METHODS = {'concat': {}, 'bin': {'method': 'bin', 'bin_window': 4}}


@pytest.mark.parametrize('method', sorted(METHODS))
@pytest.mark.parametrize('before,after,one_node', [(1, 3, True), (3, 1, True), (1, 3, False),
                                                   (3, 1, False), (2, 3, False)])
def test_every_token_once_across_a_change_of_ranks(elastic_data, monkeypatch, before, after,
                                                   one_node, method):
    for k in (0, 1, 3, 6):  # rows each rank consumed before the checkpoint
        consumed = []
        for rank in range(before):
            set_ranks(monkeypatch, before, rank, one_node)
            ds = elastic_dataset(elastic_data, **METHODS[method])
            consumed += take(iter(ds), k)
            state = ds.state_dict(before * k, False)
        nodes = 1 if one_node else before
        if k:  # (at 0 the epoch has not begun: the state is from before it)
            assert state['sluice_pack']['segments'] == [
                {'nodes': nodes, 'ranks_per_node': before // nodes, 'workers': 1,
                 'batch_size': 2, 'rows': before * k}]
        rest, again = [], []
        for rank in range(after):
            set_ranks(monkeypatch, after, rank, one_node)
            for out in (rest, again):
                ds = elastic_dataset(elastic_data, **METHODS[method])
                ds.load_state_dict(state, adapt='world')
                out += [r['tokens'] for r in ds]
        assert [r.tolist() for r in again] == [r.tolist() for r in rest]  # deterministic
        assert_every_token_once(consumed + rest)


def test_a_state_saved_after_an_elastic_resume_resumes_too(elastic_data, monkeypatch):
    set_ranks(monkeypatch, 1, 0)
    first = elastic_dataset(elastic_data)
    consumed = take(iter(first), 4)
    state = first.state_dict(4, False)
    mid = []
    for rank in range(3):
        set_ranks(monkeypatch, 3, rank)
        ds = elastic_dataset(elastic_data)
        ds.load_state_dict(state, adapt='world')
        mid += take(iter(ds), 2)
        saved = ds.state_dict(6, False)  # 2 rows on each of 3 ranks since the resume
    assert saved['sluice_pack']['rows_in_epoch'] == 10
    assert [s['rows'] for s in saved['sluice_pack']['segments']] == [4, 6]
    rest = []
    set_ranks(monkeypatch, 1, 0)
    ds = elastic_dataset(elastic_data)
    ds.load_state_dict(saved, adapt='world')
    rest += [r['tokens'] for r in ds]
    assert_every_token_once(consumed + mid + rest)
    # On the shape it was saved on, a state saved after an elastic resume
    # continues each rank's rows exactly.
    for rank in range(3):
        set_ranks(monkeypatch, 3, rank)
        whole = elastic_dataset(elastic_data)
        whole.load_state_dict(state, adapt='world')
        rows = [r['tokens'].tolist() for r in whole]
        again = elastic_dataset(elastic_data)
        again.load_state_dict(saved)
        assert [r['tokens'].tolist() for r in again] == rows[2:], rank


def test_streaming_dataloader_workers_resume_on_another_world_MultiProcess(elastic_data,
                                                                            monkeypatch):
    from sluice import StreamingDataLoader

    def loader(ds):
        return StreamingDataLoader(ds, batch_size=2, num_workers=2, collate_fn=stack_tokens)

    for before, after, k in ((1, 3, 3), (3, 1, 2)):
        consumed = []
        for rank in range(before):
            set_ranks(monkeypatch, before, rank)
            first = loader(elastic_dataset(elastic_data))
            it = iter(first)
            consumed += [next(it) for _ in range(k)]
            state = first.state_dict()
            del it
        assert state['sluice_pack']['segments'][-1]['workers'] == 2
        rest = []
        for rank in range(after):
            set_ranks(monkeypatch, after, rank)
            resumed = loader(elastic_dataset(elastic_data))
            resumed.load_state_dict(state, adapt='world')
            rest += list(resumed)
        assert_every_token_once(consumed + rest)


@pytest.mark.parametrize('method', sorted(METHODS))
def test_streaming_dataloader_resumes_on_another_world_after_a_worker_ran_out_MultiProcess(
        uneven_data, monkeypatch, method):
    """Checkpoints in the epoch's tail: DataLoader worker 0 of 2 ran out
    first (21 or 22 batches against 47 or 48) and the DataLoader dealt the
    rest from worker 1; resumed on 3 ranks (no workers) and on 2 ranks of 1
    worker, every token comes out once, the same rows every time."""
    from sluice import StreamingDataLoader

    def loader(ds, workers):
        return StreamingDataLoader(ds, batch_size=2, num_workers=workers, collate_fn=stack_tokens)

    def dataset():
        return elastic_dataset(uneven_data, **METHODS[method])

    set_ranks(monkeypatch, 1, 0)
    for k in (30, 50):  # batches before the checkpoint: past worker 0's last
        first = loader(dataset(), 2)
        it = iter(first)
        consumed = [next(it) for _ in range(k)]
        state = first.state_dict()
        del it
        for ranks, workers in ((3, 0), (2, 1)):
            rest, again = [], []
            for rank in range(ranks):
                set_ranks(monkeypatch, ranks, rank)
                for out in (rest, again):
                    resumed = loader(dataset(), workers)
                    resumed.load_state_dict(state, adapt='world')
                    out += [b.tolist() for b in resumed]
            assert again == rest
            assert_every_token_once(consumed + rest, uneven_doc)
            set_ranks(monkeypatch, 1, 0)


@pytest.mark.parametrize('method', sorted(METHODS))
def test_a_same_shape_resume_after_an_elastic_one_is_exact_to_the_last_batch_MultiProcess(
        uneven_data, monkeypatch, method):
    """1 rank consumed 4 rows; the job goes on with 3 DataLoader workers
    (adapt='world') and checkpoints at each of its last batches, where
    workers run out one by one; resumed there on the same shape, the
    batches are the rest of the run's, exactly (the engine's
    sluice_pack_resume_point_segments follows the DataLoader's tail)."""
    from sluice import StreamingDataLoader
    set_ranks(monkeypatch, 1, 0)

    def dataset():
        return elastic_dataset(uneven_data, **METHODS[method])

    def loader(ds):
        return StreamingDataLoader(ds, batch_size=2, num_workers=3, collate_fn=stack_tokens)

    first = dataset()
    take(iter(first), 4)
    state = first.state_dict(4, False)
    run = loader(dataset())
    run.load_state_dict(state, adapt='world')
    whole = [b.tolist() for b in run]
    for k in range(len(whole) - 6, len(whole)):
        part = loader(dataset())
        part.load_state_dict(state, adapt='world')
        it = iter(part)
        head = [next(it).tolist() for _ in range(k)]
        saved = part.state_dict()
        del it
        resumed = loader(dataset())
        resumed.load_state_dict(saved)
        assert head + [b.tolist() for b in resumed] == whole, k


@pytest.mark.parametrize('method', sorted(METHODS))
def test_elastic_resume_from_s3_is_the_local_one_MultiProcess(uneven_data, s3, tmp_path,
                                                                monkeypatch, method):
    """Over a real S3 server (s3rver), each rank with its own cache: a state
    saved by 2 DataLoader workers in the epoch's tail resumes on 3 ranks with
    exactly the rows the local dataset gives, every token once."""
    from sluice import StreamingDataLoader
    url = s3 + '/elastic-' + method
    for path in sorted(glob.glob(uneven_data + '/*')):
        with open(path, 'rb') as f:
            remote_write(url, os.path.basename(path), f.read())
    spec = dict(column='tokens', seq_len=ELASTIC_SEQ_LEN, eos_id=0, pad_id=0, drop_last=False,
                **METHODS[method])

    def remote(cache):
        return StreamingDataset(remote=url, local=str(tmp_path / cache), batch_size=2, pack=spec)

    set_ranks(monkeypatch, 1, 0)
    first = StreamingDataLoader(remote('c0'), batch_size=2, num_workers=2,
                                collate_fn=stack_tokens)
    it = iter(first)
    consumed = [next(it) for _ in range(50)]
    state = first.state_dict()
    del it
    got, want = [], []
    for rank in range(3):
        set_ranks(monkeypatch, 3, rank)
        ds = remote(f'r{rank}')
        ds.load_state_dict(state, adapt='world')
        got += [r['tokens'].tolist() for r in ds]
        local = elastic_dataset(uneven_data, **METHODS[method])
        local.load_state_dict(state, adapt=('world', 'streams'))  # the same shards, local
        want += [r['tokens'].tolist() for r in local]
    assert got == want
    assert_every_token_once(consumed + got, uneven_doc)


def test_what_cannot_resume_on_another_world_is_refused(elastic_data, monkeypatch):
    set_ranks(monkeypatch, 3, 0)
    ds = elastic_dataset(elastic_data)
    take(iter(ds), 1)
    state = ds.state_dict(3, False)
    set_ranks(monkeypatch, 1, 0)
    with pytest.raises(ValueError, match='world'):  # the engine's: not without adapt='world'
        elastic_dataset(elastic_data).load_state_dict(state)
    # A state whose DataLoader workers are not known (saved by the main
    # process of a plain DataLoader) resumes only on its own shape.
    unknown = dict(state, sluice_pack=dict(state['sluice_pack']))
    unknown['sluice_pack']['segments'] = [dict(state['sluice_pack']['segments'][0], workers=None)]
    with pytest.raises(ValueError, match=r'^packed rows resume on another world shape only from a '
                       r'state that records its DataLoader workers \(saved through '
                       r'sluice.StreamingDataLoader\): world shape 0 of the epoch has none$'):
        elastic_dataset(elastic_data).load_state_dict(unknown, adapt='world')
    # A state saved before world shapes were recorded: its own world only.
    legacy = dict(state, sluice_pack=dict(state['sluice_pack']))
    del legacy['sluice_pack']['segments']
    with pytest.raises(ValueError, match=r'^packed rows resume on the world they were saved on: '
                       r'saved over 3 ranks, now 1 \(the state records no world shapes; one '
                       r'saved by this Sluice resumes on another world\)$'):
        elastic_dataset(elastic_data).load_state_dict(legacy, adapt='world')


def replicated_dataset(local, replication, **pack):
    spec = dict(column='tokens', seq_len=ELASTIC_SEQ_LEN, eos_id=0, pad_id=0, drop_last=False)
    spec.update(pack)
    return StreamingDataset(local=local, batch_size=2, pack=spec, replication=replication)


def run_ranks(monkeypatch, ranks, make, state=None, take_rows=None, **load):
    """Each of `ranks` ranks (one node) of `make()`, resumed from `state`
    when given: its rows (`take_rows` of them, all when None) and the last
    rank's state_dict after them (rows counted once per group of replicas)."""
    rows, saved = [], None
    for rank in range(ranks):
        set_ranks(monkeypatch, ranks, rank)
        ds = make()
        if state is not None:
            ds.load_state_dict(state, **load)
        it = iter(ds)
        got = [r['tokens'] for r in it] if take_rows is None else take(it, take_rows)
        rows.append([r.tolist() for r in got])
        if take_rows is not None:
            saved = ds.state_dict(take_rows * ds._packed_ranks(ds._world()), False)
    return rows, saved


def distinct(rows, replication):
    """The rows of one replica of each group (replicas' rows are equal)."""
    for k in range(0, len(rows), replication):
        assert all(rows[k + j] == rows[k] for j in range(replication)), k
    return [r for k in range(0, len(rows), replication) for r in rows[k]]


@pytest.mark.parametrize('method', sorted(METHODS))
@pytest.mark.parametrize('before,after', [((2, 2), (3, None)), ((4, 2), (2, 2)),
                                          ((1, None), (4, 2)), ((4, 2), (6, 3))])
def test_a_replicated_run_resumes_on_another_world(elastic_data, monkeypatch, method, before,
                                                   after):
    """(ranks, replication) before and after: each group of replicas is one
    rank of the shapes the state records, and every token comes out once
    per group across the change; replicas hand out the same rows."""
    # Another replication is another sampling option too.
    adapt = ('world',) if before[1] == after[1] else ('world', 'sampling')
    for k in (1, 4):
        consumed, state = run_ranks(
            monkeypatch, before[0],
            lambda: replicated_dataset(elastic_data, before[1], **METHODS[method]), take_rows=k)
        groups = before[0] // (before[1] or 1)
        assert state['sluice_pack']['segments'] == [
            {'nodes': 1, 'ranks_per_node': groups, 'workers': 1, 'batch_size': 2,
             'rows': groups * k}]
        rest, _ = run_ranks(monkeypatch, after[0],
                            lambda: replicated_dataset(elastic_data, after[1], **METHODS[method]),
                            state, adapt=adapt)
        again, _ = run_ranks(monkeypatch, after[0],
                             lambda: replicated_dataset(elastic_data, after[1],
                                                        **METHODS[method]),
                             state, adapt=adapt)
        assert again == rest
        assert_every_token_once(distinct(consumed, before[1] or 1) +
                                distinct(rest, after[1] or 1))


def test_a_replicated_state_saved_with_real_worlds_still_resumes(elastic_data, monkeypatch):
    """A state saved before shapes were planning worlds (no
    'planning_worlds') recorded the real world: merged into its groups."""
    consumed, state = run_ranks(monkeypatch, 4, lambda: replicated_dataset(elastic_data, 2),
                                take_rows=3)
    old = dict(state, sluice_pack=dict(state['sluice_pack']))
    del old['sluice_pack']['planning_worlds']
    old['sluice_pack']['segments'] = [dict(old['sluice_pack']['segments'][0], ranks_per_node=4)]
    same, _ = run_ranks(monkeypatch, 4, lambda: replicated_dataset(elastic_data, 2), old)
    want, _ = run_ranks(monkeypatch, 4, lambda: replicated_dataset(elastic_data, 2), state)
    assert same == want
    assert_every_token_once(distinct(consumed, 2) + distinct(same, 2))


def skipped_doc_ids():
    """Steps 3..5 of 1 rank of batch 2 (no shuffle): samples 6..11."""
    return set(range(6, 12))


def assert_every_kept_token_once(rows, skipped):
    got = np.sort(np.concatenate([np.asarray(r).ravel() for r in rows]))
    got = got[got != 0]
    want = np.sort(np.concatenate([elastic_doc(i) for i in range(ELASTIC_DOCS)
                                   if i not in skipped]))
    assert got.tolist() == want.tolist()


@pytest.mark.parametrize('method', sorted(METHODS))
@pytest.mark.parametrize('after', [(3, None), (6, 2)])
def test_steps_skipped_before_a_change_stay_skipped_after_it(elastic_data, monkeypatch, method,
                                                             after):
    """1 rank consumes 4 rows (documents 0..5 only), resumes skipping steps
    3..5 (samples 6..11, global positions 6..12: whole steps of 3 ranks
    too), consumes 3 more rows and checkpoints; resumed on another world
    (with replication too), the skipped documents never come and every
    other token comes once."""
    make = lambda: elastic_dataset(elastic_data, **METHODS[method])  # noqa: E731
    head, state = run_ranks(monkeypatch, 1, make, take_rows=4)
    mid, state = run_ranks(monkeypatch, 1, make, state, take_rows=3, skip_steps=[(3, 6)])
    assert state['sluice_order']['parts']['skips'] == [[0, 6, 12]]  # epoch, positions
    rest, _ = run_ranks(monkeypatch, after[0],
                        lambda: replicated_dataset(elastic_data, after[1], **METHODS[method]),
                        state, adapt=('world', 'sampling') if after[1] else 'world')
    assert_every_kept_token_once(head[0] + mid[0] + distinct(rest, after[1] or 1),
                                 skipped_doc_ids())


def test_skips_that_cannot_be_honoured_across_a_change_are_refused(elastic_data, monkeypatch):
    make = lambda: elastic_dataset(elastic_data)  # noqa: E731
    _, state = run_ranks(monkeypatch, 1, make, take_rows=4)
    set_ranks(monkeypatch, 3, 0)
    for key, value in (('skip_steps', [(3, 4)]), ('skip_samples', [(6, 12)]),
                       ('skip_sample_ids', [30])):
        with pytest.raises(ValueError, match=(
                rf"^packed rows: {key} cannot be given once the epoch changed world shape \(it "
                r"runs on 2 shapes\): skipped steps are positions of the epoch's samples, which "
                r"the workers of its first shape packed into rows from its start, so leaving "
                r"them out now would change rows consumed before the change; skip steps on the "
                r"shape the epoch started on \(those are honoured across changes\)$")):
            make().load_state_dict(state, adapt='world', **{key: value})
    # No steps may be added through the engine either (sluice_stream_load_state_with).
    with pytest.raises(ValueError, match=r"no steps can be skipped with 'steps_of'"):
        make()._engine.load_state(state, {'skip_steps': [[3, 4]],
                                          'steps_of': {'batch_size': 2, 'ranks': 1}})


@pytest.mark.parametrize('method', sorted(METHODS))
def test_skips_that_are_no_whole_steps_of_the_new_world_stay_skipped(elastic_data, monkeypatch,
                                                                     method):
    """Step 4 of 1 rank (samples 8, 9) is no whole step of 3 ranks (6
    samples): the resume there checks the state's skips against the shape
    the epoch started on (steps_of), whose steps they are."""
    make = lambda: elastic_dataset(elastic_data, **METHODS[method])  # noqa: E731
    head, state = run_ranks(monkeypatch, 1, make, take_rows=4)
    mid, state = run_ranks(monkeypatch, 1, make, state, take_rows=1, skip_steps=[(4, 5)])
    rest, _ = run_ranks(monkeypatch, 3, make, state, adapt='world')
    assert_every_kept_token_once(head[0] + mid[0] + distinct(rest, 1), {8, 9})

def test_replicated_and_skipping_elastic_resume_from_s3_is_the_local_one(elastic_data, s3,
                                                                        tmp_path, monkeypatch):
    """Over s3rver, each rank with its own cache: 2 replicas consume, resume
    skipping steps 3..5 and checkpoint; 3 unreplicated ranks resume with the
    rows the local dataset gives, the skipped documents left out."""
    url = s3 + '/elastic-replicated'
    for path in sorted(glob.glob(elastic_data + '/*')):
        with open(path, 'rb') as f:
            remote_write(url, os.path.basename(path), f.read())
    spec = dict(column='tokens', seq_len=ELASTIC_SEQ_LEN, eos_id=0, pad_id=0, drop_last=False)
    caches = iter(range(100))

    def remote(replication=None):
        return StreamingDataset(remote=url, local=str(tmp_path / f'c{next(caches)}'),
                                batch_size=2, pack=spec, replication=replication)

    head, state = run_ranks(monkeypatch, 2, lambda: remote(2), take_rows=4)
    mid, state = run_ranks(monkeypatch, 2, lambda: remote(2), state, take_rows=3,
                           skip_steps=[(3, 6)])
    got, _ = run_ranks(monkeypatch, 3, remote, state, adapt=('world', 'sampling'))
    want, _ = run_ranks(monkeypatch, 3, lambda: elastic_dataset(elastic_data), state,
                        adapt=('world', 'sampling', 'streams'))  # the same shards, local
    assert got == want
    assert_every_kept_token_once(distinct(head, 2) + distinct(mid, 2) + distinct(got, 1),
                                 skipped_doc_ids())
