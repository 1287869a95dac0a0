"""The single-pass mode over a Parquet folder (issue 41): each row group's
piece is received into memory, nothing of it written. Over nginx on a
loopback port (test_parquet_manifest's fixture, a manifest naming the
files): the rows and their order are exactly the cached mode's, in order
and shuffled, through 0 and 2 DataLoader workers, all columns or some
(`columns=`); the cache folder then holds the stream's index alone (its
listing and footer store under .sluice/, as a single pass of MDS keeps its
index.json: docs/configuration.rst, single_pass); a row group cut short on
the server after the listing fails with the cached mode's error."""
import os
import pathlib
import shutil

import pytest
from test_parquet_manifest import web  # noqa: F401

from sluice import StreamingDataLoader, StreamingDataset

DATA = pathlib.Path(__file__).resolve().parents[2] / 'data' / 'parquet'
SEED = 5
# The stream's index, kept for the node's other processes and later runs
# (the cached mode keeps the same): the manifest's listing and every file's
# footer tail, each made once per node under its lock, and the lock of the
# binary index (not written: below binary_index_from_bytes). No piece, no
# temporary, no cache state.
INDEX_FILES = ['.sluice/listing.json', '.sluice/listing.lock', '.sluice/parquet_footers',
               '.sluice/parquet_footers.lock', '.sluice/parquet_index.bin.lock']


@pytest.fixture(scope='module')
def folder(web):  # noqa: F811
    """The URL of a folder of two Parquet files of one schema (9 row groups,
    and one of 60 rows in a sub-folder) and a manifest naming them."""
    www, url, _ = web
    root = www / 'sp_parquet'
    (root / 'part=b').mkdir(parents=True)
    shutil.copy(DATA / 'pa26_many_row_groups.parquet', root / 'a.parquet')
    shutil.copy(DATA / 'pa26_codec_snappy.parquet', root / 'part=b' / 'c.parquet')
    (root / 'files.txt').write_text('a.parquet\npart=b/c.parquet\n')
    return f'{url}/sp_parquet'


def listing(folder):
    """Every file under `folder`, relative, sorted."""
    out = []
    for root, _, files in os.walk(folder):
        out += [os.path.relpath(os.path.join(root, f), folder) for f in files]
    return sorted(out)


def shown(row):
    return repr({k: v.tolist() if hasattr(v, 'tolist') else v for k, v in sorted(row.items())})


def read(url, local, shuffle, workers, single_pass, columns=None):
    ds = StreamingDataset(remote=url, local=str(local), manifest='files.txt', columns=columns,
                          shuffle=shuffle, shuffle_seed=SEED, batch_size=4,
                          num_canonical_nodes=2, single_pass=single_pass)
    loader = StreamingDataLoader(ds, batch_size=4, num_workers=workers,
                                 collate_fn=lambda b: [shown(row) for row in b])
    return [batch for batch in loader]


@pytest.mark.parametrize('columns', [None, ['text', 'id']])
@pytest.mark.parametrize('shuffle', [False, True])
@pytest.mark.parametrize('workers', [0, 2])
def test_a_single_pass_of_parquet_reads_what_the_cache_reads_MultiProcess(
        tmp_path, folder, columns, shuffle, workers):
    cached = read(folder, tmp_path / 'cached', shuffle, workers, False, columns)
    passed = read(folder, tmp_path / 'single', shuffle, workers, True, columns)
    rows = [r for batch in cached for r in batch]
    # The two files hold the same 60 rows in other row-group layouts.
    assert len(rows) == 120 and len(set(rows)) == 60
    assert all(rows.count(r) == 2 for r in set(rows))
    assert all(("'label'" in r) == (columns is None) for r in rows)
    assert passed == cached  # every batch, in order
    # The cached mode kept its row groups; the single pass its index alone.
    kept = listing(tmp_path / 'cached')
    assert any(f.startswith('.parquet_row_groups/') for f in kept)
    assert listing(tmp_path / 'single') == [f for f in kept
                                            if not f.startswith('.parquet_row_groups/')]
    if columns is None:
        assert listing(tmp_path / 'single') == INDEX_FILES


def test_a_row_group_cut_short_fails_as_the_cached_mode_fails(tmp_path, web):  # noqa: F811
    www, url, _ = web
    root = www / 'sp_parquet_cut'
    root.mkdir()
    whole = (DATA / 'pa26_many_row_groups.parquet').read_bytes()
    (root / 'files.txt').write_text('a.parquet\n')
    seen, texts = {}, {}
    for mode in ('cached', 'single'):
        args = dict(remote=f'{url}/sp_parquet_cut', local=str(tmp_path / mode),
                    manifest='files.txt', shuffle=False, batch_size=1,
                    single_pass=mode == 'single')
        (root / 'a.parquet').write_bytes(whole)
        # The node's listing and footers, made over the whole file by an
        # earlier run (which cached nothing) and read by the dataset below.
        made = tmp_path / f'{mode}_earlier'
        assert len(StreamingDataset(**{**args, 'local': str(made), 'single_pass': True})) == 60
        shutil.copytree(made / '.sluice', tmp_path / mode / '.sluice')
        # Cut inside row group 4 (of 9, 7 rows each; their chunks take
        # bytes [4, 7978), the footer and page index the rest) after the
        # listing.
        (root / 'a.parquet').write_bytes(whole[:4000])
        ds = StreamingDataset(**args)
        seen[mode] = []
        with pytest.raises(Exception) as e:
            for row in ds:
                seen[mode].append(int(row['id']))
        texts[mode] = str(e.value)
    assert seen['single'] == seen['cached']
    # Every row group's read names the size the file was listed with, which
    # the server's answer contradicts: the first row group fails, no row
    # of the changed file is served (issue 41).
    assert seen['single'] == []
    text = texts['single']
    assert 'a.parquet: row group 0, bytes ' in text
    assert (f'the object is 4000 bytes, index.json says {len(whole)} '
            '(the remote changed since it was indexed?)') in text
    piece = "shard 0 '.parquet_row_groups/a.parquet@0'"
    assert f"single pass '{tmp_path / 'single'}': receiving {piece}: a.parquet: " in text
    # The cached mode peeks the first row: the peek's error ends its pass
    # (a changed file, which no download heals), the same error.
    assert texts['cached'].startswith(
        "corrupt: peeking global shard 0 sample 0, the pass's first: a.parquet: row group 0, ")
    assert texts['cached'].endswith(text[text.index('a.parquet: row group 0, '):])
    assert listing(tmp_path / 'single') == INDEX_FILES
