"""The samples of one sluice_stream_next_batch call as dicts, decoded column
by column: each column crosses the ABI once (sluice_stream_batch_column,
its fields packed into one buffer) and every field is a slice of one bytes
object, instead of one ctypes call and ctypes view per field. The values
are the per-field decoders' (sluice.mds_encodings.make_decoder), applied to the same bytes.
For small fields (1 KiB samples) this is several times cheaper per sample;
large fields are copied once more than by the per-field path, so the engine
uses it only for batches of many samples (Engine.iterate).
"""
import ctypes
import struct

import numpy as np

from sluice import _lib
from sluice.encodings import field_layout, struct_format

__all__ = ['SampleBatch']

_lib_ = _lib.lib
_INT_LAYOUT = field_layout('int')[0]  # the engine's: little-endian int64


def _dict_maker(names):
    """f(column_0, ..., column_n-1) -> [{names[0]: v0, ...} per sample].
    A dict display per sample costs a fraction of dict(zip(names, values));
    the keys are written with repr(), which spells any str as a literal (as
    collections.namedtuple builds its methods)."""
    args = ', '.join(f'c{i}' for i in range(len(names)))
    values = ', '.join(f'v{i}' for i in range(len(names)))
    display = ', '.join(f'{str(name)!r}: v{i}' for i, name in enumerate(names))
    return eval(f'lambda {args}: [{{{display}}} for ({values},) in zip({args})]', {})


class SampleBatch:
    """Decodes the engine's current batch for an Engine whose columns are
    the same in every stream (`items`: (column index, name, decoder))."""

    # The most bytes one column of a batch is copied into (the buffer lives
    # as long as the engine); a larger batch goes field by field.
    CAPACITY = 1 << 20

    def __init__(self, ptr, items, fixed_ints, null_views=None):
        """`fixed_ints`: the column indexes whose values are MDS 'int'
        (8 bytes, little-endian, decoded to Python int). `null_views`: for a
        format whose NULL views are nulls (Parquet), the engine's array of
        next_batch views (sample k's column c at k * columns + c), whose
        NULL data pointers become None fields (a packed column cannot say
        null from empty)."""
        self._ptr = ptr
        # (column, decoder, whether an MDS int, the decoder's whole-column
        # form or None), looked up once: a missing attribute costs an
        # exception a batch.
        self._columns = [(c, dec, c in fixed_ints, getattr(dec, 'batch', None))
                         for c, _, dec in items]
        self._int_formats = {}  # count -> struct format of `count` ints
        self._width = max(len(items), 1)
        self._pointers = None
        if null_views is not None:
            self._pointers = np.frombuffer(null_views, np.uint64).reshape(-1, 2)[:, 0]
        self._make = _dict_maker([name for _, name, _ in items])
        self._needed = ctypes.c_uint64()
        self._buffer = np.empty(self.CAPACITY, np.uint8)  # pages touched as used
        self._at = self._buffer.ctypes.data  # numpy's .ctypes costs a microsecond a look
        self._offsets_for(1)

    def _offsets_for(self, count):
        self._offsets = np.empty(count + 1, np.uint64)
        self._offsets_at = self._offsets.ctypes.data

    def samples(self, count):
        """The `count` samples of the last next_batch (before its release),
        or None when a column of theirs is larger than CAPACITY."""
        if len(self._offsets) < count + 1:
            self._offsets_for(count)
        columns = []
        for c, dec, is_int, batch in self._columns:
            if is_int:
                columns.append(self._ints(c, count))
                continue
            blob = self._packed(c)
            if blob is None:
                return None
            offsets = self._offsets[:count + 1].tolist()
            if batch is not None:  # the column at once (a Parquet list or string)
                values = batch(blob, offsets)
            else:
                values = [blob[a:b] for a, b in zip(offsets, offsets[1:])]
            if self._pointers is not None:
                for k in np.flatnonzero(self._pointers[c:count * self._width:self._width] == 0):
                    values[k] = None
            columns.append(values if batch is not None or dec is bytes else list(map(dec, values)))
        return self._make(*columns)

    def _ints(self, c, count):
        """Column c as Python ints, read by the engine's layout of an MDS
        'int' field. The engine refuses at open an 'int' column of another
        size; the copy checks every field again."""
        size = _INT_LAYOUT.itemsize
        _lib.check(_lib_.sluice_stream_batch_column(
            self._ptr, c, size, self._at, self.CAPACITY, None, ctypes.byref(self._needed)))
        fmt = self._int_formats.get(count)
        if fmt is None:
            fmt = self._int_formats[count] = struct_format(_INT_LAYOUT, count)
        return struct.unpack(fmt, ctypes.string_at(self._at, size * count))

    def _packed(self, c):
        """Column c's fields back to back as one bytes object (their offsets
        in self._offsets), or None when they need more than CAPACITY."""
        status = _lib_.sluice_stream_batch_column(
            self._ptr, c, 0, self._at, self.CAPACITY, self._offsets_at,
            ctypes.byref(self._needed))
        if status == _lib.ERANGE and self._needed.value > self.CAPACITY:
            return None
        _lib.check(status)
        return ctypes.string_at(self._at, self._needed.value)
