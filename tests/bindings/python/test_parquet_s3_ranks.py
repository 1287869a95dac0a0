"""The Hugging Face-shaped fixture (hf_text.parquet: a text column and its
token ids, 64 rows in one row group) as a table of COPIES files on s3rver,
streamed by several ranks, each its own node with its own cache and two
DataLoader workers (issue 35). Together the ranks read every row of every
file once, each with the values hf_text.expected.json records, and each
rank reads exactly the order the same folder read in place gives (Mosaic's
order depends only on the row groups, not on where they are stored)."""
import collections
import json
import pathlib
import shutil

import pytest

from sluice import StreamingDataLoader, StreamingDataset
from sluice.remote import remote_write
from s3rver_fixture import s3, s3rver  # noqa: F401

DATA = pathlib.Path(__file__).resolve().parents[2] / 'data' / 'parquet'
COPIES = 3
BATCH = 4


def expected_rows():
    columns = json.loads((DATA / 'hf_text.expected.json').read_text())['columns']
    assert [c['name'] for c in columns] == ['text', 'input_ids']
    return [(text, tuple(ids)) for text, ids in zip(columns[0]['values'], columns[1]['values'])]


def pairs(batch):
    return [(s['text'], tuple(s['input_ids'].tolist())) for s in batch]


@pytest.fixture
def table(tmp_path):
    root = tmp_path / 'table'
    root.mkdir()
    for k in range(COPIES):
        shutil.copy(DATA / 'hf_text.parquet', root / f'part-{k:05d}.parquet')
    return root


def read_rank(monkeypatch, ranks, rank, **where):
    monkeypatch.setenv('WORLD_SIZE', str(ranks))
    monkeypatch.setenv('RANK', str(rank))
    monkeypatch.delenv('LOCAL_WORLD_SIZE', raising=False)  # each rank its own node
    monkeypatch.delenv('LOCAL_RANK', raising=False)
    ds = StreamingDataset(batch_size=BATCH, shuffle=True, shuffle_seed=17, **where)
    assert ds._engine.format == 'parquet'
    loader = StreamingDataLoader(ds, batch_size=BATCH, num_workers=2, collate_fn=pairs)
    return [row for batch in loader for row in batch]


@pytest.mark.parametrize('ranks', [2, 3])
def test_ranks_with_workers_read_every_row_once_in_the_local_order_MultiProcess(
        s3, table, tmp_path, monkeypatch, ranks):
    url = f'{s3}/hf-text-{ranks}'
    for path in sorted(table.iterdir()):
        remote_write(url, path.name, path.read_bytes())
    got = []
    for rank in range(ranks):
        streamed = read_rank(monkeypatch, ranks, rank, remote=url,
                             local=str(tmp_path / f'cache{rank}'))
        assert streamed == read_rank(monkeypatch, ranks, rank, local=str(table)), rank
        got += streamed
    want = expected_rows()
    assert len(set(want)) == 64
    assert collections.Counter(got) == collections.Counter(want * COPIES)
    assert len(got) == 64 * COPIES  # 192 rows: 2 and 3 ranks both divide them
