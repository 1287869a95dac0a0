"""The helpers of mosaicml-streaming's `streaming.base.util` that users call,
with Mosaic's behaviour and error texts: get_list_arg, bytes_to_int,
number_abbrev_to_int, wait_for_file_to_exist, retry, merge_index,
clean_stale_shared_memory (what crashed Mosaic jobs left in shared memory) and
_format_remote_index_files (bucket listing keys to index.json URLs)."""
import functools
import os
import random
import time
import urllib.parse

from sluice.merge import merge_index
from sluice.remote import is_unity_catalog_volume, url_scheme

__all__ = ['get_list_arg', 'wait_for_file_to_exist', 'bytes_to_int', 'number_abbrev_to_int',
           'clean_stale_shared_memory', 'merge_index', 'retry']

_BYTE_UNITS = {'kb': 1 << 10, 'mb': 1 << 20, 'gb': 1 << 30, 'tb': 1 << 40, 'pb': 1 << 50,
               'eb': 1 << 60, 'zb': 1 << 70, 'yb': 1 << 80}
_NUMBER_UNITS = {'k': 10**3, 'm': 10**6, 'b': 10**9, 't': 10**12}


def _format_remote_index_files(remote, files):
    """The URLs of the sub-dataset index.json files among `files`, keys
    listed from the bucket of `remote` (relative to the bucket, as Mosaic's
    listings give them): scheme://bucket/key, or dbfs:/Volumes/... for a Unity
    Catalog volume. The merged index.json at `remote` itself is left out."""
    url = urllib.parse.urlparse(remote)
    root = url.path.strip('/')
    # A volume's URL is 'dbfs:/Volumes/...' (one slash); others use '://'.
    join = ':/' if is_unity_catalog_volume(remote) else '://'
    scheme = url_scheme(remote)  # the engine's reading, not urlparse's
    return [scheme + join + os.path.join(url.netloc, key) for key in files
            if os.path.basename(key) == 'index.json' and os.path.dirname(key).strip('/') != root]


def get_list_arg(text):
    """'a,b' -> ['a', 'b']; an empty or None text -> []."""
    return text.split(',') if text else []


def wait_for_file_to_exist(filename, poll_interval, timeout, err_msg):
    """Polls every `poll_interval` seconds until `filename` exists (then
    waits one more interval, as Mosaic does, for its writer to finish);
    RuntimeError(err_msg + '<timeout> < <waited> secs.') after `timeout`."""
    start = time.time()
    while True:
        time.sleep(poll_interval)
        if os.path.exists(filename):
            time.sleep(poll_interval)
            return
        waited = time.time() - start
        if waited > timeout:
            raise RuntimeError(f'{err_msg}{timeout:.3f} < {waited:.3f} secs.')


def _scaled(text, units, what):
    """`text` (lower-cased, stripped) times the unit its suffix names."""
    for suffix, factor in units.items():
        if text.endswith(suffix):
            try:
                return int(float(text[:-len(suffix)]) * factor)
            except ValueError:
                raise ValueError(f'Unsupported value/suffix {text}. Supported suffix are '
                                 f'{what}.') from None
    return None


def bytes_to_int(bytes_str):
    """'64mb' -> 67108864 (kb..yb are powers of 1024, 'b' or none is bytes);
    ints and floats pass through int()."""
    if isinstance(bytes_str, (int, float)):
        return int(bytes_str)
    text = bytes_str.lower().strip()
    supported = ['b'] + list(_BYTE_UNITS)
    value = _scaled(text, _BYTE_UNITS, supported)
    if value is not None:
        return value
    if text.endswith('b') and text[:-1].isdigit():
        return int(text[:-1])
    if text.isdigit():
        return int(text)
    raise ValueError(f'Unsupported value/suffix {text}. Supported suffix are {supported}.')


def number_abbrev_to_int(abbrev_str):
    """'1.5k' -> 1500 (k, m, b, t are powers of 1000); ints and floats pass
    through int()."""
    if isinstance(abbrev_str, (int, float)):
        return int(abbrev_str)
    text = abbrev_str.lower().strip()
    supported = list(_NUMBER_UNITS)
    value = _scaled(text, _NUMBER_UNITS, supported)
    if value is not None:
        return value
    if text.isdigit():
        return int(text)
    raise ValueError(f'Unsupported value/suffix {text}. Supported suffix are {supported}.')


def clean_stale_shared_memory():
    """Unlinks the shared memory crashed mosaicml-streaming jobs left behind
    (Sluice coordinates through files in the cache folder, which it sweeps
    itself): on local rank 0, the others waiting at a barrier when
    torch.distributed is initialized, as Mosaic's."""
    from sluice import distributed
    from sluice.mosaic_shm import clean_leaked_mosaic_shm
    if distributed.get_local_rank() == 0:
        clean_leaked_mosaic_shm()
    distributed.barrier()


def retry(exc_class=Exception, clean_up_fn=None, num_attempts=3, initial_backoff=1.0,
          max_jitter=0.5):
    """Decorator: calls the function up to `num_attempts` times while it
    raises `exc_class` (a class or a sequence of them), calling `clean_up_fn`
    after every failure and sleeping initial_backoff * 2**k + uniform(0,
    max_jitter) before the next attempt; the last failure propagates. Usable bare (@retry) too."""
    if callable(exc_class) and not (isinstance(exc_class, type) and
                                    issubclass(exc_class, BaseException)):
        return retry()(exc_class)  # @retry without arguments
    if num_attempts < 1:
        raise ValueError('num_attempts must be at-least 1')
    catch = tuple(exc_class) if isinstance(exc_class, (list, tuple)) else exc_class

    def decorate(fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            delay = initial_backoff
            for attempt in range(num_attempts):
                try:
                    return fn(*args, **kwargs)
                except catch:
                    if clean_up_fn is not None:
                        clean_up_fn()
                    if attempt == num_attempts - 1:
                        raise
                    time.sleep(delay + random.random() * max_jitter)
                    delay *= 2
        return wrapped
    return decorate
