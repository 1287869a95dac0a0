"""load_parquet: a folder of Parquet files as a dataset in one line, shaped
like Hugging Face's `load_dataset("parquet", data_files=...)` as Databricks'
guide writes it, with Mosaic's StreamingDataset arguments:

    ds = sluice.load_parquet(data_files='/Volumes/main/default/vol/train/*.parquet',
                             local='/local_disk0/cache', batch_size=32, shuffle=True)

The files are the engine's: every *.parquet under the folder (sub-folders
included, names starting with '_' or '.' such as Spark's _SUCCESS and .crc
files left out), in the canonical order (paths sorted), each row group a
shard; the values are sluice.parquet_values'.

A folder (or prefix URL) comes back as a StreamingDataset: the engine finds
its Parquet files where no index.json is (engine/dataset/stream_index.h
owns that rule). A single file is read in place as a LocalDataset (a
StreamingDataset streams folders).
"""
import fnmatch
import os

from sluice import _lib
from sluice.dataset import StreamingDataset
from sluice.local import LocalDataset
from sluice.remote import local_path

__all__ = ['load_parquet']

# Patterns that select exactly the files the engine takes from a folder.
_ALL_PARQUET = ('*.parquet', '**/*.parquet')
_GLOB_CHARS = '*?['
# What a LocalDataset honours besides the folder.
_LOCAL_ARGUMENTS = {'allow_unsafe_types', 'validate_hash'}


def _folder_of(data_files):
    """(folder or URL, is_store_url) that `data_files` names: a folder, a
    Parquet file, or either followed by '/*.parquet' or '/**/*.parquet'.
    ValueError for any other pattern."""
    if isinstance(data_files, (list, tuple, dict)):
        raise TypeError('load_parquet: data_files takes one folder, Parquet file, glob or URL '
                        f'(a {type(data_files).__name__} of them is not supported yet)')
    text = os.fspath(data_files)
    if not isinstance(text, str) or not text:
        raise TypeError(f'load_parquet: data_files must be a path or URL, got {data_files!r}')
    is_url = bool(_lib.lib.sluice_is_store_url(text.encode()))
    head, _, last = text.rstrip('/').rpartition('/')
    if any(c in text for c in _GLOB_CHARS):
        pattern = last
        if head.endswith('/**') or head == '**':
            head, pattern = head[:-3].rstrip('/'), '**/' + last
        if pattern not in _ALL_PARQUET or any(c in head for c in _GLOB_CHARS):
            raise ValueError(
                f'load_parquet: data_files {text!r}: a folder\'s Parquet files are all its '
                f'*.parquet files (sub-folders included), so the pattern may only be '
                f'FOLDER/*.parquet or FOLDER/**/*.parquet; name the folder instead')
        text = head or ('/' if text.startswith('/') else '.')
        if not is_url and pattern == '*.parquet':
            _check_flat(text)
    return (text if is_url else local_path(text)), is_url


def _check_flat(folder):
    """FOLDER/*.parquet names the folder's own files: a ValueError when its
    sub-folders hold more, which the engine's listing would take too (it
    leaves out every path with a part starting with '_' or '.', as here)."""
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(('_', '.'))]
        taken = [f for f in fnmatch.filter(files, '*.parquet') if not f.startswith(('_', '.'))]
        if root != folder and taken:
            raise ValueError(f'load_parquet: {folder}/*.parquet leaves out the Parquet files in '
                             f'{root}, which a folder\'s files include: write '
                             f'{folder}/**/*.parquet (or move them)')


def load_parquet(data_files, *, local=None, split=None, **kwargs):
    """The Parquet files `data_files` names as a dataset.

    Args:
        data_files: a folder or prefix URL (s3://, gs://, azure://,
            dbfs:/Volumes/..., https://, a local or FUSE path such as
            /Volumes/...), a single Parquet file, or a folder followed by
            '/*.parquet' or '/**/*.parquet' (Hugging Face's spelling).
        local: the cache folder for a remote (Mosaic's `local`); a local
            folder is read in place without it.
        split: a sub-folder of data_files (Mosaic's `split`).
        **kwargs: StreamingDataset's arguments (batch_size, shuffle,
            shuffle_seed, cache_limit, manifest for an https:// folder,
            ...), with Mosaic's defaults.

    Returns a StreamingDataset (a LocalDataset for a single file)."""
    source, is_url = _folder_of(data_files)
    if split and not is_url and not os.path.exists(os.path.join(source, split)):
        # Hugging Face's split="train" names no folder; Mosaic's does.
        raise FileNotFoundError(
            f'load_parquet: split={split!r} is a sub-folder of data_files (Mosaic\'s split), '
            f'and {os.path.join(source, split)} does not exist; a Hugging Face split name '
            f'selects no folder here: leave split out')
    if not is_url and os.path.isfile(source):
        streaming = sorted(set(kwargs) - _LOCAL_ARGUMENTS)
        if streaming or local is not None:
            asked = streaming + (['local'] if local is not None else [])
            raise NotImplementedError(
                f'load_parquet: {source} is one file, and a StreamingDataset streams a folder '
                f'(name the folder, or one that holds only this file), so {asked} cannot '
                f'apply; without them load_parquet reads the file in place as a LocalDataset '
                f'(len, ds[i], iteration in file order)')
        return LocalDataset(source, split=split,
                            **{k: v for k, v in kwargs.items() if k in _LOCAL_ARGUMENTS})
    if is_url:
        remote, where = source, local
    elif local is None or os.path.abspath(local) == os.path.abspath(source):
        remote, where = None, source  # read in place, as Mosaic reads a local dataset
    else:
        remote, where = source, local  # copied into the cache `local`
    return StreamingDataset(remote=remote, local=where, split=split, **kwargs)
