"""The Hugging Face-shaped fixture (hf_text.parquet: a text column and its
token ids, 64 rows in one row group) as a table of COPIES files on a loopback
nginx, which cannot list (a manifest names the files), streamed by several
ranks, each its own node with its own cache and two DataLoader workers
(issue 35). Each rank reads exactly the rows its plan gives, in the order
the same folder read in place gives; together the ranks read every row of
every file once; and on the wire each node asks once for the manifest, once
(HEAD) for each file's size, once for each footer and once for each row
group its plan reads."""
import collections
import shutil

import pytest
from test_parquet_manifest import DATA, web  # noqa: F401
from test_parquet_s3_ranks import COPIES, expected_rows, pairs

from sluice import LocalDataset, StreamingDataLoader, StreamingDataset
from sluice.world import World

ROWS = 64  # a file's rows: its one row group
BATCH = 4
WORKERS = 2


def as_pair(row):
    return row['text'], tuple(row['input_ids'].tolist())


@pytest.fixture(scope='module')
def hf_table(web):  # noqa: F811
    """(URL, the same files in a local folder): COPIES copies of the fixture
    and the manifest naming them."""
    www, url, _ = web
    root = www / 'hf-ranks'
    root.mkdir()
    names = [f'part-{k:05d}.parquet' for k in range(COPIES)]
    for name in names:
        shutil.copy(DATA / 'hf_text.parquet', root / name)
    (root / 'files.txt').write_text(''.join(n + '\n' for n in names))
    twin = www.parent / 'hf-ranks-twin'
    twin.mkdir()
    for name in names:
        shutil.copy(root / name, twin / name)
    return f'{url}/hf-ranks', twin


def requests(log, since):
    """'METHOD /hf-ranks/NAME' -> count, of the access log's lines after `since`."""
    lines = log.read_text().splitlines()[since:]
    return collections.Counter(' '.join(line.split('"')[1].split()[:2]) for line in lines)


@pytest.mark.parametrize('ranks', [2, 3])
def test_ranks_with_workers_read_their_plan_once_a_node_MultiProcess(
        web, hf_table, tmp_path, monkeypatch, ranks):  # noqa: F811
    _, _, log = web
    url, twin = hf_table
    in_place = LocalDataset(str(twin))
    got = []
    for rank in range(ranks):
        monkeypatch.setenv('WORLD_SIZE', str(ranks))
        monkeypatch.setenv('RANK', str(rank))
        monkeypatch.delenv('LOCAL_WORLD_SIZE', raising=False)  # each rank its own node
        monkeypatch.delenv('LOCAL_RANK', raising=False)
        args = dict(batch_size=BATCH, shuffle=True, shuffle_seed=17)
        since = len(log.read_text().splitlines())
        ds = StreamingDataset(remote=url, local=str(tmp_path / f'cache{ranks}-{rank}'),
                              manifest='files.txt', **args)
        assert ds._engine.format == 'parquet'
        loader = StreamingDataLoader(ds, batch_size=BATCH, num_workers=WORKERS, collate_fn=pairs)
        streamed = [row for batch in loader for row in batch]
        local = StreamingDataset(local=str(twin), **args)
        assert streamed == [row for batch in StreamingDataLoader(
            local, batch_size=BATCH, num_workers=WORKERS, collate_fn=pairs) for row in batch]
        # The plan: the loader takes its workers' batches in turn.
        plan = ds.plan(world=World(ranks, 1, WORKERS, rank * WORKERS), workers=WORKERS)
        ids = [plan.worker_ids(rank, 0, w).tolist() for w in range(WORKERS)]
        assert len({len(i) for i in ids}) == 1  # 192 rows: equal workers for 2 and 3 ranks
        planned = [i for k in range(0, len(ids[0]), BATCH) for w in ids for i in w[k:k + BATCH]]
        assert streamed == [as_pair(in_place[i]) for i in planned], rank
        files = {f'/hf-ranks/part-{i // ROWS:05d}.parquet' for i in planned}
        want = collections.Counter({'GET /hf-ranks/files.txt': 1})
        for k in range(COPIES):
            name = f'/hf-ranks/part-{k:05d}.parquet'
            want[f'HEAD {name}'] = 1
            want[f'GET {name}'] = 1 + (name in files)  # the footer, then the row group
        assert requests(log, since) == want, rank
        got += streamed
    want = expected_rows()
    assert len(set(want)) == ROWS
    assert collections.Counter(got) == collections.Counter(want * COPIES)
    assert len(got) == ROWS * COPIES
