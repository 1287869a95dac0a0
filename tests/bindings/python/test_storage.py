"""sluice.upload / sluice.download (served as streaming.base.storage):
Mosaic's uploader and downloader classes chosen by scheme, its `out` rules
and error texts, and real transfers through Sluice's stores (a local folder
and a signature-verifying s3rver)."""
import os

import pytest

from sluice import _lib, download, storage, upload
from sluice.remote import remote_read, remote_write
from test_writer_remote import KEY_ID, SECRET, s3, s3rver  # noqa: F401 (fixtures)


@pytest.fixture
def no_bucket_check(monkeypatch):
    """Constructs store uploaders without reaching their store."""
    monkeypatch.setattr(upload._StoreUploader, 'check_bucket_exists', lambda self, remote: None)


@pytest.mark.parametrize(('out', 'cls'), [
    ('s3://b/d', upload.S3Uploader), ('gs://b/d', upload.GCSUploader),
    ('oci://b/d', upload.OCIUploader), ('azure://c/d', upload.AzureUploader),
    ('azure-dl://c/d', upload.AzureDataLakeUploader),
    ('dbfs:/Volumes/cat/schema/vol', upload.DatabricksUnityCatalogUploader),
    ('dbfs:/tmp/d', upload.DBFSUploader), (None, upload.LocalUploader)])
def test_cloud_uploader_get_picks_mosaics_class(tmp_path, no_bucket_check, out, cls):
    local = str(tmp_path / 'local')
    made = upload.CloudUploader.get(out or local)
    assert type(made) is cls
    pair = upload.CloudUploader.get((local, out or str(tmp_path / 'remote')))
    assert type(pair) is cls and pair.local == local
    if out:
        assert made.remote == out and os.path.isdir(made.local) and made.local != local
    else:
        assert (made.local, made.remote) == (local, None)


def test_out_is_checked_with_mosaics_errors(tmp_path, no_bucket_check):
    with pytest.raises(ValueError, match=r'^Invalid `out` argument\. It is either a string of '
                                         r'local/remote directory or a list of two strings '
                                         r'with \[local, remote\]\.$'):
        upload.CloudUploader.get(('a', 'b', 'c'))
    with pytest.raises(ValueError, match=r'^Invalid Cloud provider prefix: gcs\.$'):
        upload.CloudUploader.get((str(tmp_path / 'x'), 'gcs://b/d'))
    with pytest.raises(ValueError, match=r'^Invalid Cloud provider prefix: ss4\.$'):
        upload.S3Uploader(out='ss4://b/d')
    full = tmp_path / 'full'
    full.mkdir()
    (full / 'f').write_text('x')
    with pytest.raises(FileExistsError, match=f'^Directory is not empty: {full}$'):
        upload.CloudUploader.get((str(full), 's3://b/d'))
    assert upload.CloudUploader.get(str(full), exist_ok=True).local == str(full)
    with pytest.raises(NotImplementedError, match=r"^HFUploader: Sluice has no store for "
                                                  r"'hf://datasets/o/r'"):
        upload.CloudUploader.get((str(tmp_path / 'h'), 'hf://datasets/o/r'))


def test_local_uploader_copies_clears_and_lists(tmp_path):
    local, remote = tmp_path / 'local', tmp_path / 'remote'
    up = upload.LocalUploader(out=(str(local), str(remote)))
    assert remote.is_dir()
    (local / 'sub').mkdir()
    (local / 'sub' / 'b.txt').write_text('b')
    (local / 'sub' / 'a.txt').write_text('a')
    assert up.list_objects() == [str(local / 'sub' / 'a.txt'), str(local / 'sub' / 'b.txt')]
    assert up.list_objects('sub/b') == [str(local / 'sub' / 'b.txt')]
    (remote / 'sub').mkdir()
    up.upload_file('sub/a.txt')
    assert (remote / 'sub' / 'a.txt').read_text() == 'a'
    assert not (local / 'sub' / 'a.txt').exists()  # keep_local=False
    up.retry = 1
    with pytest.raises(FileNotFoundError, match='No such file or directory'):
        up.upload_file('missing.txt')


def test_s3_uploader_and_downloader_through_the_store(s3, tmp_path):  # noqa: F811
    local = tmp_path / 'local'
    up = upload.CloudUploader.get((str(local), f'{s3}/up/dir'), keep_local=True)
    assert type(up) is upload.S3Uploader
    (local / 'shard.00000.mds').write_bytes(b'\x00\x01shard')
    up.upload_file('shard.00000.mds')
    assert remote_read(f'{s3}/up/dir', 'shard.00000.mds') == b'\x00\x01shard'
    assert (local / 'shard.00000.mds').exists()  # keep_local
    assert up.list_objects() == ['up/dir/shard.00000.mds']

    got = tmp_path / 'down' / 'shard.mds'
    download.CloudDownloader.direct_download(f'{s3}/up/dir/shard.00000.mds', str(got))
    assert got.read_bytes() == b'\x00\x01shard'
    remote_write(f'{s3}/up/dir', 'shard.00000.mds', b'changed')
    download.S3Downloader().download(f'{s3}/up/dir/shard.00000.mds', str(got))
    assert got.read_bytes() == b'\x00\x01shard'  # a file already there is kept
    assert os.listdir(tmp_path / 'down') == ['shard.mds']  # no temporary left
    with pytest.raises(FileNotFoundError):
        download.download_file(f'{s3}/up/dir/nope', str(tmp_path / 'nope'))
    assert sorted(os.listdir(tmp_path)) == ['down', 'local']  # no temporary, no 'nope'


def test_downloaders_stream_into_the_file_without_reading_it_whole(s3, tmp_path,  # noqa: F811
                                                                     monkeypatch):
    payload = bytes(range(256)) * (3 * 4096 + 7)  # ~3 MiB
    remote_write(f'{s3}/stream', 'd/big.bin', payload)

    def whole_read(*args, **kwargs):
        raise AssertionError('the downloader read the whole object into memory')
    monkeypatch.setattr(_lib.lib, 'sluice_remote_read', whole_read)
    got = tmp_path / 'big.bin'
    download.S3Downloader().download(f'{s3}/stream/d/big.bin', str(got))
    assert got.read_bytes() == payload
    assert os.listdir(tmp_path) == ['big.bin']


def test_a_missing_bucket_is_named_without_the_secret(s3, tmp_path):  # noqa: F811
    with pytest.raises(OSError) as e:
        upload.S3Uploader(out=(str(tmp_path / 'l'), 's3://nobucket/ds'))
    assert 'S3Uploader: bucket of s3://nobucket/ds' in str(e.value)
    assert SECRET not in str(e.value) and KEY_ID not in str(e.value)


@pytest.mark.parametrize(('remote', 'cls'), [
    ('s3://b/k', download.S3Downloader), ('gs://b/k', download.GCSDownloader),
    ('oci://b/k', download.OCIDownloader), ('azure://c/k', download.AzureDownloader),
    ('azure-dl://c/k', download.AzureDataLakeDownloader), ('hf://d/k', download.HFDownloader),
    ('sftp://h/k', download.SFTPDownloader), ('alipan://c/k', download.AlipanDownloader),
    ('dbfs:/Volumes/a/b', download.DatabricksUnityCatalogDownloader),
    ('dbfs:/a/b', download.DBFSDownloader), ('/a/b', download.LocalDownloader),
    (None, download.LocalDownloader)])
def test_cloud_downloader_get_picks_mosaics_class(remote, cls):
    assert type(download.CloudDownloader.get(remote)) is cls


def test_downloader_errors(tmp_path):
    with pytest.raises(ValueError, match=r'^Unsupported remote path: ftp://h/k$'):
        download.CloudDownloader.get('ftp://h/k')
    with pytest.raises(ValueError, match=r'^In the absence of local dataset, path to remote '
                                         r'dataset must be provided$'):
        download.CloudDownloader.get('/a/b').download('', str(tmp_path / 'x'))
    with pytest.raises(ValueError, match=r'^Expected remote path to start with url scheme of '
                                         r'`s3`, got gs://b/k\.$'):
        download.S3Downloader().download('gs://b/k', str(tmp_path / 'x'))
    with pytest.raises(NotImplementedError, match="^SFTPDownloader: Sluice has no store for"):
        download.SFTPDownloader().download('sftp://h/k', str(tmp_path / 'x'))
    (tmp_path / 'src').write_bytes(b'abc')
    download.LocalDownloader().download(str(tmp_path / 'src'), str(tmp_path / 'a' / 'dst'))
    assert (tmp_path / 'a' / 'dst').read_bytes() == b'abc'


def test_threads_downloading_one_file_at_once_all_succeed(tmp_path):
    # StreamingOutsideDTWebVid's download thread and its reader may fetch the
    # same video at once: each writes its own temporary, the last rename wins.
    import threading
    (tmp_path / 'src').write_bytes(bytes(range(256)) * 16384)
    dst = str(tmp_path / 'dst')
    errors = []

    def fetch():
        try:
            for _ in range(20):
                download.LocalDownloader().download(str(tmp_path / 'src'), dst)
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=fetch) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert (tmp_path / 'dst').read_bytes() == bytes(range(256)) * 16384
    assert sorted(os.listdir(tmp_path)) == ['dst', 'src']


def test_storage_exports_both():
    assert storage.CloudUploader is upload.CloudUploader
    assert storage.LocalDownloader is download.LocalDownloader
