"""Batch mode: a worker's samples as whole batches of columns, without a
Python object per sample (StreamingDataset.iter_batches, ColumnBatches).

Each column of a batch is copied out of the engine's views by one C call per
engine batch (sluice_stream_batch_column), into arrays made for that batch:
- a fixed-size MDS column (int, int8..uint64, float16..float64,
  ndarray:DTYPE:SHAPE) is one numpy array of shape (samples, *SHAPE), the
  values Mosaic would decode one by one ('int' as int64);
- any other column is a VarColumn: `data`, one uint8 array of the fields'
  stored bytes back to back (UTF-8 text for 'str', the encoding's stored
  bytes for images, pickles, JSON..., the value's text for JSONL / CSV), and
  `offsets`, int64 of length samples + 1: field k is
  data[offsets[k]:offsets[k + 1]].
A Parquet column (sluice.parquet_values names the encodings), whose fields
may be null, carries `nulls` (bool, True where the sample's value is null;
None when no sample of the batch is) beside its arrays:
- fixed-width values (ints, floats, bool, date32, times, timestamps) are a
  ValueColumn: `values`, one 1-D array of the value's numpy dtype
  (parquet_values' table: datetime64 / timedelta64 for dates, times and
  timestamps), 0 where null;
- packed lists ('list<int32>': token ids, embeddings) are a ListColumn:
  `values`, every sample's elements in one flat array of the element's
  dtype, and `offsets` (int64, samples + 1, counted in elements): sample
  k's list is values[offsets[k]:offsets[k + 1]] (a null list has none);
  `element_nulls` (bool per value, None when no list holds one) marks
  null elements, whose values are 0;
- str, bytes, decimals and JSON-text lists are a NullableVarColumn: a
  VarColumn's `data` (the field bytes: UTF-8, the bytes, the decimal's
  text, the JSON text) and `offsets`, and `nulls`.
The arrays belong to the caller (nothing points into the cache), so
torch.from_numpy shares them without a copy (to_torch). The samples and
their order are exactly __iter__'s; a subclass's __getitem__ is not applied.
A dataset whose streams have different columns has no batch of columns (a
ValueError naming each stream's).
"""
import ctypes
from typing import NamedTuple, Optional

import numpy as np

from sluice import _lib
from sluice.engine import _lib_  # the library, sluice_stream_batch_column declared
from sluice.formats import holds_parquet_values, holds_stored_bytes
from sluice.mds_encodings import array_layout
from sluice.parquet_values import packed_list_kind, parquet_kind

try:
    from torch.utils.data import IterableDataset as _Base
except ImportError:  # torch is optional
    _Base = object

__all__ = ['ColumnBatches', 'ListColumn', 'NullableVarColumn', 'ValueColumn', 'VarColumn',
           'batch_length', 'iter_batches', 'parquet_batch_column', 'to_torch']

_P_INT64 = ctypes.POINTER(ctypes.c_int64)

# A column grown for a whole batch from the samples seen so far claims at
# most 8x what it has seen, or this much if that is more (_Column.take).
_GUESS_CAP = 1 << 28


class VarColumn(NamedTuple):
    """A variable-size column of a batch: field k is data[offsets[k]:offsets[k + 1]]
    (a plain tuple, so that torch's collate and pickling keep it whole)."""
    data: np.ndarray
    offsets: np.ndarray

    def field(self, k):
        """Field k's bytes (a copy)."""
        return bytes(self.data[int(self.offsets[k]):int(self.offsets[k + 1])])

    def to_list(self):
        """Every field's bytes, one Python object each (what batch mode avoids)."""
        return [self.field(k) for k in range(len(self.offsets) - 1)]


class ValueColumn(NamedTuple):
    """A Parquet column of fixed-width values: values[k] is sample k's (0
    where nulls[k]); nulls None when the batch has no null."""
    values: np.ndarray
    nulls: Optional[np.ndarray] = None

    def to_list(self):
        """Every sample's value as a numpy scalar, None for a null."""
        if self.nulls is None:
            return list(self.values)
        return [None if n else v for v, n in zip(self.values, self.nulls)]


class ListColumn(NamedTuple):
    """A Parquet column of packed lists: sample k's elements are
    values[offsets[k]:offsets[k + 1]] (offsets count elements); nulls[k]
    True for a null list (none when the batch has no null); element_nulls
    (bool, one per value) True for a null element, whose value is 0 (None
    when no list of the batch holds one)."""
    values: np.ndarray
    offsets: np.ndarray
    nulls: Optional[np.ndarray] = None
    element_nulls: Optional[np.ndarray] = None

    def row(self, k):
        """Sample k's list as an array (a view), None for a null list; a
        masked array (numpy.ma) when it holds a null element."""
        if self.nulls is not None and self.nulls[k]:
            return None
        a, b = int(self.offsets[k]), int(self.offsets[k + 1])
        if self.element_nulls is not None and self.element_nulls[a:b].any():
            return np.ma.MaskedArray(self.values[a:b], mask=self.element_nulls[a:b])
        return self.values[a:b]

    def to_list(self):
        return [self.row(k) for k in range(len(self.offsets) - 1)]


class NullableVarColumn(NamedTuple):
    """A VarColumn whose fields may be null (Parquet's str, bytes, decimals
    and JSON-text lists): field k is data[offsets[k]:offsets[k + 1]], or
    null where nulls[k] (none when the batch has no null)."""
    data: np.ndarray
    offsets: np.ndarray
    nulls: Optional[np.ndarray] = None

    def field(self, k):
        """Field k's bytes (a copy), None for a null."""
        if self.nulls is not None and self.nulls[k]:
            return None
        return bytes(self.data[int(self.offsets[k]):int(self.offsets[k + 1])])

    def to_list(self):
        return [self.field(k) for k in range(len(self.offsets) - 1)]


def _typed(stored, dtype):
    """`stored` (an array of the stored little-endian values) as `dtype`:
    the same memory when the widths agree (ints, floats, 8-byte counts as
    datetime64, bytes 0/1 as bool), else converted (date32's 4-byte days)."""
    if stored.dtype.itemsize == dtype.itemsize:
        return stored.view(dtype)
    return stored.astype(dtype)


def parquet_batch_column(column, encoding, data, offsets, nulls, masks=()):
    """One batch of Parquet column `column` of `encoding`, from its fields'
    bytes back to back (`data`, uint8; field k at data[offsets[k]:offsets[k
    + 1]]) and `nulls` (bool per sample): a ValueColumn, ListColumn or
    NullableVarColumn (see the module). `masks`: (sample k, validity bytes)
    of the packed lists holding a null element. ValueError naming the column
    when a field's size does not fit its encoding."""
    some_null = nulls if nulls.any() else None
    kind = parquet_kind(encoding)
    if kind is not None and kind.width:
        sizes = np.diff(offsets)
        if not np.array_equal(sizes, np.where(nulls, 0, kind.width)):
            raise ValueError(f'column {column!r} ({encoding}): a field is not '
                             f'{kind.width} bytes')
        stored = data.view(kind.stored_dtype)
        dtype = np.dtype(kind.array_dtype)
        if some_null is None:
            return ValueColumn(_typed(stored, dtype), None)
        values = np.zeros(len(nulls), dtype)
        values[~nulls] = _typed(stored, dtype)
        return ValueColumn(values, some_null)
    element = packed_list_kind(encoding)
    if element is not None:
        if (offsets % element.width).any():
            raise ValueError(f'column {column!r} ({encoding}): a list is not a whole number of '
                             f'{element.width}-byte values')
        values = _typed(data.view(element.stored_dtype), np.dtype(element.array_dtype))
        counts = offsets // element.width
        element_nulls = None
        if masks:
            element_nulls = np.zeros(len(values), bool)
            for k, validity in masks:
                flags = np.frombuffer(validity, np.uint8)
                if len(flags) != counts[k + 1] - counts[k]:
                    raise ValueError(f'column {column!r} ({encoding}): sample {k} has '
                                     f'{counts[k + 1] - counts[k]} elements and '
                                     f'{len(flags)} null-element flags')
                element_nulls[counts[k]:counts[k + 1]] = flags == 0
        return ListColumn(values, counts, some_null, element_nulls)
    return NullableVarColumn(data, offsets, some_null)


def _fixed_layout(fmt, encoding):
    """(numpy dtype, item shape) of a fixed-size column, else None: the
    layout of its encoding's class (mds_encodings.array_layout)."""
    if not holds_stored_bytes(fmt):
        return None
    return array_layout(encoding)


class _Column:
    """One column's arrays for the batch being filled. A Parquet column
    (`parquet_encoding`) is copied as variable-size fields, whose NULL views
    are its nulls, and built by parquet_batch_column when finished."""

    def __init__(self, index, name, layout, parquet_encoding=None):
        self.index, self.name, self.layout = index, name, layout
        self.parquet_encoding = parquet_encoding
        self.item = layout[0].itemsize * int(np.prod(layout[1], dtype=np.int64)) if layout else 0
        self.guess = 0  # bytes per sample of the last batch (variable columns)

    def start(self, samples):
        self.samples = samples
        if self.layout:
            self.values = np.empty(samples * self.item, np.uint8)
        else:
            self.values = np.empty(max(self.guess * samples, 64), np.uint8)
            self.offsets = np.empty(samples + 1, np.int64)
            self.offsets[0] = 0
        if self.parquet_encoding is not None:
            self.nulls = np.empty(samples, bool)
            self.masks = []  # (sample k in the batch, validity bytes)
        self.used = 0

    def take(self, ptr, pos, count, nulls=None):
        """Copies this column of the engine's current batch (`count` samples)
        in after the `pos` samples taken so far; `nulls` (a Parquet column's):
        True for each of them whose view is NULL."""
        if self.parquet_encoding is not None:
            self.nulls[pos:pos + count] = nulls
        needed = ctypes.c_uint64()
        if self.layout:
            _lib.check(_lib_.sluice_stream_batch_column(
                ptr, self.index, self.item, self.values.ctypes.data + self.used,
                self.values.size - self.used, None, ctypes.byref(needed)))
            self.used += needed.value
            return
        offsets = self.offsets.ctypes.data + 8 * pos  # offsets[pos] (the base) becomes 0
        while True:
            status = _lib_.sluice_stream_batch_column(
                ptr, self.index, 0, self.values.ctypes.data + self.used,
                self.values.size - self.used, offsets, ctypes.byref(needed))
            if status != _lib.ERANGE or self.values.size - self.used >= needed.value:
                _lib.check(status)
                break
            # Room for the whole batch at the size per sample seen so far:
            # a batch of large samples grows once, not by doublings that
            # each copy (and fault in) all it holds. The guess is capped
            # (8x what is seen, or 256 MiB if more): from a few samples,
            # one large one must not claim a batch's worth of large ones.
            seen = self.used + needed.value
            guess = -(-seen * self.samples // (pos + count))
            guess = min(guess, max(8 * seen, _GUESS_CAP))
            grown = np.empty(max(2 * self.values.size, seen, guess), np.uint8)
            grown[:self.used] = self.values[:self.used]
            self.values = grown
        self.offsets[pos:pos + count + 1] += self.used
        self.used += needed.value

    def finish(self, samples):
        if self.layout:
            dtype, shape = self.layout
            return self.values[:self.used].view(dtype).reshape((samples,) + shape)
        self.guess = -(-self.used // max(samples, 1))
        if self.parquet_encoding is not None:
            return parquet_batch_column(self.name, self.parquet_encoding, self.values[:self.used],
                                        self.offsets[:samples + 1], self.nulls[:samples],
                                        self.masks)
        return VarColumn(self.values[:self.used], self.offsets[:samples + 1])


# The key iter_batches(with_ids=True) adds for the samples' global ids.
SAMPLE_ID_KEY = 'sample_id'


def engine_batches(engine, epoch, sample_in_epoch, worker, num_workers, batch_size,
                   with_ids=False, limit=None):
    """This worker's samples of the epoch as dicts column -> array (see the
    module), batch_size samples each (the last may be shorter); with_ids:
    also SAMPLE_ID_KEY, the samples' global ids (int64). limit: at most
    that many samples, none asked of the engine past them (a reader of a
    stretch of the order, as sluice.ray's read tasks)."""
    if not isinstance(batch_size, int) or batch_size <= 0:
        raise ValueError(f'batch_size must be a positive int, got {batch_size!r}')
    if with_ids and SAMPLE_ID_KEY in engine.column_names:
        raise ValueError(f'with_ids adds the key {SAMPLE_ID_KEY!r}, which is already a column of '
                         f'this dataset: call dataset.sample_origins on what you need instead')
    if engine.mixes_in_null_fields():
        raise ValueError('batch mode needs streams of one format when one of them is Parquet '
                         '(its columns have their own types and nulls): iterate the dataset '
                         'instead, or read the Parquet streams in a dataset of their own')
    ptr = engine._ptr
    n = engine._n
    parquet = holds_parquet_values(engine.format)
    columns = [_Column(c, name, _fixed_layout(engine.format, enc), enc if parquet else None)
               for c, (name, enc) in enumerate(zip(engine.column_names, engine.column_encodings))]
    ids = np.zeros(batch_size, np.int64)
    ids_at = ids.ctypes.data
    fields = (_lib.Bytes * (max(n, 1) * batch_size))()
    # The views' data pointers (sample k's column c at k * n + c): NULL is a
    # Parquet null, which the packed copy cannot tell from an empty field.
    pointers = np.frombuffer(fields, np.uint64).reshape(-1, 2)[:, 0] if parquet else None
    count = ctypes.c_uint32()
    engine.begin_iteration(epoch, sample_in_epoch, worker, num_workers)
    left = limit
    done = left == 0
    while not done:
        for col in columns:
            col.start(batch_size)
        got = 0
        want = batch_size if left is None else min(batch_size, left)
        while got < want:
            try:
                # ids of this call land after the batch's earlier ones.
                _lib.check(_lib_.sluice_stream_next_batch(
                    ptr, want - got, ctypes.cast(ids_at + 8 * got, _P_INT64), fields,
                    ctypes.byref(count)))
                if count.value == 0:
                    done = True
                    break
                for col in columns:
                    nulls = None
                    if parquet:
                        nulls = pointers[col.index:count.value * n:n] == 0
                    col.take(ptr, got, count.value, nulls)
                if parquet:
                    for k, c, validity in engine.masked_fields():
                        columns[c].masks.append((got + k, validity))
            finally:
                _lib_.sluice_stream_release(ptr)
            got += count.value
        if left is not None:
            left -= got
            done = done or left == 0
        if got:
            batch = {col.name: col.finish(got) for col in columns}
            if with_ids:
                batch[SAMPLE_ID_KEY] = ids[:got].copy()
            yield batch


def iter_batches(dataset, batch_size=None, with_ids=False):
    """StreamingDataset.iter_batches: the next epoch's samples for this
    process / DataLoader worker, as __iter__ walks them, in batches of
    `batch_size` (default: the dataset's batch_size)."""
    batch_size = dataset.batch_size if batch_size is None else batch_size
    if dataset.pack is not None:
        if with_ids:
            raise ValueError('with_ids gives samples\' ids, and a packed row joins several '
                             'samples: read the ids of a packed dataset\'s samples with '
                             'dataset.plan (worker_ids) instead')
        packer = dataset._packer_for_engine()
        yield from packer.iterate_batches(*dataset._packed_begin(), batch_size)
        return
    other = dataset._engine.streams_with_other_columns()
    if other is not None:
        # A batch of columns needs each column in every sample; each sample
        # of such a dataset is a dict of its own stream's columns instead.
        raise ValueError(f'batch mode needs every stream to have the same columns, and this '
                         f'dataset\'s differ ({other}): iterate the dataset instead (each sample '
                         f'is a dict of its own stream\'s columns)')
    epoch, sample_in_epoch, worker, workers = dataset._begin_iteration()
    yield from engine_batches(dataset._engine, epoch, sample_in_epoch, worker, workers,
                              batch_size, with_ids)


def batch_length(batch):
    """The samples (or packed rows) in a batch of iter_batches, also after
    a DataLoader turned its arrays into tensors: a column of several arrays
    counts its offsets (less one) or its values, any other its first axis."""
    column = next(iter(batch.values()))
    if hasattr(column, 'offsets'):
        return len(column.offsets) - 1
    if hasattr(column, 'values') and isinstance(column, tuple):
        return len(column.values)
    return column.shape[0]


def _tensor(value):
    import torch
    try:
        return torch.from_numpy(value)
    except TypeError:  # a dtype torch has no type for (uint16/32/64 here): left as numpy
        return value


def to_torch(batch):
    """A batch's arrays as torch tensors sharing their memory (no copy);
    columns of a dtype torch lacks stay numpy arrays. A column of several
    arrays (VarColumn, ValueColumn, ...) keeps its type, each array a
    tensor (a `nulls` of None stays None)."""
    return {k: type(v)(*(None if x is None else _tensor(x) for x in v)) if isinstance(v, tuple)
            else _tensor(v) for k, v in batch.items()}


# Unsigned types torch (1.13) has no tensor type for, and the lossless
# signed type each crosses a DataLoader as.
_WIDENED = {np.dtype('<u2'): np.int32, np.dtype('<u4'): np.int64}


def _loader_array(name, value):
    """`value` as an array default_convert can turn into a tensor: uint16 /
    uint32 widened, datetime64 / timedelta64 as their int64 counts (in the
    dtype's unit); a uint64 one refused by name."""
    if value.dtype.kind == 'u' and value.itemsize > 1:
        wide = _WIDENED.get(value.dtype.newbyteorder('<'))
        if wide is None:
            raise TypeError(f'column {name!r} is {value.dtype}, which torch has no tensor '
                            f'type for: read it with iter_batches in the process instead')
        return value.astype(wide)
    if value.dtype.kind in 'mM':
        return value.view(np.int64)
    return value


def _loader_ready(batch):
    """A batch whose arrays the DataLoader's default_convert can turn into
    tensors (_loader_array, also inside a column of several arrays)."""
    for name, value in batch.items():
        if isinstance(value, np.ndarray):
            batch[name] = _loader_array(name, value)
        elif isinstance(value, tuple):
            batch[name] = type(value)(*(x if x is None else _loader_array(name, x)
                                        for x in value))
    return batch


class ColumnBatches(_Base):
    """An IterableDataset of a StreamingDataset's batches for
    DataLoader(ColumnBatches(ds, n), batch_size=None): each worker yields its
    own samples' batches, as the dataset would yield them one by one. Columns
    torch has no type for are widened (uint16 -> int32, uint32 -> int64),
    datetime64 / timedelta64 ones handed over as their int64 counts; a
    uint64 column is a TypeError. with_ids: as iter_batches'."""

    def __init__(self, dataset, batch_size=None, with_ids=False):
        self.dataset = dataset
        self.batch_size = dataset.batch_size if batch_size is None else batch_size
        self.with_ids = with_ids

    def __iter__(self):
        return map(_loader_ready, iter_batches(self.dataset, self.batch_size, self.with_ids))

    def __len__(self):
        # A packed dataset has no length (its TypeError says why).
        return -(-len(self.dataset) // self.batch_size)

    def resumable_dataset(self):
        """The StreamingDataset whose state a StreamingDataLoader over these
        batches saves and loads: resuming deals batches as a DataLoader of
        dataset.batch_size does, so the two batch sizes must agree."""
        if self.batch_size != self.dataset.batch_size:
            raise ValueError(f'ColumnBatches of {self.batch_size} samples over a dataset of '
                             f'batch_size {self.dataset.batch_size} cannot be resumed exactly '
                             f'(a resume deals batches of the dataset\'s batch_size): give '
                             f'both the same batch size')
        return self.dataset
