"""merge_index: one index.json over several sub-datasets, as Mosaic's
merge_index writes it ({"version": 2, "shards": [...]}, keys unsorted, each
basename prefixed with its partition's folder name).

Sub-indexes and the output may be local folders, remote URLs (any store
libsluice.so knows: s3://, gs://, azure://, file://, dbfs:/Volumes, ...) or
(local, remote) pairs; remote index.json files are read and the merged one is
written through the C ABI's sluice_remote_* calls. The engine parses the
sub-indexes and writes the merged one (sluice_index_merge).
"""
import os
import shutil

from sluice.index_json import merged_index
from sluice.remote import local_path, remote_list, remote_read, remote_write, url_scheme
from sluice.writer import is_remote

__all__ = ['merge_index']

_INDEX = 'index.json'


def _split_url(url):
    """(folder URL, last name) of an object URL."""
    url = url.rstrip('/')
    folder, _, name = url.rpartition('/')
    if not folder or not name:
        raise ValueError(f'merge_index: {url!r} does not name an object inside a folder')
    return folder, name


def _parent_name(path):
    """The folder name an index.json sits in: its shards' prefix."""
    return path.rstrip('/').rsplit('/', 2)[-2] if '/' in path.rstrip('/') else ''


def _local_index(path):
    path = str(path)
    if url_scheme(path) == 'file' and not os.path.exists(path):
        path = local_path(path)
    return os.path.join(path, _INDEX) if os.path.isdir(path) else path


def _read_index(entry):
    """(index.json bytes, its path or URL, prefix) of one index.json: a local path (or its folder),
    a URL, or a (local, remote) pair read locally when the local copy exists
    (Mosaic's rule)."""
    if isinstance(entry, (tuple, list)):
        local, remote = (str(e).rstrip('/').strip() if e else '' for e in entry)
        entry = local if local and os.path.exists(_local_index(local)) else remote
        if not entry:
            raise FileNotFoundError(f'merge_index: neither {local!r} nor its remote exists')
    entry = str(entry).rstrip('/').strip()
    if is_remote(entry) and not os.path.exists(entry):
        if not entry.endswith(_INDEX):
            entry = entry + '/' + _INDEX
        folder, name = _split_url(entry)
        return remote_read(folder, name, 'merge_index'), entry, _parent_name(entry)
    path = _local_index(entry)
    if not os.path.isfile(path):
        raise FileNotFoundError(f'merge_index: {path} does not exist')
    with open(path, 'rb') as f:
        return f.read(), path, os.path.basename(os.path.dirname(os.path.abspath(path)))


def _merge(entries):
    # Duplicates once, in order.
    return merged_index([_read_index(e) for e in dict.fromkeys(_hashable(e) for e in entries)])


def _hashable(entry):
    return tuple(entry) if isinstance(entry, list) else entry


def _split_out(out):
    """(local folder or None, remote URL or None) of merge_index's `out`."""
    if isinstance(out, (tuple, list)):
        local, remote = out
        return (str(local) if local else None), (str(remote) if remote else None)
    out = str(out)
    if is_remote(out):
        return None, out
    return out, None


def _sub_indexes(local, remote):
    """The sub-dataset index.json files under a root: every index.json below
    it (sorted by path), from the local folder, or from the remote when the local one
    lacks some (Mosaic reads the remote listing then)."""
    local_files = []
    if local and os.path.isdir(local):
        # As Mosaic: every index.json below the root (at any depth, the
        # root's own excepted), in the order of their full paths ('p-1/' and
        # 'p.2/' come before 'p/').
        top = os.path.normpath(local)
        for folder, _, files in os.walk(local):
            if _INDEX in files and os.path.normpath(folder) != top:
                local_files.append(os.path.join(folder, _INDEX))
        local_files.sort()
    if not remote:
        return local_files
    root = remote.rstrip('/')
    keys = [k for k in remote_list(root, '', 'merge_index') if k.endswith('/' + _INDEX)]
    remote_files = [root + '/' + k for k in keys]
    if local_files and len(local_files) == len(remote_files):
        return list(zip(local_files, remote_files))
    return remote_files


def merge_index(*args, **kwargs):
    """merge_index(index_file_urls, out, keep_local=True, download_timeout=60)
    or merge_index(out, keep_local=True, download_timeout=60).

    index_file_urls: index.json files (or their folders): local paths, URLs,
    or (local, remote) pairs (read locally when the local copy exists), in
    the order their shards should appear. out: the root folder, a URL or a
    (local, remote) pair; the merged index.json is written locally and/or
    uploaded. With only `out`, every <sub>/index.json under it is merged
    (sub-folders sorted). keep_local=False removes the local root afterwards.
    """
    keep_local = kwargs.pop('keep_local', True)
    kwargs.pop('download_timeout', None)  # the stores' own timeouts apply
    if args and isinstance(args[0], list):
        if len(args) > 2:
            keep_local = args[2]
        files = args[0]
        out = args[1] if len(args) > 1 else kwargs.pop('out', None)
        if out is None:
            raise TypeError('merge_index(index_file_paths, out): out is missing')
    elif len(args) >= 1 and isinstance(args[0], (str, tuple, os.PathLike)):
        if len(args) > 1:
            keep_local = args[1]
        out = args[0]
        files = None
    else:
        raise TypeError('merge_index(index_file_paths, out) or merge_index(out)')
    if kwargs:
        raise TypeError(f'merge_index: unexpected arguments {sorted(kwargs)}')
    if isinstance(out, os.PathLike):
        out = os.fspath(out)
    local, remote = _split_out(out)
    if local and url_scheme(local) == 'file':
        local = local_path(local)
    if files is None:
        files = _sub_indexes(local, remote)
    if not files:
        raise ValueError(f'merge_index: no index.json files to merge under {out!r}')
    payload = _merge(files)
    if local:
        os.makedirs(local, exist_ok=True)
        with open(os.path.join(local, _INDEX), 'wb') as f:
            f.write(payload)
    if remote:
        remote_write(remote.rstrip('/'), _INDEX, payload, 'merge_index')
    if local and remote and not keep_local:
        shutil.rmtree(local, ignore_errors=True)
