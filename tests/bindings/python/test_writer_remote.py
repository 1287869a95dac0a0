"""Writers with a remote `out` (a URL, or a (local, remote) pair), merge_index
over remote folders and dataframe_to_mds to a remote: against a local folder,
a file:// URL and a real, signature-verifying s3rver (s3rver_fixture.py). What
lands remotely is byte-identical to Mosaic's datasets."""
import json
import os
import shutil
import time

import numpy as np
import pandas as pd
import pytest

import sluice
from sluice.remote import remote_list, remote_read, remote_write
from conftest import DATA
from s3rver_fixture import KEY_ID, SECRET, s3, s3rver  # noqa: F401
from test_writer import assert_same_files, rewrite


def compat_files(name):
    return sorted(n for n in os.listdir(os.path.join(DATA, name)) if n != 'expected.jsonl')


def assert_remote_same(url, name):
    """Every file of compat dataset `name` (and nothing else) is at `url`,
    byte for byte."""
    assert remote_list(url) == compat_files(name)
    for n in compat_files(name):
        with open(os.path.join(DATA, name, n), 'rb') as f:
            assert remote_read(url, n) == f.read(), n


# --- local folders and file:// ------------------------------------------------

def test_mds_writer_to_a_file_url_stages_in_a_temporary_folder(tmp_path):
    remote = tmp_path / 'remote'
    w = sluice.MDSWriter(out='file://' + str(remote), columns={'x': 'int'})
    staging = w.local
    assert w.remote == 'file://' + str(remote) and os.path.isdir(staging)
    assert not staging.startswith(str(tmp_path))
    w.finish()
    assert not os.path.exists(staging)  # keep_local=False: removed, as Mosaic
    rewrite('hashed_all_algos', 'file://' + str(tmp_path / 'r2'))
    assert_same_files(tmp_path / 'r2', os.path.join(DATA, 'hashed_all_algos'))


@pytest.mark.parametrize('keep_local', [True, False])
def test_local_remote_pair(tmp_path, keep_local):
    local, remote = tmp_path / 'local', tmp_path / 'remote'
    rewrite('all_encodings', (str(local), str(remote)), keep_local=keep_local, max_workers=2)
    assert_same_files(remote, os.path.join(DATA, 'all_encodings'))
    if keep_local:
        assert_same_files(local, os.path.join(DATA, 'all_encodings'))
    else:
        assert not os.path.exists(local)


def test_shards_are_uploaded_while_writing_and_index_last(tmp_path):
    local, remote = tmp_path / 'local', tmp_path / 'remote'
    w = sluice.MDSWriter(out=(str(local), str(remote)), columns={'x': 'bytes'},
                         size_limit='8kb', max_workers=1)
    for i in range(40):
        w.write({'x': bytes([i]) * 1000})
    deadline = time.time() + 20
    while not (remote / 'shard.00000.mds').exists() and time.time() < deadline:
        time.sleep(0.02)
    assert (remote / 'shard.00000.mds').exists()  # before finish()
    assert not (remote / 'index.json').exists()
    assert not (local / 'shard.00000.mds').exists()  # removed once uploaded
    files, nbytes = w.uploaded()
    assert files >= 1 and nbytes >= os.path.getsize(remote / 'shard.00000.mds')
    w.finish()
    index = json.load(open(remote / 'index.json'))
    assert len(index['shards']) == 6
    assert sorted(os.listdir(remote)) == ['index.json'] + [f'shard.{i:05}.mds' for i in range(6)]
    ds = sluice.LocalDataset(str(remote))
    assert [ds[i]['x'] for i in (0, 39)] == [b'\0' * 1000, bytes([39]) * 1000]


def test_exist_ok_and_non_empty_local(tmp_path):
    local = tmp_path / 'l'
    local.mkdir()
    (local / 'old.txt').write_text('x')
    with pytest.raises(FileExistsError, match='not empty'):
        sluice.MDSWriter(out=(str(local), str(tmp_path / 'r')), columns={'x': 'int'})
    with sluice.MDSWriter(out=(str(local), str(tmp_path / 'r')), columns={'x': 'int'},
                          exist_ok=True, keep_local=True) as w:
        w.write({'x': 1})
    assert sorted(os.listdir(local)) == ['index.json', 'shard.00000.mds']  # emptied first


def test_merge_index_over_file_urls(tmp_path):
    root = tmp_path / 'merged'
    shutil.copytree(os.path.join(DATA, 'merged'), root)
    os.remove(root / 'index.json')
    url = 'file://' + str(root)
    sluice.merge_index(url)
    with open(root / 'index.json', 'rb') as a, \
            open(os.path.join(DATA, 'merged', 'index.json'), 'rb') as b:
        assert a.read() == b.read()


# --- s3rver ---------------------------------------------------------------------

@pytest.mark.parametrize('name', ['hashed_all_algos', 'compressed_zstd_hashed'])
def test_mds_writer_to_s3_is_byte_identical(s3, name):
    url = f'{s3}/mds/{name}'
    rewrite(name, url, max_workers=3)
    assert_remote_same(url, name)


def test_json_writer_to_s3_with_crlf(s3, tmp_path):
    rows = [json.loads(line)['value'] for line in
            open(os.path.join(DATA, 'json_crlf_newline', 'expected.jsonl'))]
    url = f'{s3}/json/crlf'
    with sluice.JSONWriter(out=(str(tmp_path / 'l'), url), keep_local=True, newline='\r\n',
                           columns={'id': 'int', 'name': 'str', 'score': 'float'},
                           size_limit=4096) as w:
        for r in rows:
            w.write(r)
        staged = w.local
    assert_remote_same(url, 'json_crlf_newline')
    assert_same_files(staged, os.path.join(DATA, 'json_crlf_newline'))


def test_streaming_dataset_reads_what_was_uploaded(s3, tmp_path):
    if not sluice.engine.available():
        pytest.skip('this libsluice.so has no streaming engine')
    url = f'{s3}/stream'
    with sluice.MDSWriter(out=url, columns={'id': 'int64', 'v': 'str'}, size_limit='2kb') as w:
        for i in range(300):
            w.write({'id': i, 'v': f'value {i}'})
    ds = sluice.StreamingDataset(remote=url, local=str(tmp_path / 'cache'), batch_size=10)
    assert len(ds) == 300
    assert [ds[i]['v'] for i in (0, 150, 299)] == ['value 0', 'value 150', 'value 299']


def test_upload_error_names_file_and_url_not_secret(s3, tmp_path):
    w = sluice.MDSWriter(out=(str(tmp_path / 'l'), 's3://nobucket/ds'), columns={'x': 'int'})
    w.write({'x': 1})
    with pytest.raises(OSError) as e:
        w.finish()
    text = str(e.value)
    assert 's3://nobucket/ds/shard.00000.mds' in text
    assert str(tmp_path / 'l' / 'shard.00000.mds') in text
    assert SECRET not in text and KEY_ID not in text


def _upload_compat(url, name):
    for dirpath, _, files in os.walk(os.path.join(DATA, name)):
        for f in files:
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, os.path.join(DATA, name))
            if rel != 'index.json' and f != 'expected.jsonl':
                remote_write(url, rel, open(path, 'rb').read())


def test_merge_index_over_s3(s3, tmp_path):
    url = f'{s3}/merged'
    _upload_compat(url, 'merged')
    want = open(os.path.join(DATA, 'merged', 'index.json'), 'rb').read()
    sluice.merge_index(url)  # every <sub>/index.json under the root, sorted
    assert remote_read(url, 'index.json') == want
    # A list of remote index files, merged into another remote root.
    sluice.merge_index([f'{url}/{p}/index.json' for p in ('part0', 'part2', 'part3')],
                       f'{s3}/merged_copy')
    assert remote_read(f'{s3}/merged_copy', 'index.json') == want
    # (local, remote) pairs: read locally where the copy exists, else remotely;
    # the merged index is written locally and uploaded.
    local = tmp_path / 'merged'
    (local / 'part0').mkdir(parents=True)
    shutil.copy(os.path.join(DATA, 'merged', 'part0', 'index.json'), local / 'part0')
    pairs = [(str(local / p / 'index.json'), f'{url}/{p}/index.json')
             for p in ('part0', 'part2', 'part3')]
    sluice.merge_index(pairs, (str(local), f'{s3}/merged_pairs'))
    assert open(local / 'index.json', 'rb').read() == want
    assert remote_read(f'{s3}/merged_pairs', 'index.json') == want


def test_dataframe_to_mds_to_s3(s3, tmp_path):
    df = pd.DataFrame({'id': np.arange(40, dtype=np.int64),
                       'name': [f'row {i}' for i in range(40)]})
    local, remote = sluice.dataframe_to_mds(df, mds_kwargs={'out': f'{s3}/df',
                                                            'size_limit': '256b'})
    assert remote == f'{s3}/df'
    assert not os.path.exists(local)  # keep_local=False: the staging folder is gone
    keys = remote_list(f'{s3}/df')
    assert 'index.json' in keys and '0/index.json' in keys
    index = json.loads(remote_read(f'{s3}/df', 'index.json'))
    assert sum(s['samples'] for s in index['shards']) == 40
    assert all(s['raw_data']['basename'].startswith('0/') for s in index['shards'])
    local = tmp_path / 'copy'
    for k in keys:
        os.makedirs(local / os.path.dirname(k), exist_ok=True)
        (local / k).write_bytes(remote_read(f'{s3}/df', k))
    ds = sluice.LocalDataset(str(local))
    assert [ds[i]['name'] for i in range(len(ds))] == list(df['name'])


def test_dask_partitions_upload_concurrently_to_s3(s3, tmp_path):
    # Dask's default threaded scheduler: several writers, each with its own
    # uploader, share the process's event loop at once.
    dd = pytest.importorskip('dask.dataframe')
    df = pd.DataFrame({'id': np.arange(90, dtype=np.int64),
                       'name': [f'name {i}' for i in range(90)]})
    ddf = dd.from_pandas(df, npartitions=3)
    _, remote = sluice.dataframe_to_mds(ddf, mds_kwargs={'out': f'{s3}/dask', 'size_limit': '512b',
                                                         'max_workers': 2})
    assert remote == f'{s3}/dask'
    keys = remote_list(f'{s3}/dask')
    assert [k for k in keys if k.endswith('index.json')] == [
        '0/index.json', '1/index.json', '2/index.json', 'index.json']
    index = json.loads(remote_read(f'{s3}/dask', 'index.json'))
    assert sum(s['samples'] for s in index['shards']) == 90
    shards = sorted(s['zip_data']['basename'] for s in index['shards'])  # zstd by default
    assert shards == sorted(k for k in keys if k.endswith('.mds.zstd'))  # every shard is up
    local = tmp_path / 'copy'
    for k in keys:
        os.makedirs(local / os.path.dirname(k), exist_ok=True)
        (local / k).write_bytes(remote_read(f'{s3}/dask', k))
    ds = sluice.LocalDataset(str(local))
    assert [int(ds[i]['id']) for i in range(len(ds))] == list(range(90))


def test_dataframe_to_mds_defaults_to_zstd_as_mosaic(tmp_path):
    df = pd.DataFrame({'id': np.arange(5, dtype=np.int64)})
    out, _ = sluice.dataframe_to_mds(df, mds_kwargs={'out': str(tmp_path / 'z')})
    index = json.load(open(os.path.join(out, 'index.json')))
    assert {s['compression'] for s in index['shards']} == {'zstd'}
    assert index['shards'][0]['zip_data']['basename'] == '0/shard.00000.mds.zstd'
    out, _ = sluice.dataframe_to_mds(df, mds_kwargs={'out': str(tmp_path / 'n'),
                                                     'compression': None})
    assert json.load(open(os.path.join(out, 'index.json')))['shards'][0]['compression'] is None
