"""What a dataset's `shards` hold: one ShardInfo per shard with the
attributes of Mosaic's shard readers that users read (samples, format,
compression, hashes, size_limit, columns, raw_data / zip_data and the size
helpers), taken from the shard's index.json entry as the engine reads it. Reading samples is the
engine's; these are descriptions only."""
import collections

from sluice.index_json import shard_entries

__all__ = ['FileInfo', 'ShardInfo', 'read_shard_infos']

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
