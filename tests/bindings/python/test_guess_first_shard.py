"""guess_first_shard, on by default, seen from Python: a DataLoader's parent
opens a cold dataset (the first shard's head asked for beside index.json)
and reads nothing itself; its forked workers take those bytes for their
first samples instead of peeking: shard.00000.mds is asked for twice in
all, the guess (1 MiB past its first offsets entry) and the one download,
and the epoch is exact. nginx on a loopback port (test_parquet_manifest's
fixture), its access log read for the requests."""
import pytest
from test_parquet_manifest import web  # noqa: F401

from sluice import MDSWriter, StreamingDataLoader, StreamingDataset

GUESS_BYTES = 4 + (1 << 20)  # the first offsets entry and 1 MiB past it


def shard_requests(log, name):
    """Body bytes sent for each GET of `name` in nginx's combined log."""
    sent = []
    for line in log.read_text().splitlines():
        request = line.split('"')[1]
        if request.split()[1].endswith('/' + name):
            sent.append(int(line.split('"')[2].split()[1]))
    return sent


@pytest.mark.parametrize('workers', [1, 2])
def test_a_dataloaders_workers_take_the_parents_guess_MultiProcess(tmp_path, web, workers):  # noqa: F811
    www, url, log = web
    folder = www / f'guess{workers}'
    payload = [bytes([i % 251]) * 40_000 for i in range(120)]
    with MDSWriter(out=str(folder), columns={'id': 'int', 'data': 'bytes'},
                   size_limit=3 << 20) as w:
        for i, data in enumerate(payload):
            w.write({'id': i, 'data': data})
    shard0 = (folder / 'shard.00000.mds').stat().st_size
    assert shard0 > GUESS_BYTES
    ds = StreamingDataset(remote=f'{url}/guess{workers}', local=str(tmp_path / 'cache'),
                          batch_size=8, shuffle=False)
    loader = StreamingDataLoader(ds, batch_size=8, num_workers=workers,
                                 collate_fn=lambda b: [(s['id'], s['data']) for s in b])
    got = sorted(pair for batch in loader for pair in batch)
    assert got == list(enumerate(payload))
    # The parent's guess, then the node's one download of the file (nginx
    # logs a request once answered: both are there once the epoch is read).
    assert sorted(shard_requests(log, f'guess{workers}/shard.00000.mds')) == [GUESS_BYTES, shard0]
