"""Token packing (StreamingDataset(pack=...), sluice/packing.py over the
engine's sluice_pack_*): the rows are checked against a plain Python packer
over the samples each worker is planned to read, in order; resumption at
every position (one process, DataLoader workers, three ranks)."""
import glob
import json
import os
import pathlib
import shutil

import numpy as np
import pytest

from sluice import JSONWriter, MDSWriter, PackSpec, StreamingDataset
from sluice.remote import remote_write
from s3rver_fixture import s3, s3rver  # noqa: F401

torch = pytest.importorskip('torch')
from torch.utils.data import DataLoader  # noqa: E402

PACK_SEQ_LEN = 8
PACK_EOS = 0


def pack_docs(n=41, seed=7):
    rng = np.random.default_rng(seed)
    # Lengths 1..19: documents shorter and longer than a row (MDS has no
    # empty ndarray; the engine test covers empty documents).
    return [rng.integers(1, 1000, size=int(rng.integers(1, 20))).astype(np.int32)
            for _ in range(n)]


@pytest.fixture
def pack_data(tmp_path):
    docs = pack_docs()
    out = str(tmp_path / 'mds')
    with MDSWriter(out=out, columns={'tokens': 'ndarray:int32', 'raw': 'bytes', 'id': 'int'},
                   size_limit=400) as w:
        for i, t in enumerate(docs):
            w.write({'tokens': t, 'raw': t.astype('<i8').tobytes(), 'id': i})
    return out, docs


def concat_rows(docs, ids, seq_len=PACK_SEQ_LEN, eos=PACK_EOS, drop_last=True):
    """LLM Foundry's ConcatTokensDataset rule, in plain Python."""
    stream = [int(t) for i in ids for t in list(docs[i]) + [eos]]
    rows = [stream[k:k + seq_len] for k in range(0, len(stream), seq_len)]
    if rows and len(rows[-1]) < seq_len:
        if drop_last:
            rows.pop()
        else:
            rows[-1] = rows[-1] + [eos] * (seq_len - len(rows[-1]))
    return rows


def bin_rows(docs, ids, window, seq_len=PACK_SEQ_LEN, eos=PACK_EOS):
    """First-fit decreasing per window of documents, in plain Python:
    (tokens, segment ids) per row."""
    out = []
    for w in range(0, len(ids), window):
        pieces = []
        for i in ids[w:w + window]:
            toks = [int(t) for t in docs[i]] + [eos]
            pieces += [toks[k:k + seq_len] for k in range(0, len(toks), seq_len)]
        order = sorted(range(len(pieces)), key=lambda p: -len(pieces[p]))  # stable
        bins = []
        for p in order:
            for b in bins:
                if sum(map(len, b)) + len(pieces[p]) <= seq_len:
                    b.append(pieces[p])
                    break
            else:
                bins.append([pieces[p]])
        for b in bins:
            toks = [t for piece in b for t in piece]
            segs = [s + 1 for s, piece in enumerate(b) for _ in piece]
            pad = seq_len - len(toks)
            out.append((toks + [eos] * pad, segs + [0] * pad))
    return out


def pack_dataset(local, **pack):
    spec = dict(column='tokens', seq_len=PACK_SEQ_LEN, eos_id=PACK_EOS)
    spec.update(pack)
    return StreamingDataset(local=local, batch_size=2, pack=spec)


def planned_ids(local, rank=0, worker=0, workers=1):
    ds = StreamingDataset(local=local, batch_size=2)
    return [int(i) for i in ds.plan(epoch=0, workers=workers).worker_ids(0, rank, worker)]


def rows_of(rows):
    return [r['tokens'].tolist() for r in rows]


def test_concat_rows_are_the_documents_in_planned_order(pack_data):
    local, docs = pack_data
    ids = planned_ids(local)
    rows = list(pack_dataset(local))
    assert all(r['tokens'].dtype == np.int64 and r['tokens'].shape == (PACK_SEQ_LEN,)
               for r in rows)
    assert set(rows[0]) == {'tokens'}
    assert rows_of(rows) == concat_rows(docs, ids)
    # Tokens in == tokens out: every document once, in order, then padding.
    padded = rows_of(pack_dataset(local, drop_last=False))
    assert padded == concat_rows(docs, ids, drop_last=False)
    assert sum(len(docs[i]) + 1 for i in ids) == sum(len(r) for r in padded) - \
        (-sum(len(docs[i]) + 1 for i in ids)) % PACK_SEQ_LEN


def test_bytes_column_and_a_plain_dict_spec(pack_data):
    local, docs = pack_data
    ids = planned_ids(local)
    rows = list(pack_dataset(local, column='raw', bytes_dtype='int64'))
    assert rows_of(rows) == concat_rows(docs, ids)
    spec = PackSpec(column='raw', seq_len=PACK_SEQ_LEN, eos_id=PACK_EOS)
    ds = StreamingDataset(local=local, batch_size=2, pack=spec)
    assert rows_of(ds) == concat_rows(docs, ids)


def test_concat_resumes_at_every_row(pack_data):
    local, _ = pack_data
    full = rows_of(pack_dataset(local))
    for k in range(len(full) + 1):
        ds = pack_dataset(local)
        it = iter(ds)
        head = [next(it)['tokens'].tolist() for _ in range(k)]
        state = ds.state_dict(k, False)
        assert state['sample_in_epoch'] == 0
        assert state['sluice_pack']['rows_in_epoch'] == k
        resumed = pack_dataset(local)
        resumed.load_state_dict(state)
        assert head + rows_of(resumed) == full, k


def stack_rows(rows):
    return np.stack([r['tokens'] for r in rows])


def loader_batches(ds, batch_size=2):
    loader = DataLoader(ds, batch_size=batch_size, num_workers=2, collate_fn=stack_rows)
    return [b.tolist() for b in loader]


def test_dataloader_workers_and_resume_at_every_batch(pack_data):
    local, docs = pack_data
    per_worker = [concat_rows(docs, planned_ids(local, worker=w, workers=2)) for w in range(2)]
    # The DataLoader deals batches of 2 rows from worker 0, 1, 0, ... while
    # both have rows, then takes the rest of the other.
    chunks = [[rows[i:i + 2] for i in range(0, len(rows), 2)] for rows in per_worker]
    expect = []
    for i in range(max(map(len, chunks))):
        expect += [c[i] for c in chunks if i < len(c)]
    assert loader_batches(pack_dataset(local)) == expect
    # Exact resumption while every worker still has whole batches.
    both = 2 * min(len([c for c in cs if len(c) == 2]) for cs in chunks)
    for k in range(both + 1):
        ds = pack_dataset(local)
        it = iter(DataLoader(ds, batch_size=2, num_workers=2, collate_fn=stack_rows))
        head = [next(it).tolist() for _ in range(k)]
        assert head == expect[:k]
        state = ds.state_dict(2 * k, False)
        del it
        assert state['sluice_pack']['rows_in_epoch'] == 2 * k
        if k:  # (at 0 the workers may not have begun the epoch yet)
            assert state['epoch'] == 0
        resumed = pack_dataset(local)
        resumed.load_state_dict(state)
        assert loader_batches(resumed) == expect[k:], k


def test_three_ranks_each_pack_their_samples_and_resume(pack_data, monkeypatch):
    local, docs = pack_data
    monkeypatch.setenv('WORLD_SIZE', '3')
    monkeypatch.setenv('LOCAL_WORLD_SIZE', '3')
    seen = set()
    for rank in range(3):
        monkeypatch.setenv('RANK', str(rank))
        ids = planned_ids(local, rank=rank)
        seen.update(ids)
        full = rows_of(pack_dataset(local))
        assert full == concat_rows(docs, ids)
        for k in range(len(full) + 1):
            ds = pack_dataset(local)
            it = iter(ds)
            for _ in range(k):
                next(it)
            state = ds.state_dict(3 * k, False)  # every rank consumed k rows
            resumed = pack_dataset(local)
            resumed.load_state_dict(state)
            assert rows_of(resumed) == full[k:], (rank, k)
    assert seen == set(range(len(docs)))


def test_another_world_or_spec_is_refused(pack_data, monkeypatch):
    local, _ = pack_data
    monkeypatch.setenv('WORLD_SIZE', '3')
    monkeypatch.setenv('LOCAL_WORLD_SIZE', '3')
    monkeypatch.setenv('RANK', '0')
    ds = pack_dataset(local)
    next(iter(ds))
    state = ds.state_dict(3, False)
    for name in ('WORLD_SIZE', 'LOCAL_WORLD_SIZE', 'RANK'):
        monkeypatch.delenv(name)
    # Another world resumes only when told to adapt (then elastically:
    # test_packing_elastic.py).
    with pytest.raises(ValueError, match=r'^invalid argument: resume state does not match this '
                       r'dataset: world changed: saved 1 nodes x 3 ranks per node, now 1 nodes x '
                       r'1 ranks per node \(to resume anyway, adapt "world"\)$'):
        pack_dataset(local).load_state_dict(state)
    pack_dataset(local).load_state_dict(state, adapt='world')
    with pytest.raises(ValueError, match=r"^the state was saved with another pack spec: "
                       r"method='concat' \(saved\) vs 'bin' \(now\), seq_len=8 \(saved\) vs "
                       r"16 \(now\)$"):
        pack_dataset(local, seq_len=16, method='bin').load_state_dict(state)
    # A PackSpec and a dict of the same keys are the same spec.
    monkeypatch.setenv('WORLD_SIZE', '3')
    monkeypatch.setenv('LOCAL_WORLD_SIZE', '3')
    monkeypatch.setenv('RANK', '0')
    same = StreamingDataset(local=local, batch_size=2,
                            pack=PackSpec(column='tokens', seq_len=PACK_SEQ_LEN, eos_id=PACK_EOS))
    same.load_state_dict(state)


def test_bin_rows_segments_and_positions(pack_data):
    local, docs = pack_data
    ids = planned_ids(local)
    rows = list(pack_dataset(local, method='bin', bin_window=6))
    expect = bin_rows(docs, ids, 6)
    assert [(r['tokens'].tolist(), r['segment_ids'].tolist()) for r in rows] == expect
    for r in rows:
        seg, pos = r['segment_ids'], r['position_ids']
        assert seg.dtype == np.int32 and pos.dtype == np.int32
        for s in range(1, seg.max() + 1):
            assert pos[seg == s].tolist() == list(range(int((seg == s).sum())))
        assert not pos[seg == 0].any()
    # The same tokens as concat, more rows: the padding is bin's cost.
    tokens = sum(len(docs[i]) + 1 for i in ids)
    pad = sum(int((r['segment_ids'] == 0).sum()) for r in rows)
    assert len(rows) * PACK_SEQ_LEN - pad == tokens
    # Resumes mid-window too.
    full = [r['tokens'].tolist() for r in rows]
    for k in (1, 5, len(full) - 1):
        ds = pack_dataset(local, method='bin', bin_window=6)
        it = iter(ds)
        for _ in range(k):
            next(it)
        state = ds.state_dict(k, False)
        resumed = pack_dataset(local, method='bin', bin_window=6)
        resumed.load_state_dict(state)
        assert rows_of(resumed) == full[k:], k


def test_bad_specs_name_what_is_wrong(pack_data):
    local, _ = pack_data
    with pytest.raises(ValueError, match=r"^invalid argument: token packing: the dataset has "
                       r"no column 'ids' \(its columns: id, raw, tokens\)$"):
        pack_dataset(local, column='ids')
    with pytest.raises(ValueError, match=r"^invalid argument: token packing: column 'id' "
                       r"\(int\) of format mds is no MDS ndarray of integers nor bytes "
                       r"\(stream 0\)$"):
        pack_dataset(local, column='id')
    with pytest.raises(ValueError,
                       match=r"^invalid argument: pack spec: 'method' must be 'concat' or 'bin'$"):
        pack_dataset(local, method='greedy')
    with pytest.raises(TypeError, match=r'^pack must be a sluice.PackSpec or a dict, not int$'):
        StreamingDataset(local=local, batch_size=2, pack=8)


def test_streaming_dataloader_state_counts_rows(pack_data):
    from sluice import StreamingDataLoader
    local, _ = pack_data
    full = loader_batches(pack_dataset(local))
    for k in (1, 2, 3):
        loader = StreamingDataLoader(pack_dataset(local), batch_size=2, num_workers=2,
                                     collate_fn=stack_rows)
        it = iter(loader)
        head = [next(it).tolist() for _ in range(k)]
        state = loader.state_dict()
        del it
        assert state['sluice_pack']['rows_in_epoch'] == 2 * k
        resumed = StreamingDataLoader(pack_dataset(local), batch_size=2, num_workers=2,
                                      collate_fn=stack_rows)
        resumed.load_state_dict(state)
        assert head + [b.tolist() for b in resumed] == full, k


@pytest.mark.parametrize('name,column', [('hf_text', 'input_ids'),
                                         ('pa26_many_row_groups', 'tokens')])
def test_parquet_list_column(tmp_path, name, column):
    src = pathlib.Path(__file__).resolve().parents[2] / 'data' / 'parquet' / f'{name}.parquet'
    shutil.copy(src, tmp_path / 'part-0.parquet')
    samples = list(StreamingDataset(local=str(tmp_path), batch_size=2))
    docs = [np.asarray(s[column] if s[column] is not None else [], dtype=np.int64)
            for s in samples]
    assert sum(map(len, docs)) > 3 * PACK_SEQ_LEN
    rows = StreamingDataset(local=str(tmp_path), batch_size=2,
                            pack={'column': column, 'seq_len': PACK_SEQ_LEN, 'eos_id': PACK_EOS,
                                  'drop_last': False})
    assert rows_of(rows) == concat_rows(docs, range(len(docs)), drop_last=False)


def test_shuffled_rows_follow_the_shuffled_plan(pack_data):
    local, docs = pack_data
    plain = StreamingDataset(local=local, batch_size=2, shuffle=True, shuffle_seed=3)
    ids = [int(i) for i in plain.plan(epoch=0, workers=1).worker_ids(0, 0, 0)]
    assert ids != sorted(ids)
    spec = {'column': 'tokens', 'seq_len': PACK_SEQ_LEN, 'eos_id': PACK_EOS}
    packed = StreamingDataset(local=local, batch_size=2, shuffle=True, shuffle_seed=3, pack=spec)
    assert rows_of(packed) == concat_rows(docs, ids)


def test_a_resumed_run_saves_states_that_resume_too(pack_data):
    local, _ = pack_data
    full = rows_of(pack_dataset(local))
    first = pack_dataset(local)
    it = iter(first)
    for _ in range(5):
        next(it)
    middle = pack_dataset(local)
    middle.load_state_dict(first.state_dict(5, False))
    it = iter(middle)
    assert [next(it)['tokens'].tolist() for _ in range(7)] == full[5:12]
    state = middle.state_dict(7, False)  # rows since the resume
    assert state['sluice_pack']['rows_in_epoch'] == 12
    last = pack_dataset(local)
    last.load_state_dict(state)
    assert rows_of(last) == full[12:]


def test_spawned_workers_reopen_the_packer(pack_data):
    local, _ = pack_data
    forked = loader_batches(pack_dataset(local))
    loader = DataLoader(pack_dataset(local), batch_size=2, num_workers=2, collate_fn=stack_rows,
                        multiprocessing_context='spawn')
    assert [b.tolist() for b in loader] == forked


def test_a_packed_dataset_has_no_length(pack_data):
    local, _ = pack_data
    with pytest.raises(TypeError, match=r'^a packed StreamingDataset has no len\(\): its rows per '
                       r'epoch are known only once the epoch is packed$'):
        len(pack_dataset(local))


def test_jsonl_arrays_of_ids(tmp_path):
    """Mosaic's JSONWriter has no list column: the shard is written with
    each document as a str and its members then rewritten as JSON arrays
    of the same byte length (so the line offsets in the meta file hold)."""
    docs = [[1, 2, 3], [4, 5], [6, 7, 8, 9, 10], [11]]
    out = str(tmp_path / 'jsonl')
    with JSONWriter(out=out, columns={'tokens': 'str'}) as w:
        for d in docs:
            w.write({'tokens': json.dumps(d, separators=(',', ':'))})
    for path in glob.glob(out + '/shard.*.json'):
        with open(path) as f:
            text = f.read()
        for d in docs:
            compact = json.dumps(d, separators=(',', ':'))
            text = text.replace(json.dumps(compact), f' {compact} ')
        with open(path, 'w') as f:
            f.write(text)
    ds = StreamingDataset(local=out, batch_size=2,
                          pack={'column': 'tokens', 'seq_len': 4, 'eos_id': 0, 'drop_last': False})
    assert rows_of(ds) == [[1, 2, 3, 0], [4, 5, 0, 6], [7, 8, 9, 10], [0, 11, 0, 0]]


def test_packing_from_s3_resumes_with_workers(pack_data, s3, tmp_path):
    """Over a real S3 server (s3rver): the shards come through the cache and
    the rows, and a resume through DataLoader workers, are the local ones."""
    local, _ = pack_data
    url = s3 + '/packing'
    for path in sorted(glob.glob(local + '/*')):
        with open(path, 'rb') as f:
            remote_write(url, os.path.basename(path), f.read())

    def remote(cache):
        return StreamingDataset(remote=url, local=str(tmp_path / cache), batch_size=2,
                                pack={'column': 'tokens', 'seq_len': PACK_SEQ_LEN,
                                      'eos_id': PACK_EOS})
    expect = loader_batches(pack_dataset(local))
    assert loader_batches(remote('c0')) == expect
    ds = remote('c1')
    it = iter(DataLoader(ds, batch_size=2, num_workers=2, collate_fn=stack_rows))
    head = [next(it).tolist() for _ in range(3)]
    state = ds.state_dict(6, False)
    del it
    resumed = remote('c2')
    resumed.load_state_dict(state)
    assert head + loader_batches(resumed) == expect


@pytest.mark.parametrize('workers', [0, 2])
def test_assert_resume_exact_holds_for_packed_rows(pack_data, workers):
    from sluice.testing import assert_resume_exact
    local, _ = pack_data

    def make():
        return StreamingDataset(local=local, batch_size=2, shuffle=True,
                                pack={'column': 'tokens', 'seq_len': PACK_SEQ_LEN,
                                      'eos_id': PACK_EOS, 'method': 'bin', 'bin_window': 4})
    assert len(assert_resume_exact(make, interruptions=4, num_workers=workers, seed=1)) == 4


@pytest.mark.parametrize('method', ['concat', 'bin'])
def test_packed_batches_are_the_rows_stacked(pack_data, method):
    local, _ = pack_data
    keys = ('tokens', 'segment_ids', 'position_ids', 'cu_seqlens', 'num_documents') \
        if method == 'bin' else ('tokens',)
    rows = list(pack_dataset(local, method=method, bin_window=6))
    batches = list(pack_dataset(local, method=method, bin_window=6).iter_batches(3))
    assert [len(b['tokens']) for b in batches] == [3] * (len(rows) // 3) + \
        ([len(rows) % 3] if len(rows) % 3 else [])
    for b in batches:
        assert set(b) == set(keys)
        assert b['tokens'].dtype == np.int64 and b['tokens'].shape[1] == PACK_SEQ_LEN
    for key in keys:
        assert np.concatenate([b[key] for b in batches]).tolist() == \
            [r[key].tolist() for r in rows], key
    with pytest.raises(ValueError, match=r'^with_ids gives samples\' ids, and a packed row '):
        next(pack_dataset(local).iter_batches(3, with_ids=True))


def test_packed_column_batches_resume_through_a_streaming_dataloader(pack_data):
    from sluice import StreamingDataLoader
    from sluice.column_batches import ColumnBatches

    local, _ = pack_data
    full = loader_batches(pack_dataset(local))

    def loader(ds):
        return StreamingDataLoader(ColumnBatches(ds), batch_size=None, num_workers=2)
    assert [b['tokens'].tolist() for b in loader(pack_dataset(local))] == full
    for k in (1, 2, 3):
        first = loader(pack_dataset(local))
        it = iter(first)
        head = [next(it)['tokens'].tolist() for _ in range(k)]
        state = first.state_dict()
        del it
        assert state['sluice_pack']['rows_in_epoch'] == 2 * k
        resumed = loader(pack_dataset(local))
        resumed.load_state_dict(state)
        assert head + [b['tokens'].tolist() for b in resumed] == full, k
    other = StreamingDataLoader(ColumnBatches(pack_dataset(local), 3), batch_size=None)
    with pytest.raises(ValueError, match=r'^ColumnBatches of 3 samples over a dataset of '
                                         r'batch_size 2 cannot be resumed exactly'):
        other.state_dict()


def test_a_streaming_dataloader_resumes_exactly_in_the_epochs_tail_MultiProcess(pack_data):
    """After one worker ran out, the DataLoader deals each round to the
    workers that still have rows: the resume (sluice_pack_resume_point_in)
    follows it, so every resume point gives the uninterrupted run's
    batches, the tail's included."""
    from sluice import StreamingDataLoader
    local, docs = pack_data

    def loader():
        return StreamingDataLoader(pack_dataset(local, drop_last=False), batch_size=2,
                                   num_workers=2, collate_fn=stack_rows)

    full = [b.tolist() for b in loader()]
    rows = [len(concat_rows(docs, planned_ids(local, worker=w, workers=2), drop_last=False))
            for w in range(2)]
    batches = [(r + 1) // 2 for r in rows]
    assert batches[0] != batches[1]  # one worker runs out first: the epoch has a tail
    assert len(full) == sum(batches)
    # Batches dealt in turn, then the tail (one worker's batches only).
    for k in [1] + list(range(2 * min(batches) - 1, len(full) + 1)):
        first = loader()
        it = iter(first)
        head = [next(it).tolist() for _ in range(k)]
        state = first.state_dict()
        del it
        resumed = loader()
        resumed.load_state_dict(state)
        assert head + [b.tolist() for b in resumed] == full, k


@pytest.mark.parametrize('method', ['concat', 'bin'])
@pytest.mark.parametrize('nodes,ranks_per_node', [(1, 1), (1, 3), (3, 1)])
def test_tokens_in_are_tokens_out_across_a_resume_at_every_row(pack_data, monkeypatch, method,
                                                               nodes, ranks_per_node):
    """Each rank's rows are the plain packer's over its planned documents and
    resume exactly at every row; over all ranks (3 on one node, or 3 nodes
    of one rank, which plan another order) every document's tokens come out
    as planned: in order for concat (less each rank's dropped partial row), in
    pieces that each keep their order for bin."""
    local, docs = pack_data
    world = nodes * ranks_per_node
    monkeypatch.setenv('WORLD_SIZE', str(world))
    monkeypatch.setenv('LOCAL_WORLD_SIZE', str(ranks_per_node))
    spec = {'method': method, 'bin_window': 6} if method == 'bin' else {}
    tokens_out, tokens_in, orders = [], [], []
    for rank in range(world):
        monkeypatch.setenv('RANK', str(rank))
        ids = planned_ids(local, rank=rank % ranks_per_node) if nodes == 1 else \
            [int(i) for i in StreamingDataset(local=local, batch_size=2).plan(epoch=0)
             .worker_ids(rank, 0, 0)]
        orders.append(ids)
        rows = list(pack_dataset(local, **spec))
        full = rows_of(rows)
        if method == 'concat':
            assert full == concat_rows(docs, ids)
            stream = [int(t) for i in ids for t in list(docs[i]) + [PACK_EOS]]
            assert [t for r in full for t in r] == stream[:len(full) * PACK_SEQ_LEN]
            tokens_out += [t for r in full for t in r]
            tokens_in += stream[:len(full) * PACK_SEQ_LEN]
        else:
            expect = bin_rows(docs, ids, 6)
            assert [(r['tokens'].tolist(), r['segment_ids'].tolist()) for r in rows] == expect
            tokens_out += [int(t) for r in rows for t in r['tokens'][r['segment_ids'] > 0]]
            tokens_in += [int(t) for i in ids for t in list(docs[i]) + [PACK_EOS]]
        for k in range(len(full) + 1):
            ds = pack_dataset(local, **spec)
            it = iter(ds)
            head = [next(it)['tokens'].tolist() for _ in range(k)]
            state = ds.state_dict(world * k, False)  # every rank consumed k rows
            resumed = pack_dataset(local, **spec)
            resumed.load_state_dict(state)
            assert head + rows_of(resumed) == full, (rank, k)
    # Every document is planned; Mosaic's partition repeats a few (fewer
    # than the ranks) so that the ranks read as many samples.
    planned = [i for ids in orders for i in ids]
    assert set(planned) == set(range(len(docs))) and len(planned) - len(docs) < world
    assert sorted(tokens_out) == sorted(tokens_in)
    if nodes == 3:  # three nodes plan another order than one node of three ranks
        monkeypatch.setenv('LOCAL_WORLD_SIZE', '3')
        monkeypatch.setenv('RANK', '0')
        assert planned_ids(local, rank=0) != orders[0]


def bounds_from_segments(seg):
    """cu_seqlens and num_documents from a row's segment ids, in plain
    Python: each piece's start, the last end, that end repeated."""
    seg = [int(s) for s in seg]
    starts = [i for i, s in enumerate(seg) if s and (i == 0 or s != seg[i - 1])]
    end = sum(1 for s in seg if s)
    return starts + [end] * (len(seg) + 1 - len(starts)), len(starts)


def test_bin_document_boundaries_hand_checked(tmp_path):
    out = str(tmp_path / 'mds')
    with MDSWriter(out=out, columns={'tokens': 'ndarray:int32'}) as w:
        for d in ([1, 2, 3], [4, 5], [6], [7, 8, 9, 10]):
            w.write({'tokens': np.array(d, dtype=np.int32)})
    # Sizes 3, 2, 1, 4 in one window: the 4 opens a row and takes the 2, the
    # 3 opens the next and takes the 1.
    rows = list(StreamingDataset(local=out, batch_size=2, pack={
        'column': 'tokens', 'seq_len': 6, 'eos_id': None, 'method': 'bin', 'bin_window': 4}))
    assert [r['tokens'].tolist() for r in rows] == [[7, 8, 9, 10, 4, 5], [1, 2, 3, 6, 0, 0]]
    assert [r['cu_seqlens'].tolist() for r in rows] == [[0, 4, 6, 6, 6, 6, 6],
                                                        [0, 3, 4, 4, 4, 4, 4]]
    assert [int(r['num_documents']) for r in rows] == [2, 2]
    assert all(r['cu_seqlens'].dtype == np.int32 for r in rows)


def test_bin_boundaries_agree_with_segments_across_a_resume_at_every_row(pack_data):
    local, _ = pack_data
    full = list(pack_dataset(local, method='bin', bin_window=6))
    for r in full:
        assert (r['cu_seqlens'].tolist(), int(r['num_documents'])) == \
            bounds_from_segments(r['segment_ids'])
        cu, n = r['cu_seqlens'], int(r['num_documents'])
        for k in range(n):  # positions count from 0 in each piece
            assert r['position_ids'][cu[k]:cu[k + 1]].tolist() == list(range(cu[k + 1] - cu[k]))
    assert max(int(r['num_documents']) for r in full) > 1
    keys = ('tokens', 'segment_ids', 'position_ids', 'cu_seqlens', 'num_documents')
    for k in range(len(full) + 1):
        ds = pack_dataset(local, method='bin', bin_window=6)
        it = iter(ds)
        for _ in range(k):
            next(it)
        resumed = pack_dataset(local, method='bin', bin_window=6)
        resumed.load_state_dict(ds.state_dict(k, False))
        rest = list(resumed)
        assert [[np.asarray(r[key]).tolist() for key in keys] for r in rest] == \
            [[np.asarray(r[key]).tolist() for key in keys] for r in full[k:]], k
    # Batches carry them stacked: (rows, seq_len + 1) and (rows,).
    b = next(pack_dataset(local, method='bin', bin_window=6).iter_batches(3))
    assert b['cu_seqlens'].shape == (3, PACK_SEQ_LEN + 1) and b['num_documents'].shape == (3,)
    assert b['cu_seqlens'].tolist() == [r['cu_seqlens'].tolist() for r in full[:3]]
