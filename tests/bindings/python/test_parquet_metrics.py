"""StreamingDataset.metrics() over a Parquet stream (issue 35): the engine's
counters count rows as samples and row groups as shards, as for MDS. (The
raw-file StreamingFileDataset's metrics do not apply: its samples are whole
files, so a Parquet file would be one sample of undecoded bytes.)"""
import pathlib
import shutil

from sluice import StreamingDataset

DATA = pathlib.Path(__file__).resolve().parents[2] / 'data' / 'parquet'


def test_counts_of_a_parquet_folder_read_twice(tmp_path):
    # 2 files x 9 row groups (7 rows each, the last 4): 120 rows, 18 groups.
    remote = tmp_path / 'table'
    remote.mkdir()
    for name in ('a.parquet', 'b.parquet'):
        shutil.copy(DATA / 'pa26_many_row_groups.parquet', remote / name)
    local = tmp_path / 'cache'
    ds = StreamingDataset(remote=str(remote), local=str(local), batch_size=8, shuffle=False)
    assert ds._engine.format == 'parquet'
    assert len([s for s in ds]) == 120
    m = ds.metrics()
    assert m['remote'] == str(remote)
    t = m['totals']
    assert (t['samples'], t['downloads'], t['shards_downloaded']) == (120, 18, 18)
    pieces = sorted((local / '.parquet_row_groups').iterdir())
    assert [p.name.split('.e')[0] for p in pieces] == sorted(
        f'{f}.parquet@{g}' for f in 'ab' for g in range(9))
    # A piece is the group's column chunks, fetched, then the file's footer
    # tail (footer, its length, PAR1), copied from the footer already read:
    # bytes_downloaded counts the fetched chunks, the cache the whole pieces.
    data = (DATA / 'pa26_many_row_groups.parquet').read_bytes()
    tail = data[-(int.from_bytes(data[-8:-4], 'little') + 8):]
    assert all(p.read_bytes().endswith(tail) for p in pieces)
    stored = sum(p.stat().st_size for p in pieces)
    assert t['bytes_downloaded'] == stored - len(pieces) * len(tail) == 15948
    assert t['cache_bytes_on_disk'] == stored
    assert (t['shards_evicted'], t['download_errors']) == (0, 0)
    assert m['window']['samples'] == 120 and m['window']['downloads'] == 18

    assert len([s for s in ds]) == 120  # the second epoch: every group cached
    m = ds.metrics()
    w = m['window']
    assert (w['samples'], w['downloads'], w['bytes_downloaded']) == (120, 0, 0)
    assert m['totals']['samples'] == 240
