"""Shard formats as the engine's format descriptors describe them
(sluice_format_info): what a read field holds, so that the package asks a
format instead of comparing its name."""
import ctypes
import functools

from sluice import _lib
from sluice.encodings import make_text_decoder
from sluice.mds_encodings import make_decoder
from sluice.parquet_values import parquet_decoder

__all__ = ['JSON_TEXT', 'MIXED', 'PARQUET_VALUE', 'PLAIN_TEXT', 'STORED_BYTES', 'field_decoder',
           'field_form', 'has_null_fields', 'holds_parquet_values', 'holds_stored_bytes']

# SLUICE_FIELD_* of sluice.h.
STORED_BYTES = 0  # the column's stored bytes, decoded by its MDS encoding
JSON_TEXT = 1     # the member's JSON value text (JSONL)
PLAIN_TEXT = 2    # the field's text between separators (CSV/TSV)
PARQUET_VALUE = 3  # the value in its column's Parquet field encoding; null: NULL data
# sluice_stream_format of a dataset whose streams differ in format (no
# format's name: each stream's own is asked then).
MIXED = 'mixed'


@functools.lru_cache(maxsize=None)
def field_form(fmt):
    """What a field read from a shard of format `fmt` holds (one of the
    constants above); NotImplementedError for a format the engine lacks."""
    form = ctypes.c_int()
    _lib.check(_lib.lib.sluice_format_info(fmt.encode(), ctypes.byref(form), None))
    return form.value


def holds_stored_bytes(fmt):
    """True when every field of a dataset of format `fmt` (a format's name
    or MIXED) is a column's stored bytes."""
    return fmt != MIXED and field_form(fmt) == STORED_BYTES


def holds_parquet_values(fmt):
    """True when every field of a dataset of format `fmt` (a format's name
    or MIXED) is a value in its column's Parquet field encoding."""
    return fmt != MIXED and field_form(fmt) == PARQUET_VALUE


def has_null_fields(fmt):
    """True when a field of format `fmt` whose view has NULL data is a null
    value (None), not an empty one: the decoders of such a format take None
    for it (the callers pass it)."""
    return field_form(fmt) == PARQUET_VALUE


def field_decoder(fmt, encoding, column):
    """Field bytes -> Python value for a column of `encoding` in a shard of
    format `fmt` (bytes or None for a null field, has_null_fields). Unsafe
    encodings are decoded: the engine refused them when the dataset opened
    unless they were allowed."""
    form = field_form(fmt)
    if form == STORED_BYTES:
        return make_decoder(encoding, column)
    if form == PARQUET_VALUE:
        return parquet_decoder(encoding, column)
    return make_text_decoder(fmt, form == JSON_TEXT, encoding, column)
