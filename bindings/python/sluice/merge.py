"""merge_index: one index.json over several sub-datasets, as Mosaic's
merge_index writes it ({"version": 2, "shards": [...]}, keys unsorted, each
basename prefixed with its partition's folder name)."""
import json
import os
import re

__all__ = ['merge_index']

_FILE_KEYS = ('raw_data', 'zip_data', 'raw_meta', 'zip_meta')


def _local(path):
    path = str(path)
    if path.startswith('file://'):
        return path[len('file://'):]
    if re.match(r'^[a-zA-Z][a-zA-Z0-9+.-]*://', path):
        raise NotImplementedError(f'sluice: merge_index over the remote {path!r} needs the remote '
                                  'stores, which the C ABI does not offer yet')
    return path


def _index_files(out):
    """Every <out>/<sub>/index.json, sub-folders in sorted order (Mosaic's
    merge_index(out) over a root)."""
    subs = sorted(d for d in os.listdir(out) if os.path.isfile(os.path.join(out, d, 'index.json')))
    return [os.path.join(out, d, 'index.json') for d in subs]


def merge_index(*args, **kwargs):
    """merge_index(index_file_paths, out) or merge_index(out).

    index_file_paths: index.json files (or the folders holding them; a
    (local, remote) pair uses its local part), in the order their shards
    should appear. Writes <out>/index.json.
    """
    keep_local = kwargs.pop('keep_local', True)  # accepted for Mosaic compatibility
    kwargs.pop('download_timeout', None)
    del keep_local
    if len(args) == 1 and not isinstance(args[0], (list, tuple)):
        out = _local(args[0])
        files = _index_files(out)
    elif len(args) == 2 or (len(args) == 1 and 'out' in kwargs):
        files, out = args[0], args[1] if len(args) == 2 else kwargs.pop('out')
        out = _local(out[0] if isinstance(out, (tuple, list)) else out)
        files = [_local(f[0] if isinstance(f, (tuple, list)) else f) for f in files]
        files = [os.path.join(f, 'index.json') if os.path.isdir(f) else f for f in files]
    else:
        raise TypeError('merge_index(index_file_paths, out) or merge_index(out)')
    if not files:
        raise ValueError(f'merge_index: no index.json files to merge under {out!r}')
    shards = []
    for path in files:
        if not os.path.isfile(path):
            raise FileNotFoundError(f'merge_index: {path} does not exist')
        prefix = os.path.basename(os.path.dirname(os.path.abspath(path)))
        with open(path) as f:
            index = json.load(f)
        for shard in index['shards']:
            for key in _FILE_KEYS:
                info = shard.get(key)
                if info:
                    info['basename'] = os.path.join(prefix, info['basename'])
            shards.append(shard)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, 'index.json'), 'w') as f:
        json.dump({'version': 2, 'shards': shards}, f)
