"""What StreamingDataset reads of each stream's index.json before the engine
opens: Mosaic's checks of it and of cache_limit, with Mosaic's error types
and texts, and Mosaic's `shards` descriptions. `split` is the split a
stream's files are under (its own, or the dataset's)."""
import json
import os

from sluice.index_json import shard_entries
from sluice.remote import remote_read
from sluice.shard_info import ShardInfo
from sluice.stream import _is_remote, _strip_file

__all__ = ['check_cache_limit', 'read_index', 'shard_infos']


def index_path(stream, split):
    return os.path.join(stream.local, split or '', 'index.json')


def _index_bytes(stream, split, fetch):
    """A stream's index.json: the cached copy, else a local remote's, else
    (when `fetch`) a store remote's; None for a stream without one (raw
    files) or not fetched. A local remote without one is FileNotFoundError."""
    local = index_path(stream, split)
    if os.path.isfile(local):
        with open(local, 'rb') as f:
            return f.read()
    if stream.remote is None or getattr(stream, 'engine_keys', None):
        return None
    if _is_remote(stream.remote):
        if not fetch:
            return None
        folder = stream.remote.rstrip('/') + (f'/{split}' if split else '')
        return remote_read(folder, 'index.json', 'cache_limit check')
    path = os.path.join(_strip_file(stream.remote), split or '', 'index.json')
    with open(path, 'rb') as f:
        return f.read()


def read_index(stream, split, fetch):
    """(index.json size, its shard entries), None where not read, checked as
    Mosaic checks them, with its error types and texts."""
    data = _index_bytes(stream, split, fetch)
    if data is None:
        return None
    path = index_path(stream, split)
    try:
        entries = shard_entries(data, path)
    except (ValueError, NotImplementedError) as e:
        if f'{path}: malformed JSON: ' not in str(e):
            # Valid JSON the engine refuses: it says so when it opens the
            # stream, naming the stream.
            return None
        # Mosaic's exception: json's, worded by json itself.
        try:
            json.loads(data)
        except json.JSONDecodeError as decode_error:
            decode_error.args = (f'Index file at {path} is empty or corrupted. ' +
                                 decode_error.args[0],)
            raise decode_error from None
        raise
    if not sum(entry['samples'] for entry in entries):
        raise RuntimeError(f'Stream contains no samples: {path}.')
    return len(data), entries


def shard_infos(streams, splits, indexes, samples_per_shard, stream_per_shard):
    """Mosaic's `shards`: one description per shard from its stream's
    index.json (`indexes`: read_index's, None where not read yet; a stream
    without one, e.g. of raw files, has its counts)."""
    out = []
    for i, (stream, split, index) in enumerate(zip(streams, splits, indexes)):
        if index is None:  # e.g. fetched by the engine: read now
            index = read_index(stream, split, fetch=False)
        counts = samples_per_shard[stream_per_shard == i]
        infos = [ShardInfo(e) for e in index[1]] if index else []
        if [len(x) for x in infos] != counts.tolist():
            infos = [ShardInfo({'samples': int(n)}) for n in counts]
        out += infos
    return out


def check_cache_limit(limit, streams, indexes):
    """Mosaic's rules for cache_limit (bytes, or a string such as '10mb'),
    with its texts: above the streams' index.json files, and at least four
    times the largest shard (raw and compressed together)."""
    if isinstance(limit, str):
        from sluice.util import bytes_to_int
        limit = bytes_to_int(limit)
    for stream in streams:
        if stream.remote is not None:  # Mosaic has made its cache folder by then
            os.makedirs(stream.local, exist_ok=True)
    indexes = [x for x in indexes if x is not None]
    min_cache_usage = sum(size for size, _ in indexes)
    if limit <= min_cache_usage:
        raise ValueError(f'Minimum cache usage ({min_cache_usage} bytes) is larger than the '
                         f'cache limit ({limit} bytes). Please raise `cache_limit`. '
                         f'Recommendation is to provide a `cache_limit` as high as possible '
                         f'to avoid thrashing.')
    largest = max((ShardInfo(e).get_max_size() for _, entries in indexes
                   for e in entries), default=0)
    if limit < 4 * largest:
        raise ValueError(f'Cache limit ({limit} bytes) is too low. Increase the `cache_limit` '
                         f'to at-least four times the largest shard size ({largest} bytes) '
                         f'which includes raw (decompressed) and zip (compressed) file size. '
                         f'Recommendation is to provide a `cache_limit` as high as possible to '
                         f'avoid thrashing.')
