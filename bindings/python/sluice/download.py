"""mosaicml-streaming's downloaders (`streaming.base.storage.download`) over
Sluice's stores: CloudDownloader.get(remote) picks the class by scheme, as
Mosaic's, and download(remote, local) fetches one file through the C ABI
(sluice_remote_read_to_file), streamed into `local` by the engine under its
temporary name and renamed when whole, so a reader never sees part of it and
the file is never held in memory (a local source is copied the same way:
sluice.local_files). A file already at `local` is kept. The
`timeout` argument is taken for compatibility: the stores apply their own
connect and idle timeouts.
sftp:// and alipan:// are known names without a Sluice store: their
downloaders refuse. An instance is used by one thread."""
import os

from sluice.local_files import copy_file
from sluice.remote import is_unity_catalog_volume, local_path, remote_read_to_file, url_scheme

__all__ = ['CloudDownloader', 'S3Downloader', 'SFTPDownloader', 'GCSDownloader', 'OCIDownloader',
           'AzureDownloader', 'AzureDataLakeDownloader', 'HFDownloader',
           'DatabricksUnityCatalogDownloader', 'DBFSDownloader', 'AlipanDownloader',
           'LocalDownloader', 'download_file']

DEFAULT_TIMEOUT = 60


class CloudDownloader:
    """Downloads files of one remote scheme to the local file system."""

    @classmethod
    def get(cls, remote_dir=None):
        """The downloader for `remote_dir`'s scheme (local without one)."""
        if remote_dir is None:
            return LocalDownloader()
        scheme = url_scheme(remote_dir)
        if is_unity_catalog_volume(remote_dir):
            scheme = 'dbfs-uc'
        if scheme not in _DOWNLOADERS:
            raise ValueError(f'Unsupported remote path: {remote_dir}')
        return _DOWNLOADERS[scheme]()

    @classmethod
    def direct_download(cls, remote, local, timeout=DEFAULT_TIMEOUT):
        """Downloads one file with the downloader for its scheme."""
        downloader = cls.get(remote)
        downloader.download(remote, local, timeout)
        downloader.clean_up()

    def download(self, remote, local, timeout=DEFAULT_TIMEOUT):
        """Downloads `remote` to `local` unless `local` exists."""
        if os.path.exists(local):
            return
        if not remote:
            raise ValueError('In the absence of local dataset, path to remote dataset must be '
                             'provided')
        os.makedirs(os.path.dirname(local) or '.', exist_ok=True)
        self._validate_remote_path(remote)
        self._download_file_impl(remote, local, timeout)

    @staticmethod
    def _client_identifier():
        raise NotImplementedError

    def clean_up(self):
        pass  # the stores' connections belong to the library

    def _validate_remote_path(self, remote):
        scheme = url_scheme(remote)
        if scheme != self._client_identifier():
            raise ValueError(f'Expected remote path to start with url scheme of '
                             f'`{self._client_identifier()}`, got {remote}.')

    def _download_file_impl(self, remote, local, timeout):
        folder, _, key = remote.rstrip('/').rpartition('/')
        where = f'{type(self).__name__}.download({remote!r})'
        remote_read_to_file(folder, key, local, where)


class S3Downloader(CloudDownloader):

    @staticmethod
    def _client_identifier():
        return 's3'


class GCSDownloader(CloudDownloader):

    @staticmethod
    def _client_identifier():
        return 'gs'


class OCIDownloader(CloudDownloader):

    @staticmethod
    def _client_identifier():
        return 'oci'


class AzureDownloader(CloudDownloader):

    @staticmethod
    def _client_identifier():
        return 'azure'


class AzureDataLakeDownloader(CloudDownloader):

    @staticmethod
    def _client_identifier():
        return 'azure-dl'


class DBFSDownloader(CloudDownloader):

    @staticmethod
    def _client_identifier():
        return 'dbfs'


class DatabricksUnityCatalogDownloader(DBFSDownloader):

    def _validate_remote_path(self, remote):
        if not is_unity_catalog_volume(remote):
            raise ValueError(f'Expected remote path to start with `dbfs:/Volumes`, got {remote}.')


class _NoStoreDownloader(CloudDownloader):
    """A scheme Mosaic knows and Sluice has no store for."""

    def _download_file_impl(self, remote, local, timeout):
        raise NotImplementedError(f'{type(self).__name__}: Sluice has no store for {remote!r} '
                                  f'(its stores: s3, gs, oci, azure, azure-dl, dbfs, http(s), '
                                  f'file)')


class HFDownloader(CloudDownloader):

    @staticmethod
    def _client_identifier():
        return 'hf'


class SFTPDownloader(_NoStoreDownloader):

    @staticmethod
    def _client_identifier():
        return 'sftp'


class AlipanDownloader(_NoStoreDownloader):

    @staticmethod
    def _client_identifier():
        return 'alipan'


class _HTTPDownloader(CloudDownloader):
    """http:// and https:// (read-only stores, which Mosaic has not)."""

    def _validate_remote_path(self, remote):
        if url_scheme(remote) not in ('http', 'https'):
            raise ValueError(f'Expected remote path to start with url scheme of `http` or '
                             f'`https`, got {remote}.')


class LocalDownloader(CloudDownloader):
    """Copies a file from a local path (or file:// URL)."""

    def _validate_remote_path(self, remote):
        pass

    def _download_file_impl(self, remote, local, timeout):
        copy_file(local_path(remote), local, f'{type(self).__name__}.download({remote!r})')


_DOWNLOADERS = {
    's3': S3Downloader,
    'sftp': SFTPDownloader,
    'gs': GCSDownloader,
    'oci': OCIDownloader,
    'azure': AzureDownloader,
    'azure-dl': AzureDataLakeDownloader,
    'hf': HFDownloader,
    'dbfs-uc': DatabricksUnityCatalogDownloader,
    'dbfs': DBFSDownloader,
    'alipan': AlipanDownloader,
    'http': _HTTPDownloader,
    'https': _HTTPDownloader,
    'file': LocalDownloader,
    '': LocalDownloader,
}


def download_file(remote, local, timeout=DEFAULT_TIMEOUT):
    """Downloads one file from any remote Sluice reads to `local`."""
    CloudDownloader.direct_download(remote, local, timeout)
