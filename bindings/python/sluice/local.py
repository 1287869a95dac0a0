"""LocalDataset: random access to a dataset folder on local disk (index.json
+ shards of any format Sluice reads) through the C ABI.

One ctypes crossing per sample: sluice_dataset_get_pieces fills every
column's view at once, and every field is copied into a bytes at once. A
large Parquet value that straddles a snappy page's pieces is copied by
sluice_dataset_copy_pieced straight into its bytes (its only copy: the
engine would otherwise copy it first into its own memory).
"""
import ctypes
import os

import numpy as np

from sluice import _lib
from sluice.formats import field_decoder, has_null_fields
from sluice.parquet_values import packed_list_kind, with_null_elements

__all__ = ['LocalDataset']


class _Handle:
    """Owns a sluice_dataset*; closed when the last reference goes."""

    ptr = None

    def __init__(self, path, verify_hashes, allow_unsafe_types):
        h = ctypes.c_void_p()
        # Encodings that are not built in are Python's to decode (a user's
        # own) or to refuse when a sample is read (Mosaic's ValueError).
        flags = _lib.OPEN_ANY_CUSTOM_ENCODING
        if verify_hashes:
            flags |= _lib.OPEN_VERIFY_HASHES
        if not allow_unsafe_types:  # Mosaic's ValueError, from the engine
            flags |= _lib.OPEN_REFUSE_UNSAFE_TYPES
        _lib.check(_lib.lib.sluice_dataset_open(os.fsencode(path), flags, ctypes.byref(h)))
        self.ptr = h

    def close(self):
        if self.ptr:
            _lib.lib.sluice_dataset_close(self.ptr)
            self.ptr = None

    def __del__(self):
        self.close()


class LocalDataset:
    """A dataset folder read in place: `len(ds)`, `ds[i]` (a dict column -> value),
    `ds[np.array([...])]` (a list of dicts), iteration in order.

    Args:
        local: the folder holding index.json.
        split: optional sub-folder of `local`.
        allow_unsafe_types: allow `pkl` columns (unpickling runs code), as Mosaic.
        validate_hash: truthy to check shard hashes recorded in index.json on load.
    """

    def __init__(self, local, split=None, allow_unsafe_types=False, validate_hash=None):
        path = os.path.join(local, split) if split else local
        self.local = path
        self._verify = bool(validate_hash)
        self._allow_unsafe_types = allow_unsafe_types
        self._handle = _Handle(path, self._verify, allow_unsafe_types)
        ptr = self._handle.ptr
        lib = _lib.lib
        self.num_samples = int(lib.sluice_dataset_num_samples(ptr))
        self.num_shards = int(lib.sluice_dataset_num_shards(ptr))
        self.format = lib.sluice_dataset_format(ptr).decode()
        n = lib.sluice_dataset_num_columns(ptr)
        self.column_names = [lib.sluice_dataset_column_name(ptr, i).decode() for i in range(n)]
        self.column_encodings = [lib.sluice_dataset_column_encoding(ptr, i).decode()
                                 for i in range(n)]
        self._n = n
        self._bind_fields()
        self._samples_per_shard = None

    def _bind_fields(self):
        """Per-handle state that is neither picklable nor shareable: the field
        views array and the decoders (closures)."""
        self._decoders = [field_decoder(self.format, e, c)
                          for c, e in zip(self.column_names, self.column_encodings)]
        self._fields = (_lib.Bytes * max(self._n, 1))()
        # The same memory as (pointer, size) pairs, read back in one tolist().
        self._fields_np = np.frombuffer(self._fields, dtype=np.uint64).reshape(-1, 2)
        self._get = _lib.lib.sluice_dataset_get_pieces
        self._num_pieced = ctypes.c_uint32()
        self._num_pieced_ref = ctypes.byref(self._num_pieced)
        self._pieced_columns = (ctypes.c_uint32 * max(self._n, 1))()
        self._pieced_column = ctypes.c_uint32()
        self._pieced_column_ref = ctypes.byref(self._pieced_column)
        self._items = list(zip(self.column_names, self._decoders))
        self._null_fields = has_null_fields(self.format)
        # Parquet rows whose packed list holds a null element are read, their
        # masks beside the fields (the same one call per sample; _sample
        # applies them).
        self._masks = self._null_fields and \
            any(packed_list_kind(e) is not None for e in self.column_encodings)
        self._num_masked = ctypes.c_uint32()
        self._num_masked_ref = ctypes.byref(self._num_masked) if self._masks else None

    @property
    def samples_per_shard(self):
        """Samples in each shard, in index order (as the engine read the
        index, or a Parquet folder's row groups)."""
        if self._samples_per_shard is None:
            count = ctypes.c_uint64()
            per_shard = []
            for shard in range(self.num_shards):
                _lib.check(_lib.lib.sluice_dataset_shard_samples(self._handle.ptr, shard,
                                                                 ctypes.byref(count)))
                per_shard.append(count.value)
            self._samples_per_shard = per_shard
        return self._samples_per_shard

    def __len__(self):
        return self.num_samples

    def close(self):
        self._handle.close()

    def raw_fields(self, idx):
        """The stored bytes of each column of sample `idx` (copies); None for
        a null field of a format that has them (Parquet; a packed list's
        null elements are zero bytes here, get_item masks them)."""
        status = self._get(self._handle.ptr, idx, self._fields, self._n, self._num_masked_ref,
                           self._num_pieced_ref, self._pieced_columns)
        if status:
            _lib.check(status)
        spans = self._fields_np[:self._n].tolist()
        if self._num_pieced.value:
            return self._with_pieced(spans)
        if self._null_fields:
            return [ctypes.string_at(p, n) if n else (b'' if p else None) for p, n in spans]
        # MDS fields lie side by side in the sample: copy the sample's span
        # once and slice it, instead of one copy call per field.
        lo = min(p for p, n in spans if n) if any(n for _, n in spans) else 0
        hi = max(p + n for p, n in spans)
        total = sum(n for _, n in spans)
        if lo and hi - lo <= total + 4 * self._n:
            whole = ctypes.string_at(lo, hi - lo)
            return [whole[p - lo:p - lo + n] if n else b'' for p, n in spans]
        return [ctypes.string_at(p, n) if n else b'' for p, n in spans]

    def _with_pieced(self, spans):
        """raw_fields of a Parquet row with fields in pieces: each such field's
        data must not be read; sluice_dataset_copy_pieced copies it into its
        bytes."""
        ptr, copy = self._handle.ptr, _lib.lib.sluice_dataset_copy_pieced
        pieced = {}
        for i in range(self._num_pieced.value):
            column = self._pieced_columns[i]
            n = spans[column][1]
            b = _lib.new_bytes(None, n)
            _lib.check(copy(ptr, i, self._pieced_column_ref, b, n))
            pieced[column] = b
        return [pieced[c] if c in pieced else
                ctypes.string_at(p, n) if n else (b'' if p else None)
                for c, (p, n) in enumerate(spans)]

    def get_raw(self, idx):
        """The whole stored sample (MDS sample bytes, or the JSONL/CSV line with its
        newline), as bytes."""
        b = _lib.Bytes()
        _lib.check(_lib.lib.sluice_dataset_get_raw(self._handle.ptr, idx, ctypes.byref(b)))
        return _lib.view_bytes(b)

    def get_item(self, idx):
        """Sample `idx` as {column: value}."""
        if idx < 0:
            idx += self.num_samples
        if not 0 <= idx < self.num_samples:
            raise IndexError(f'sample {idx} out of range: the dataset at {self.local} has '
                             f'{self.num_samples} samples')
        return self._sample(idx)

    def _sample(self, idx):
        """Sample `idx` (already range-checked) as {column: value}."""
        raw = self.raw_fields(idx)
        sample = {name: dec(b) for (name, dec), b in zip(self._items, raw)}
        if self._masks:
            ptr = self._handle.ptr
            n = self._num_masked.value  # of raw_fields' get, just now
            if n:
                column, validity = ctypes.c_uint32(), _lib.Bytes()
                for i in range(n):
                    _lib.check(_lib.lib.sluice_dataset_masked(ptr, i, ctypes.byref(column),
                                                              ctypes.byref(validity)))
                    name = self.column_names[column.value]
                    sample[name] = with_null_elements(
                        sample[name], ctypes.string_at(validity.data, validity.size))
        return sample

    def __getitem__(self, idx):
        if isinstance(idx, (int, np.integer)):
            return self.get_item(int(idx))
        if isinstance(idx, slice):
            return [self.get_item(i) for i in range(*idx.indices(self.num_samples))]
        arr = np.asarray(idx)
        if arr.dtype == bool:
            arr = np.flatnonzero(arr)
        return [self.get_item(int(i)) for i in arr.reshape(-1)]

    def __iter__(self):
        for i in range(self.num_samples):
            yield self.get_item(i)

    # Handles are not inherited across pickling (DataLoader spawn): reopen.
    def __getstate__(self):
        state = dict(self.__dict__)
        for key in ('_handle', '_fields', '_fields_np', '_get', '_decoders', '_items',
                    '_null_fields', '_masks', '_num_masked', '_num_masked_ref',
                    '_num_pieced', '_num_pieced_ref', '_pieced_columns', '_pieced_column',
                    '_pieced_column_ref'):
            state[key] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._handle = _Handle(self.local, self._verify, self._allow_unsafe_types)
        self._bind_fields()
