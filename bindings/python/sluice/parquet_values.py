"""Parquet fields -> Python values, as Hugging Face `datasets` users get
them. The field bytes of each column encoding are the engine's
(formats/parquet/field_encoding.h, sluice_dataset_column_encoding); this
module is the one table from an encoding to what its bytes become:

  encoding                      value                    batch array dtype
  int8 .. int64, uint8 .. 64    int                      its numpy int type
  float16, float32, float64     float                    float16/32/64
  bool                          bool                     bool
  str                           str
  bytes                         bytes
  decimal(p,s)                  decimal.Decimal
  date32                        datetime.date            datetime64[D]
  time32[ms], time64[us|ns]     datetime.time (ns cut    timedelta64[unit]
                                to us, as Python's time
                                cannot hold them)
  timestamp[U]                  datetime.datetime, naive datetime64[U]
  timestamp[U,UTC]              datetime.datetime in UTC datetime64[U]
  timestamp[ns], timestamp[ns,UTC]  pandas.Timestamp when pandas is
                                importable (as pyarrow's to_pylist, which
                                `datasets` uses, gives), else datetime.datetime
                                when the value has no digits below us
  list<T>, T above fixed-width  numpy array of T's batch dtype; a list
                                holding a null element: a numpy masked
                                array (numpy.ma), masked where null
  other lists (JSON text)       Python lists (nested), their elements as
                                above (bytes as bytes, decimals as Decimal)
  a null field                  None

Lists of numbers differ from `datasets`' plain (Python) format, which gives
Python lists: they are numpy arrays here, without a Python object per
element, of the element's own type (`datasets`' .with_format('numpy') gives
arrays too, but of other types for some: int64 for list<int32>). An encoding
not in the table fails when the dataset opens, naming the column.

A packed list holding a null element (pyarrow, Spark and `datasets` write
list elements nullable) keeps its dtype: the engine hands out the values,
zero where null, with a mask of null elements beside them
(formats/parquet/field_encoding.h), and the value is
numpy.ma.MaskedArray(values, mask); its .tolist() is the list with None
that `datasets` gives, and lists without a null element stay plain arrays.
In batch mode a ListColumn carries `element_nulls` (with_null_elements).

A timestamp's zone: Parquet records only whether a timestamp is adjusted to
UTC; the zone name pyarrow keeps in the file's Arrow schema (e.g.
America/New_York) is not read, so such values are the same instant in UTC.
"""
import datetime
import decimal
import json
import re
import struct
from typing import Callable, NamedTuple, Optional

import numpy as np

__all__ = ['ParquetKind', 'parquet_decoder', 'parquet_kind', 'packed_list_kind',
           'with_null_elements']

_EPOCH = datetime.datetime(1970, 1, 1)
_EPOCH_UTC = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
_DAY_ZERO = datetime.date(1970, 1, 1)
_PER_US = {'ms': None, 'us': 1, 'ns': 1000}


class ParquetKind(NamedTuple):
    """How one value of an encoding reads: `from_bytes` (the field's bytes),
    `from_json` (an element of a JSON-text list), and for a fixed-width
    value its `width` and the numpy dtype its values take in arrays
    (`array_dtype`, read from `stored_dtype` little-endian integers or
    floats); width 0 for a variable-size value."""
    from_bytes: Callable
    from_json: Callable
    width: int = 0
    stored_dtype: Optional[str] = None
    array_dtype: Optional[str] = None


def _int(bits, signed):
    stored = f'<{"i" if signed else "u"}{bits // 8}'
    return ParquetKind(lambda b: int.from_bytes(b, 'little', signed=signed), int, bits // 8,
                       stored, stored)


def _float(bits):
    fmt = {16: '<e', 32: '<f', 64: '<d'}[bits]
    unpack = struct.Struct(fmt).unpack
    stored = f'<f{bits // 8}'
    return ParquetKind(lambda b: unpack(b)[0], float, bits // 8, stored, stored)


def _from_days(days):
    return _DAY_ZERO + datetime.timedelta(days=days)


def _time_of_day(unit):
    per_us = _PER_US[unit]

    def from_count(count):
        us = count * 1000 if per_us is None else count // per_us
        return (_EPOCH + datetime.timedelta(microseconds=us)).time()
    return from_count


def _timestamp(unit, utc):
    per_us = _PER_US[unit]
    epoch = _EPOCH_UTC if utc else _EPOCH
    if per_us == 1000:
        try:
            import pandas as pd
        except ImportError:
            pd = None
        if pd is not None:
            tz = 'UTC' if utc else None
            return lambda count: pd.Timestamp(count, unit='ns', tz=tz)

        def from_ns(count):
            if count % 1000:
                raise ValueError(f'timestamp[ns] value {count} has digits below a microsecond, '
                                 f'which datetime cannot hold (install pandas for '
                                 f'pandas.Timestamp values)')
            return epoch + datetime.timedelta(microseconds=count // 1000)
        return from_ns
    if per_us is None:
        return lambda count: epoch + datetime.timedelta(milliseconds=count)
    return lambda count: epoch + datetime.timedelta(microseconds=count)


def _counted(width, to_value, array_dtype):
    """A value stored as a little-endian signed count (days, ms, ...)."""
    stored = f'<i{width}'
    return ParquetKind(lambda b: to_value(int.from_bytes(b, 'little', signed=True)), to_value,
                       width, stored, array_dtype)


def _decimal(_precision, _scale):
    return ParquetKind(lambda b: decimal.Decimal(b.decode('ascii')), decimal.Decimal)


def _bytes_from_json(value):
    return bytes.fromhex(value['hex'])


# The one table: an encoding's name (a pattern; its groups are the
# factory's arguments) -> its ParquetKind.
_KINDS = (
    (r'int(8|16|32|64)', lambda bits: _int(int(bits), True)),
    (r'uint(8|16|32|64)', lambda bits: _int(int(bits), False)),
    (r'float(16|32|64)', lambda bits: _float(int(bits))),
    (r'bool', lambda: ParquetKind(lambda b: b != b'\x00', bool, 1, '<u1', 'bool')),
    (r'str', lambda: ParquetKind(lambda b: b.decode('utf-8'), str)),
    (r'bytes', lambda: ParquetKind(bytes, _bytes_from_json)),
    (r'decimal\((\d+),(-?\d+)\)', _decimal),
    (r'date32', lambda: _counted(4, _from_days, 'datetime64[D]')),
    (r'time32\[(ms)\]', lambda unit: _counted(4, _time_of_day(unit), f'timedelta64[{unit}]')),
    (r'time64\[(us|ns)\]', lambda unit: _counted(8, _time_of_day(unit), f'timedelta64[{unit}]')),
    (r'timestamp\[(ms|us|ns)(,UTC)?\]',
     lambda unit, utc: _counted(8, _timestamp(unit, bool(utc)), f'datetime64[{unit}]')),
)
_KIND_PATTERNS = [(re.compile(pattern + r'\Z'), factory) for pattern, factory in _KINDS]


def parquet_kind(encoding):
    """The ParquetKind of a scalar encoding, or None for a name not in the
    table (a list's name included)."""
    for pattern, factory in _KIND_PATTERNS:
        m = pattern.match(encoding)
        if m:
            return factory(*m.groups())
    return None


def _list_element(encoding):
    """The element encoding of 'list<T>', else None."""
    if encoding.startswith('list<') and encoding.endswith('>'):
        return encoding[5:-1]
    return None


def packed_list_kind(encoding):
    """The element's ParquetKind when `encoding` is a list whose values the
    engine packs (one level of a fixed-width element), else None."""
    element = _list_element(encoding)
    if element is None:
        return None
    kind = parquet_kind(element)
    return kind if kind is not None and kind.width else None


def _unknown(encoding, column):
    return NotImplementedError(f'column {column!r}: unknown Parquet field encoding {encoding!r}')


def _json_converter(encoding, column, field_encoding):
    """A function: an element of a JSON-text list of `encoding` -> its value
    (nested lists as lists, null as None)."""
    element = _list_element(encoding)
    if element is not None:
        inner = _json_converter(element, column, field_encoding)
        return lambda v: None if v is None else [inner(x) for x in v]
    kind = parquet_kind(encoding)
    if kind is None:
        raise _unknown(field_encoding, column)
    convert = kind.from_json
    return lambda v: None if v is None else convert(v)


def _nullable(decode):
    return lambda b: None if b is None else decode(b)


def _packed_batch(stored, dtype):
    """Decodes a batch's packed lists at once: (the fields back to back,
    their byte offsets) -> one array per field, each a slice of one copy
    (writable, native order) instead of a copy of its own."""
    size = stored.itemsize

    def batch(blob, offsets):
        values = np.frombuffer(blob, stored).astype(dtype)
        if any(o % size for o in offsets):  # as np.frombuffer refuses one field alone
            raise ValueError(f'a packed list of {stored} is not a whole number of elements')
        bounds = [o // size for o in offsets]
        return [values[a:b] for a, b in zip(bounds, bounds[1:])]
    return batch


def _str_batch(blob, offsets):
    """Decodes a batch's strings at once: ASCII text (the common case) is
    decoded once and sliced at the byte offsets, which are then its
    character offsets."""
    text = blob.decode('utf-8')
    if len(text) == len(blob):
        return [text[a:b] for a, b in zip(offsets, offsets[1:])]
    return [blob[a:b].decode('utf-8') for a, b in zip(offsets, offsets[1:])]


def _with_batch(decode, batch):
    """`decode` with its `batch` attribute: (a batch's fields back to back,
    their offsets) -> the values of them all (sluice.sample_batch takes it;
    the caller makes the null fields None afterwards)."""
    decode.batch = batch
    return decode


def parquet_decoder(encoding, column):
    """Field bytes (None for a null field) -> the value, for column `column`
    of Parquet field encoding `encoding`. NotImplementedError naming both
    for an encoding not in the table. Packed lists and strings also decode
    a whole batch's column at once (the decoder's `batch`)."""
    packed = packed_list_kind(encoding)
    if packed is not None:
        stored = np.dtype(packed.stored_dtype)
        dtype = np.dtype(packed.array_dtype)
        # astype copies: a writable array in native order, as `datasets` gives.
        return _with_batch(_nullable(lambda b: np.frombuffer(b, stored).astype(dtype)),
                           _packed_batch(stored, dtype))
    if _list_element(encoding) is not None:
        convert = _json_converter(encoding, column, encoding)
        return _nullable(lambda b: convert(json.loads(b)))
    kind = parquet_kind(encoding)
    if kind is None:
        raise _unknown(encoding, column)
    if encoding == 'str':
        return _with_batch(_nullable(kind.from_bytes), _str_batch)
    return _nullable(kind.from_bytes)


def with_null_elements(values, validity):
    """A packed list's array (parquet_decoder's value) with its mask of null
    elements (`validity`: bytes, one per element, 0 where null) as a numpy
    masked array of the same dtype, masked where null."""
    mask = np.frombuffer(validity, np.uint8) == 0
    if len(mask) != len(values):
        raise ValueError(f'a mask of {len(mask)} null-element flags for a list of '
                         f'{len(values)} elements')
    return np.ma.MaskedArray(values, mask=mask)
