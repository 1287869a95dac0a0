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
The arrays belong to the caller (nothing points into the cache), so
torch.from_numpy shares them without a copy (to_torch). The samples and
their order are exactly __iter__'s; a subclass's __getitem__ is not applied.
A dataset whose streams have different columns has no batch of columns (a
ValueError naming each stream's).
"""
import ctypes
from typing import NamedTuple

import numpy as np

from sluice import _lib
from sluice.encodings import SCALAR_TYPES, parse_ndarray_encoding
from sluice.engine import _lib_  # the library, sluice_stream_batch_column declared
from sluice.formats import holds_stored_bytes

try:
    from torch.utils.data import IterableDataset as _Base
except ImportError:  # torch is optional
    _Base = object

__all__ = ['ColumnBatches', 'VarColumn', 'iter_batches', 'to_torch']

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


def _fixed_layout(fmt, encoding):
    """(numpy dtype, item shape) of a fixed-size column, else None."""
    if not holds_stored_bytes(fmt):
        return None
    if encoding == 'int':
        return np.dtype('<i8'), ()
    if encoding in SCALAR_TYPES:
        return np.dtype(SCALAR_TYPES[encoding]).newbyteorder('<'), ()
    nd = parse_ndarray_encoding(encoding)
    if nd is not None and nd[0] is not None and nd[1] is not None:
        return np.dtype(nd[0]).newbyteorder('<'), tuple(nd[1])
    return None


class _Column:
    """One column's arrays for the batch being filled."""

    def __init__(self, index, name, layout):
        self.index, self.name, self.layout = index, name, layout
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
        self.used = 0

    def take(self, ptr, pos, count):
        """Copies this column of the engine's current batch (`count` samples)
        in after the `pos` samples taken so far."""
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
        return VarColumn(self.values[:self.used], self.offsets[:samples + 1])


def engine_batches(engine, epoch, sample_in_epoch, worker, num_workers, batch_size):
    """This worker's samples of the epoch as dicts column -> array (see the
    module), batch_size samples each (the last may be shorter)."""
    if not isinstance(batch_size, int) or batch_size <= 0:
        raise ValueError(f'batch_size must be a positive int, got {batch_size!r}')
    ptr = engine._ptr
    n = engine._n
    columns = [_Column(c, name, _fixed_layout(engine.format, enc))
               for c, (name, enc) in enumerate(zip(engine.column_names, engine.column_encodings))]
    ids = (ctypes.c_int64 * batch_size)()
    fields = (_lib.Bytes * (max(n, 1) * batch_size))()
    count = ctypes.c_uint32()
    engine.begin_iteration(epoch, sample_in_epoch, worker, num_workers)
    done = False
    while not done:
        for col in columns:
            col.start(batch_size)
        got = 0
        while got < batch_size:
            try:
                _lib.check(_lib_.sluice_stream_next_batch(ptr, batch_size - got, ids, fields,
                                                          ctypes.byref(count)))
                if count.value == 0:
                    done = True
                    break
                for col in columns:
                    col.take(ptr, got, count.value)
            finally:
                _lib_.sluice_stream_release(ptr)
            got += count.value
        if got:
            yield {col.name: col.finish(got) for col in columns}


def iter_batches(dataset, batch_size=None):
    """StreamingDataset.iter_batches: the next epoch's samples for this
    process / DataLoader worker, as __iter__ walks them, in batches of
    `batch_size` (default: the dataset's batch_size)."""
    batch_size = dataset.batch_size if batch_size is None else batch_size
    other = dataset._engine.streams_with_other_columns()
    if other is not None:
        # A batch of columns needs each column in every sample; each sample
        # of such a dataset is a dict of its own stream's columns instead.
        raise ValueError(f'batch mode needs every stream to have the same columns, and this '
                         f'dataset\'s differ ({other}): iterate the dataset instead (each sample '
                         f'is a dict of its own stream\'s columns)')
    epoch, sample_in_epoch, worker, workers = dataset._begin_iteration()
    yield from engine_batches(dataset._engine, epoch, sample_in_epoch, worker, workers,
                              batch_size)


def _tensor(value):
    import torch
    try:
        return torch.from_numpy(value)
    except TypeError:  # a dtype torch has no type for (uint16/32/64 here): left as numpy
        return value


def to_torch(batch):
    """A batch's arrays as torch tensors sharing their memory (no copy);
    columns of a dtype torch lacks stay numpy arrays."""
    return {k: VarColumn(_tensor(v.data), _tensor(v.offsets)) if isinstance(v, VarColumn)
            else _tensor(v) for k, v in batch.items()}


# Unsigned types torch (1.13) has no tensor type for, and the lossless
# signed type each crosses a DataLoader as.
_WIDENED = {np.dtype('<u2'): np.int32, np.dtype('<u4'): np.int64}


def _loader_ready(batch):
    """A batch whose arrays the DataLoader's default_convert can turn into
    tensors: uint16 / uint32 columns widened; a uint64 one refused by name."""
    for name, value in batch.items():
        if isinstance(value, np.ndarray) and value.dtype.kind == 'u' and value.itemsize > 1:
            wide = _WIDENED.get(value.dtype.newbyteorder('<'))
            if wide is None:
                raise TypeError(f'column {name!r} is {value.dtype}, which torch has no tensor '
                                f'type for: read it with iter_batches in the process instead')
            batch[name] = value.astype(wide)
    return batch


class ColumnBatches(_Base):
    """An IterableDataset of a StreamingDataset's batches for
    DataLoader(ColumnBatches(ds, n), batch_size=None): each worker yields its
    own samples' batches, as the dataset would yield them one by one. Columns
    torch has no type for are widened (uint16 -> int32, uint32 -> int64); a
    uint64 column is a TypeError."""

    def __init__(self, dataset, batch_size=None):
        self.dataset = dataset
        self.batch_size = dataset.batch_size if batch_size is None else batch_size

    def __iter__(self):
        return map(_loader_ready, iter_batches(self.dataset, self.batch_size))

    def __len__(self):
        return -(-len(self.dataset) // self.batch_size)
