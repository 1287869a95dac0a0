"""A cold Parquet folder read in order: the head of its first file is read
beside the footers (guess_first_shard), and row group 0 is never asked for
on its own, in one process and by a DataLoader's forked workers, which take
the bytes their parent read (issue 35). nginx (test_parquet_manifest's
fixture) serves the folder through a manifest; its access log gives each
GET's body bytes, which tell the requests apart."""
import pathlib
import shutil

import pytest
from test_parquet_manifest import shown, web  # noqa: F401

from sluice import StreamingDataLoader, StreamingDataset

DATA = pathlib.Path(__file__).resolve().parents[2] / 'data' / 'parquet'
FIXTURE = DATA / 'pa26_many_row_groups.parquet'
# The fixture's row groups as its footer places them (bytes [first, last]),
# all columns: row group 0 right after the magic.
GROUPS = [(4, 871), (872, 1781), (1782, 2581), (2582, 3339), (3340, 4383), (4384, 5374),
          (5375, 6388), (6389, 7360), (7361, 7977)]


def body_bytes(log, path):
    """Body bytes of each GET of `path` in nginx's combined log."""
    sent = []
    for line in log.read_text().splitlines():
        request = line.split('"')[1].split()
        if request[0] == 'GET' and request[1] == path:
            sent.append(int(line.split('"')[2].split()[1]))
    return sorted(sent)


@pytest.mark.parametrize('workers', [0, 1, 2])
def test_row_group_zero_comes_with_the_footers_MultiProcess(tmp_path, web, workers):  # noqa: F811
    www, url, log = web
    folder = www / f'guessed{workers}'
    folder.mkdir()
    shutil.copy(FIXTURE, folder / 'a.parquet')
    (folder / 'files.txt').write_text('a.parquet\n')
    size = FIXTURE.stat().st_size
    twin = tmp_path / 'twin'
    twin.mkdir()
    shutil.copy(FIXTURE, twin / 'a.parquet')
    want = [shown(row) for row in StreamingDataset(local=str(twin), batch_size=4, shuffle=False)]
    ds = StreamingDataset(remote=f'{url}/guessed{workers}', local=str(tmp_path / 'cache'),
                          manifest='files.txt', batch_size=4, shuffle=False)
    if workers:
        loader = StreamingDataLoader(ds, batch_size=4, num_workers=workers,
                                     collate_fn=lambda b: [shown(row) for row in b])
        assert sorted(row for batch in loader for row in batch) == sorted(want)
    else:
        assert [shown(row) for row in ds] == want
    # The footer's read (the whole small file), the guess (from byte 4 to
    # the end), and row groups 1-8; never row group 0's own 868 bytes.
    expected = sorted([size, size - 4] + [last - first + 1 for first, last in GROUPS[1:]])
    assert body_bytes(log, f'/guessed{workers}/a.parquet') == expected
