"""The Python package tells store URLs from local paths by the engine's one
rule (sluice_is_store_url), so the dataset, the writer and the engine agree."""
import os

import pytest

from sluice import stream, writer


@pytest.mark.parametrize('url', ['s3://bucket/ds', 'gs://b/k', 'dbfs:/Volumes/c/s/v',
                                 'https://host/ds', 'AZURE://c@a/p', 'hf://datasets/org/name',
                                 'oci://bucket@namespace/ds'])
def test_store_urls_are_remote(url):
    assert stream._is_remote(url)
    assert writer.is_remote(url)


@pytest.mark.parametrize('path', ['/data/ds', 'relative/ds', '/data/a://b', './s3://bucket',
                                  'my dir/with:colon'])
def test_paths_are_local_even_with_scheme_like_text(path):
    assert not stream._is_remote(path)
    assert not writer.is_remote(path)


def test_file_urls_are_local_to_the_dataset_and_uploads_to_the_writer():
    # The writer hands file:// to the file store, as Mosaic's uploader does.
    assert not stream._is_remote('file:///data/ds')
    assert writer.is_remote('file:///data/ds')
    assert not stream._is_remote(None)


def test_schemes_and_local_paths_are_the_engines():
    from sluice.remote import local_path, url_scheme
    assert [url_scheme(u) for u in ('S3://b/k', 'dbfs:/Volumes/a', 'file:///x', '/data/a://b',
                                    'hf://datasets/o/n@refs%2Fconvert%2Fparquet/x')] == \
        ['s3', 'dbfs', 'file', '', 'hf']
    assert local_path('file://localhost/data/a%20b/') == '/data/a b'
    assert local_path('/plain/') == '/plain'
    with pytest.raises(ValueError, match="^invalid argument: 's3://b/k' is a store URL"):
        local_path('s3://b/k')


def test_a_file_url_with_escapes_downloads_and_merges(tmp_path):
    # "file://" was once cut off by hand in five places, leaving %20 as is.
    import shutil
    import sluice
    from sluice.download import CloudDownloader
    folder = tmp_path / 'a b'
    folder.mkdir()
    (folder / 'f.bin').write_bytes(b'payload')
    url = 'file://' + str(folder).replace(' ', '%20')
    CloudDownloader.get(url).download(url + '/f.bin', str(tmp_path / 'got'))
    assert (tmp_path / 'got').read_bytes() == b'payload'
    data = os.path.join(os.path.dirname(__file__), '..', '..', 'data', 'mosaic', 'mds', 'merged')
    root = folder / 'merged'
    shutil.copytree(data, root)
    os.remove(root / 'index.json')
    sluice.merge_index('file://' + str(root).replace(' ', '%20'))
    with open(os.path.join(data, 'index.json'), 'rb') as want:
        assert (root / 'index.json').read_bytes() == want.read()
