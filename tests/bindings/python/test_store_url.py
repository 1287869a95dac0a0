"""The Python package tells store URLs from local paths by the engine's one
rule (sluice_is_store_url), so the dataset, the writer and the engine agree."""
import pytest

from sluice import stream, writer


@pytest.mark.parametrize('url', ['s3://bucket/ds', 'gs://b/k', 'dbfs:/Volumes/c/s/v',
                                 'https://host/ds', 'AZURE://c@a/p'])
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
