"""A Parquet folder on a web server, which cannot list: Stream's and
StreamingDataset's `manifest` names its files (the engine's parquet.manifest,
read once per node), and the rows are exact, in the canonical order of the
same folder read in place; a manifest that is missing or malformed is an
error naming its URL. nginx on a loopback port, started here."""
import os
import pathlib
import shutil
import socket
import subprocess
import time

import pytest
from s3rver_fixture import _free_port

from sluice import LocalDataset, Stream, StreamingDataset, load_parquet

DATA = pathlib.Path(__file__).resolve().parents[2] / 'data' / 'parquet'


@pytest.fixture(scope='module')
def web(tmp_path_factory):
    """(www root, base URL, access log): nginx serving the root."""
    nginx = shutil.which('nginx')
    if not nginx:
        pytest.skip('nginx is not installed')
    work = tmp_path_factory.mktemp('nginx')
    www = work / 'www'
    www.mkdir()
    port = _free_port()
    (work / 'nginx.conf').write_text(
        f'daemon off; master_process off; worker_processes 1; pid {work}/nginx.pid;\n'
        f'error_log {work}/error.log; events {{ worker_connections 64; }}\n'
        f'http {{ access_log {work}/access.log; client_body_temp_path {work}/tmp;\n'
        f'  proxy_temp_path {work}/tmp; fastcgi_temp_path {work}/tmp;\n'
        f'  uwsgi_temp_path {work}/tmp; scgi_temp_path {work}/tmp;\n'
        f'  server {{ listen 127.0.0.1:{port}; root {www}; }} }}\n')
    proc = subprocess.Popen([nginx, '-p', str(work), '-c', str(work / 'nginx.conf'),
                             '-e', str(work / 'error.log')])
    try:
        for _ in range(500):
            try:
                socket.create_connection(('127.0.0.1', port), timeout=0.1).close()
                break
            except OSError:
                time.sleep(0.01)
        else:
            pytest.fail(f'nginx did not start on 127.0.0.1:{port}')
        yield www, f'http://127.0.0.1:{port}', work / 'access.log'
    finally:
        proc.kill()
        proc.wait()


def shown(row):
    return repr({k: v.tolist() if hasattr(v, 'tolist') else v for k, v in row.items()})


@pytest.fixture(scope='module')
def table(web):
    """A folder of two Parquet files of one schema (one in a sub-folder, of
    another row-group layout), a third the manifest leaves out, and the
    manifest; the two again in a local folder, to be read in place."""
    www, url, _ = web
    root = www / 'table'
    (root / 'part=b').mkdir(parents=True)
    shutil.copy(DATA / 'pa26_many_row_groups.parquet', root / 'a.parquet')
    shutil.copy(DATA / 'pa26_codec_snappy.parquet', root / 'part=b' / 'c.parquet')
    shutil.copy(DATA / 'hf_image.parquet', root / 'left_out.parquet')
    (root / 'files.txt').write_text('# the table\npart=b/c.parquet\n{"path": "a.parquet"}\n')
    (root / 'bad.txt').write_text('a.parquet\n{"path": 3}\n')
    twin = www.parent / 'twin'
    (twin / 'part=b').mkdir(parents=True)
    shutil.copy(root / 'a.parquet', twin / 'a.parquet')
    shutil.copy(root / 'part=b' / 'c.parquet', twin / 'part=b' / 'c.parquet')
    return f'{url}/table', twin


def _gets(log, path):
    return sum(1 for line in log.read_text().splitlines() if f'"GET {path} ' in line)


@pytest.mark.parametrize('shuffle', [False, True])
def test_a_manifest_streams_an_https_style_folder_exactly(web, table, tmp_path, shuffle):
    _, _, log = web
    url, twin = table
    before = _gets(log, '/table/files.txt')
    args = dict(batch_size=4, shuffle=shuffle, shuffle_seed=3)
    ds = StreamingDataset(remote=url, local=str(tmp_path / 'cache'), manifest='files.txt', **args)
    in_place = StreamingDataset(local=str(twin), **args)
    assert len(ds) == len(in_place) == len(LocalDataset(str(twin)))
    want = [shown(row) for row in in_place]
    assert [shown(row) for row in ds] == want
    assert [shown(ds[i]) for i in range(len(ds))] == [shown(in_place[i])
                                                       for i in range(len(ds))]
    # The manifest is read once per node: a second dataset on the same
    # cache folder takes the listing kept there.
    again = StreamingDataset(remote=url, local=str(tmp_path / 'cache'), manifest='files.txt',
                             **args)
    assert [shown(row) for row in again] == want
    assert _gets(log, '/table/files.txt') == before + 1
    assert _gets(log, '/table/left_out.parquet') == 0


def test_a_stream_takes_a_manifest_and_its_columns(table, tmp_path):
    url, twin = table
    stream = Stream(remote=url, local=str(tmp_path / 'cache'), manifest='files.txt',
                    columns=['text'])
    assert stream.manifest == 'files.txt'
    ds = StreamingDataset(streams=[stream], batch_size=2)
    want = [shown({'text': row['text']}) for row in StreamingDataset(local=str(twin),
                                                                     batch_size=2)]
    assert [shown(row) for row in ds] == want
    with pytest.raises(ValueError, match='give each Parquet Stream its own `manifest`'):
        StreamingDataset(streams=[stream], manifest='files.txt')


def test_a_missing_or_malformed_manifest_is_an_error_naming_its_url(table, tmp_path):
    url, _ = table
    with pytest.raises(Exception) as missing:
        StreamingDataset(remote=url, local=str(tmp_path / 'a'), manifest='nope.txt')
    assert f'manifest {url}/nope.txt' in str(missing.value)
    assert '404' in str(missing.value)
    with pytest.raises(Exception) as bad:
        StreamingDataset(remote=url, local=str(tmp_path / 'b'), manifest='bad.txt')
    assert str(bad.value).endswith(f'{url} manifest bad.txt line 2: "path" must be a string')
    assert not os.path.exists(tmp_path / 'b' / '.sluice' / 'listing.json')


def test_load_parquet_passes_the_manifest_on(table, tmp_path):
    url, twin = table
    ds = load_parquet(data_files=url, local=str(tmp_path / 'cache'), manifest='files.txt',
                      batch_size=4)
    assert [shown(row) for row in ds] == [shown(row) for row in load_parquet(str(twin),
                                                                            batch_size=4)]
