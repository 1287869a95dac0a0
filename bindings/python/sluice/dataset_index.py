"""Mosaic's checks of each stream's index.json, with Mosaic's error types
and texts, for when the engine could not open a dataset (it refuses what
they refuse, in its own words): the files are read again then, never on
the way to a dataset that opens.
`split` is the split a stream's files are under (its own, or the
dataset's). cache_limit is the engine's to check (Mosaic's rules and texts,
when the dataset opens)."""
import json
import os

from sluice.index_json import shard_entries
from sluice.remote import local_path
from sluice.stream import _is_remote

__all__ = ['check_indexes', 'missing_local_index', 'read_index']


def index_path(stream, split):
    return os.path.join(stream.local, split or '', 'index.json')


def _local_remote_index(stream, split):
    """The index.json path of a stream whose remote is a local folder, else
    None."""
    if stream.remote is None or getattr(stream, 'engine_keys', None):
        return None
    if _is_remote(stream.remote):
        return None
    return os.path.join(local_path(stream.remote), split or '', 'index.json')


def _index_bytes(stream, split):
    """A stream's index.json: the cached copy, else a local remote's; None
    for a stream without one (raw files, a folder of Parquet files: the
    engine's to read or refuse, see missing_local_index) or whose store
    remote the engine has not fetched it from yet."""
    local = index_path(stream, split)
    if os.path.isfile(local):
        with open(local, 'rb') as f:
            return f.read()
    path = _local_remote_index(stream, split)
    if path is None or not os.path.isfile(path):
        return None
    with open(path, 'rb') as f:
        return f.read()


def missing_local_index(streams, splits):
    """Mosaic's FileNotFoundError (open()'s) for the first stream whose
    remote is a local folder without an index.json, for when the engine
    could not read that folder either (it reads a folder of Parquet files
    without one)."""
    for stream, split in zip(streams, splits):
        path = _local_remote_index(stream, split)
        if path is not None and not os.path.isfile(index_path(stream, split)):
            with open(path, 'rb'):
                pass


def read_index(stream, split):
    """(index.json size, its shard entries), None where not read, checked as
    Mosaic checks them, with its error types and texts. Parses every entry:
    for check_indexes, not for opening."""
    data = _index_bytes(stream, split)
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


def check_indexes(streams, splits):
    """Mosaic's errors for the streams' index.json files, in stream order,
    for when the engine could not open the dataset: Mosaic reads each index
    before anything else, so its errors come first (a malformed index is
    json's JSONDecodeError, an index without samples a RuntimeError)."""
    for stream, split in zip(streams, splits):
        read_index(stream, split)

