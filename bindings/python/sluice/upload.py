"""mosaicml-streaming's uploaders (`streaming.base.storage.upload`) over
Sluice's stores: CloudUploader.get(out, ...) picks the class by the remote's
scheme, as Mosaic's; files go up through the C ABI (sluice_remote_write), so
every store Sluice has works: s3://, gs://, oci://, azure://, azure-dl://,
dbfs:/ and dbfs:/Volumes. hf:// and alipan:// are known names without a
Sluice store: their classes validate `out` as Mosaic's and then refuse.

`out` is a local folder, a remote URL (staged in a new temporary folder) or a
(local, remote) pair; a non-empty local folder is refused unless exist_ok.
Error types and texts are Mosaic's. An instance is used by one thread."""
import enum
import logging
import os
import tempfile
import urllib.parse

from sluice.local_files import copy_file
from sluice.remote import is_unity_catalog_volume, remote_list, remote_write, url_scheme
from sluice.util import retry as _retry

__all__ = ['CloudUploader', 'GCSAuthentication', 'S3Uploader', 'GCSUploader', 'OCIUploader', 'AzureUploader',
           'AzureDataLakeUploader', 'HFUploader', 'DatabricksUploader',
           'DatabricksUnityCatalogUploader', 'DBFSUploader', 'AlipanUploader', 'LocalUploader']

logger = logging.getLogger(__name__)

# Mosaic's scheme -> class name table.
UPLOADERS = {
    's3': 'S3Uploader',
    'gs': 'GCSUploader',
    'oci': 'OCIUploader',
    'hf': 'HFUploader',
    'azure': 'AzureUploader',
    'azure-dl': 'AzureDataLakeUploader',
    'dbfs:/Volumes': 'DatabricksUnityCatalogUploader',
    'dbfs': 'DBFSUploader',
    'alipan': 'AlipanUploader',
    '': 'LocalUploader',
}


def _remote_of(out):
    return out if isinstance(out, str) else out[1]


def _uploader_key(out):
    """UPLOADERS' key for `out`'s remote: its scheme, 'dbfs:/Volumes' for a
    Unity Catalog volume."""
    remote = _remote_of(out)
    if is_unity_catalog_volume(remote):
        return 'dbfs:/Volumes'
    return url_scheme(remote)


class CloudUploader:
    """Stages files in `local` and uploads them to `remote` (if any)."""

    @classmethod
    def get(cls, out, keep_local=False, progress_bar=False, retry=2, exist_ok=False):
        """The uploader for `out`'s remote scheme (LocalUploader without one)."""
        cls._validate(cls, out)
        chosen = globals()[UPLOADERS[_uploader_key(out)]]
        return chosen(out, keep_local, progress_bar, retry, exist_ok)

    def _validate(self, out):
        if not isinstance(out, str):
            if len(out) != 2:
                raise ValueError('Invalid `out` argument. It is either a string of local/remote '
                                 'directory or a list of two strings with [local, remote].')
        scheme = url_scheme(_remote_of(out))
        if scheme not in UPLOADERS:
            raise ValueError(f'Invalid Cloud provider prefix: {scheme}.')

    def __init__(self, out, keep_local=False, progress_bar=False, retry=2, exist_ok=False):
        self._validate(out)
        self.keep_local = keep_local
        self.progress_bar = progress_bar
        self.retry = retry
        if isinstance(out, str):
            if url_scheme(out):
                self.local, self.remote = tempfile.mkdtemp(), out
            else:
                self.local, self.remote = out, None
        else:
            self.local, self.remote = out
        if os.path.exists(self.local) and os.listdir(self.local):
            if not exist_ok:
                raise FileExistsError(f'Directory is not empty: {self.local}')
            logger.warning(f'Directory {self.local} exists and not empty. But continue to mkdir '
                           f'since exist_ok is set to be True.')
        os.makedirs(self.local, exist_ok=True)

    def upload_file(self, filename):
        """Uploads `filename` (relative to local) to the same name under
        remote, retrying `retry` times, then removes the local copy unless
        keep_local."""
        raise NotImplementedError(f'{type(self).__name__}.upload_file is not implemented')

    def list_objects(self, prefix=None):
        raise NotImplementedError(f'{type(self).__name__}.list_objects is not implemented')

    def clear_local(self, local):
        """Removes the local file `local` unless keep_local."""
        if not self.keep_local and os.path.isfile(local):
            os.remove(local)


class _StoreUploader(CloudUploader):
    """An uploader whose remote is a Sluice store URL."""

    def upload_file(self, filename):
        local = os.path.join(self.local, filename)

        @_retry(num_attempts=self.retry)
        def upload():
            with open(local, 'rb') as f:
                data = f.read()
            remote_write(self.remote, filename.replace(os.sep, '/'), data,
                         f'{type(self).__name__}.upload_file({filename!r})')

        upload()
        self.clear_local(local)

    def list_objects(self, prefix=None):
        """Names of the remote's objects under `prefix` (relative to the
        remote folder), as their keys in the bucket (Mosaic's form)."""
        base = urllib.parse.urlparse(self.remote).path.strip('/')
        keys = remote_list(self.remote, prefix or '', f'{type(self).__name__}.list_objects')
        return [f'{base}/{k}' if base else k for k in keys]

    def check_bucket_exists(self, remote):
        """Raises (naming the remote) when its bucket or container cannot be
        listed."""
        remote_list(remote, '', f'{type(self).__name__}: bucket of {remote}')


class S3Uploader(_StoreUploader):

    def __init__(self, out, keep_local=False, progress_bar=False, retry=2, exist_ok=False):
        super().__init__(out, keep_local, progress_bar, retry, exist_ok)
        self.check_bucket_exists(self.remote)


class GCSAuthentication(enum.Enum):
    HMAC = 1
    SERVICE_ACCOUNT = 2


class GCSUploader(_StoreUploader):
    """`authentication` says which credential Sluice's gs:// store uses: the
    HMAC key in GCS_KEY and GCS_SECRET when both are set, else the service
    account (GOOGLE_APPLICATION_CREDENTIALS or the metadata server)."""

    def __init__(self, out, keep_local=False, progress_bar=False, retry=2, exist_ok=False):
        super().__init__(out, keep_local, progress_bar, retry, exist_ok)
        hmac = 'GCS_KEY' in os.environ and 'GCS_SECRET' in os.environ
        self.authentication = (GCSAuthentication.HMAC if hmac else
                               GCSAuthentication.SERVICE_ACCOUNT)
        self.check_bucket_exists(self.remote)


class OCIUploader(_StoreUploader):

    def __init__(self, out, keep_local=False, progress_bar=False, retry=2, exist_ok=False):
        super().__init__(out, keep_local, progress_bar, retry, exist_ok)
        self.check_bucket_exists(self.remote)


class AzureUploader(_StoreUploader):

    def __init__(self, out, keep_local=False, progress_bar=False, retry=2, exist_ok=False):
        super().__init__(out, keep_local, progress_bar, retry, exist_ok)
        self.check_bucket_exists(self.remote)


class AzureDataLakeUploader(_StoreUploader):

    def __init__(self, out, keep_local=False, progress_bar=False, retry=2, exist_ok=False):
        super().__init__(out, keep_local, progress_bar, retry, exist_ok)
        self.check_container_exists(self.remote)

    def check_container_exists(self, remote):
        self.check_bucket_exists(remote)


class DatabricksUploader(_StoreUploader):
    """dbfs:/ and dbfs:/Volumes (credentials: Databricks unified auth, the
    DATABRICKS_* variables or a ~/.databrickscfg profile, read by Sluice's
    dbfs store)."""

    def __init__(self, out, keep_local=False, progress_bar=False, retry=2, exist_ok=False):
        super().__init__(out, keep_local, progress_bar, retry, exist_ok)
        self.client = self._create_workspace_client()

    def _create_workspace_client(self):
        return None  # Sluice's dbfs store connects on each call


class DatabricksUnityCatalogUploader(DatabricksUploader):
    pass


class DBFSUploader(DatabricksUploader):
    pass


class _NoStoreUploader(CloudUploader):
    """A scheme Mosaic knows and Sluice has no store for."""

    def __init__(self, out, keep_local=False, progress_bar=False, retry=2, exist_ok=False):
        super().__init__(out, keep_local, progress_bar, retry, exist_ok)
        raise NotImplementedError(f'{type(self).__name__}: Sluice has no store for '
                                  f'{self.remote!r} (its stores: s3, gs, oci, azure, azure-dl, '
                                  f'dbfs, file)')


class HFUploader(_NoStoreUploader):

    def check_dataset_exists(self):
        raise NotImplementedError('HFUploader: Sluice has no hf:// store')


class AlipanUploader(_NoStoreUploader):

    def check_token(self):
        raise NotImplementedError('AlipanUploader: Sluice has no alipan:// store')


class LocalUploader(CloudUploader):
    """Copies files from one local folder to another."""

    def __init__(self, out, keep_local=False, progress_bar=False, retry=2, exist_ok=False):
        super().__init__(out, keep_local, progress_bar, retry, exist_ok)
        if self.remote:
            os.makedirs(self.remote, exist_ok=True)

    def upload_file(self, filename):
        if not self.remote:
            return
        local = os.path.join(self.local, filename)

        remote = os.path.join(self.remote, filename)
        os.makedirs(os.path.dirname(remote), exist_ok=True)

        @_retry(num_attempts=self.retry)
        def copy():  # under the engine's temporary name, renamed when whole
            copy_file(local, remote, f'LocalUploader.upload_file({filename!r})')

        copy()
        self.clear_local(local)

    def list_objects(self, prefix=None):
        """Sorted paths of the local files whose path starts with local/prefix."""
        start = os.path.join(self.local, prefix or '')
        return sorted(path for folder, _, files in os.walk(self.local)
                      for path in (os.path.join(folder, f) for f in files)
                      if path.startswith(start))
