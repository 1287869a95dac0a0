"""Two column sets in one cache folder (issue 35): datasets over the same
Parquet files and the same `local`, reading different `columns=`, are open
at the same time, each reads exactly its own columns (never pieces cached
for the other set), and they share the listing and the footers."""
import json
import pathlib
import shutil

import pytest

from sluice import LocalDataset, StreamingDataset

DATA = pathlib.Path(__file__).resolve().parents[2] / 'data' / 'parquet'
FIXTURE = 'pa26_many_row_groups'  # 60 rows in row groups; id, label, score, text, tokens
SETS = (['text', 'id'], ['label', 'score', 'id'])


def file_rows(folder):
    """The folder's rows as LocalDataset reads its files in place."""
    local = LocalDataset(str(folder))
    return [plain(local[i]) for i in range(len(local))]


def plain(row):
    return {k: v.tolist() if hasattr(v, 'tolist') else v for k, v in row.items()}


def opened(remote, cache, columns):
    return StreamingDataset(remote=str(remote), local=str(cache), columns=columns,
                            shuffle=True, shuffle_seed=3, batch_size=4)


@pytest.fixture
def remote(tmp_path):
    root = tmp_path / 'remote'
    root.mkdir()
    for name in ('part-0.parquet', 'part-1.parquet'):
        shutil.copy(DATA / f'{FIXTURE}.parquet', root / name)
    return root


@pytest.mark.parametrize('first', [0, 1])
def test_two_column_sets_share_one_cache_folder_at_once(remote, tmp_path, first):
    """Both orders of opening; the second opens while the first is part way
    through its epoch, then both finish: each row is its set's fields of the
    file's row (by id), every row exactly once."""
    rows = file_rows(remote)
    by_id = {row['id']: row for row in rows}
    cache = tmp_path / 'cache'
    order = [SETS[first], SETS[1 - first]]
    a = opened(remote, cache, order[0])
    it_a = iter(a)
    got_a = [plain(next(it_a)) for _ in range(7)]
    b = opened(remote, cache, order[1])
    got_b = [plain(s) for s in b]
    got_a += [plain(s) for s in it_a]
    for columns, got in zip(order, (got_a, got_b)):
        assert len(got) == len(rows)
        assert all(list(s) == columns for s in got)
        assert [s for s in got] == [{c: by_id[s['id']][c] for c in columns} for s in got]
        assert sorted(s['id'] for s in got) == sorted(row['id'] for row in rows)
    # Random access through the same cache: the last row of part-1.
    assert plain(a[len(a) - 1]) == {c: rows[-1][c] for c in order[0]}
    assert plain(b[0]) == {c: rows[0][c] for c in order[1]}
    # The listing is the folder's one copy; the pieces and the tables are
    # each set's own. A folder on a local disk keeps no footer store (each
    # fetch reads its file's footer again), so each set's table is kept as
    # a binary index however small, made under its own node lock.
    pieces = sorted(p.name for p in (cache / '.parquet_row_groups').iterdir())
    tags = {p.rsplit('.', 1)[1] for p in pieces}
    assert len(tags) == 2 and all(t.startswith('c') for t in tags)
    groups = json.loads((DATA / f'{FIXTURE}.expected.json').read_text())['row_groups']
    assert len(pieces) == 2 * 2 * len(groups)
    state = sorted(p.name for p in (cache / '.sluice').iterdir())
    tables = [f'parquet_index.{t}.bin{lock}' for t in tags for lock in ('', '.lock')]
    assert state == sorted(['listing.json', 'listing.lock'] + tables)


def test_a_column_set_reads_the_same_values_after_the_other_set_filled_the_cache(remote, tmp_path):
    """One after the other, each a fresh dataset over a warm folder that the
    other set's pieces also fill: the same rows as over a folder of its own."""
    cache = tmp_path / 'cache'
    alone = {}
    for columns in SETS:
        alone[tuple(columns)] = [plain(s) for s in opened(remote, tmp_path / ('alone-' + columns[0]),
                                                           columns)]
    for columns in SETS + SETS[::-1]:
        assert [plain(s) for s in opened(remote, cache, columns)] == alone[tuple(columns)]


def test_all_columns_and_a_set_share_one_cache_folder_at_once(remote, tmp_path):
    """A dataset of every column (no `columns=`) beside one of a set."""
    rows = file_rows(remote)
    cache = tmp_path / 'cache'
    every = opened(remote, cache, None)
    it = iter(every)
    got_every = [plain(next(it))]
    some = opened(remote, cache, ['score'])
    got_some = [plain(s) for s in some]
    got_every += [plain(s) for s in it]
    assert sorted(map(repr, got_every)) == sorted(map(repr, rows))
    assert got_some == [{'score': s['score']} for s in got_every]  # one order, one seed
