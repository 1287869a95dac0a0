"""What a dataset's `shards` hold: one ShardInfo per shard with the
attributes of Mosaic's shard readers that users read (samples, format,
compression, hashes, size_limit, columns, raw_data / zip_data and the size
helpers), taken from the shard's index.json entry as the engine reads it. Reading samples is the
engine's; these are descriptions only."""
import collections
import collections.abc
import operator

from sluice.index_json import shard_entries

__all__ = ['FileInfo', 'ShardInfo', 'ShardInfos', 'read_shard_infos']

FileInfo = collections.namedtuple('FileInfo', ['basename', 'bytes', 'hashes'])


def _file(entry):
    if not entry:
        return None
    return FileInfo(entry['basename'], int(entry['bytes']), dict(entry.get('hashes') or {}))


class ShardInfo:
    """One shard as its index.json entry describes it. len() is its samples."""

    def __init__(self, entry):
        self.samples = int(entry['samples'])
        self.format = entry.get('format')
        self.compression = entry.get('compression')
        self.hashes = list(entry.get('hashes') or [])
        self.size_limit = entry.get('size_limit')
        self.column_names = entry.get('column_names')
        self.column_encodings = entry.get('column_encodings')
        self.column_sizes = entry.get('column_sizes')
        # JSONL and CSV/TSV shards are a data file and a meta file.
        split = 'raw_meta' in entry
        self.raw_data = _file(entry.get('raw_data'))
        self.zip_data = _file(entry.get('zip_data'))
        self.raw_meta = _file(entry.get('raw_meta')) if split else None
        self.zip_meta = _file(entry.get('zip_meta')) if split else None
        self.file_pairs = [(self.raw_data, self.zip_data)]
        if split:
            self.file_pairs.append((self.raw_meta, self.zip_meta))

    def __len__(self):
        return self.samples

    def get_raw_size(self):
        """Bytes of the shard's files decompressed."""
        return sum(raw.bytes for raw, _ in self.file_pairs if raw is not None)

    def get_zip_size(self):
        """Bytes of the shard's compressed files, or None if not compressed."""
        if any(z is None for _, z in self.file_pairs):
            return None
        return sum(z.bytes for _, z in self.file_pairs)

    def get_max_size(self):
        """Bytes on disk at most: decompressed and compressed files together."""
        return self.get_raw_size() + (self.get_zip_size() or 0)

    def get_persistent_size(self, keep_zip):
        """Bytes the shard keeps once ready: raw, plus zip when kept."""
        if keep_zip and self.compression:
            return self.get_max_size()
        return self.get_raw_size()


def read_shard_infos(index_path):
    """ShardInfos of the index.json at `index_path`, in order."""
    with open(index_path, 'rb') as f:
        return [ShardInfo(entry) for entry in shard_entries(f.read(), index_path)]


class ShardInfos(collections.abc.Sequence):
    """A dataset's `shards` (Mosaic's list of shard readers' descriptions)
    without a Python object per shard until one is asked for: shard i's
    ShardInfo is made from the engine's entry for it on first access, then
    kept. len() is the engine's shard count; indexing (negative too),
    slicing and iteration are a list's. `engine` has shard_entry(i)."""

    def __init__(self, engine, count):
        self._engine = engine
        self._count = count
        self._made = {}

    def __len__(self):
        return self._count

    def _one(self, i):
        info = self._made.get(i)
        if info is None:
            info = self._made[i] = ShardInfo(self._engine.shard_entry(i))
        return info

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self._one(i) for i in range(*index.indices(self._count))]
        i = operator.index(index)
        if i < 0:
            i += self._count
        if not 0 <= i < self._count:
            raise IndexError('list index out of range')  # a list's text, as Mosaic's shards
        return self._one(i)

    def __iter__(self):
        return (self._one(i) for i in range(self._count))

    def __repr__(self):
        return f'<ShardInfos: {self._count} shards>'
