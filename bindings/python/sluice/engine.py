"""The engine's streaming dataset (sluice_stream_*: remote stores, shard
cache, local folders read in place, prefetch): StreamingDataset's one read
path. The views it hands out live until the next call on the handle, so
fields are copied at once, and decoded as the dataset's format says.
"""
import bisect
import ctypes
import itertools
import json
import warnings

import numpy as np

from sluice import _lib
from sluice.formats import MIXED, field_decoder, has_null_fields, holds_stored_bytes
from sluice.parquet_values import with_null_elements
from sluice.sample_batch import SampleBatch

__all__ = ['available', 'Engine']

_P = ctypes.POINTER
_lib_ = _lib.lib


def available():
    return hasattr(_lib_, 'sluice_stream_open')


class _Stats(ctypes.Structure):
    """sluice_stream_stats."""
    _fields_ = [(name, ctypes.c_uint64) for name in (
        'bytes_downloaded', 'shards_downloaded', 'shards_evicted', 'cache_hits',
        'consumer_wait_ns', 'shards_skipped', 'samples_skipped')]


if available():
    for _name, _res, _args in (
            ('sluice_stream_open', ctypes.c_int, [ctypes.c_char_p, _P(ctypes.c_void_p)]),
            ('sluice_stream_close', None, [ctypes.c_void_p]),
            ('sluice_stream_num_samples', ctypes.c_uint64, [ctypes.c_void_p]),
            ('sluice_stream_len', ctypes.c_uint64, [ctypes.c_void_p]),
            ('sluice_stream_num_columns', ctypes.c_uint32, [ctypes.c_void_p]),
            ('sluice_stream_num_streams', ctypes.c_uint32, [ctypes.c_void_p]),
            ('sluice_stream_num_shards', ctypes.c_uint64, [ctypes.c_void_p]),
            ('sluice_stream_shard_info', ctypes.c_int,
             [ctypes.c_void_p, ctypes.c_uint64, _P(ctypes.c_uint64), _P(ctypes.c_uint32)]),
            ('sluice_stream_format', ctypes.c_char_p, [ctypes.c_void_p]),
            ('sluice_stream_stream_format', ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_uint32]),
            ('sluice_stream_stream_column_encoding', ctypes.c_char_p,
             [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32]),
            ('sluice_stream_stream_num_columns', ctypes.c_uint32,
             [ctypes.c_void_p, ctypes.c_uint32]),
            ('sluice_stream_stream_column', ctypes.c_uint32,
             [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32]),
            ('sluice_stream_column_name', ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_uint32]),
            ('sluice_stream_column_encoding', ctypes.c_char_p,
             [ctypes.c_void_p, ctypes.c_uint32]),
            ('sluice_stream_get', ctypes.c_int,
             [ctypes.c_void_p, ctypes.c_uint64, _P(_lib.Bytes), ctypes.c_uint32]),
            ('sluice_stream_iter_begin', ctypes.c_int,
             [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint32,
              ctypes.c_uint32]),
            ('sluice_stream_next_batch', ctypes.c_int,
             [ctypes.c_void_p, ctypes.c_uint32, _P(ctypes.c_int64), _P(_lib.Bytes),
              _P(ctypes.c_uint32)]),
            ('sluice_stream_next_ids', ctypes.c_int,
             [ctypes.c_void_p, ctypes.c_uint32, _P(ctypes.c_int64), _P(ctypes.c_uint32)]),
            ('sluice_stream_batch_column', ctypes.c_int,
             [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_void_p, ctypes.c_uint64,
              ctypes.c_void_p, _P(ctypes.c_uint64)]),
            ('sluice_stream_release', None, [ctypes.c_void_p]),
            ('sluice_stream_read_masks', ctypes.c_int, [ctypes.c_void_p, ctypes.c_int]),
            ('sluice_stream_read_pieces', ctypes.c_int, [ctypes.c_void_p, ctypes.c_int]),
            ('sluice_stream_num_pieced', ctypes.c_uint32, [ctypes.c_void_p]),
            ('sluice_stream_copy_pieced', ctypes.c_int,
             [ctypes.c_void_p, ctypes.c_uint32, _P(ctypes.c_uint32), _P(ctypes.c_uint32),
              ctypes.c_void_p, ctypes.c_uint64]),
            ('sluice_stream_num_masked', ctypes.c_uint32, [ctypes.c_void_p]),
            ('sluice_stream_masked', ctypes.c_int,
             [ctypes.c_void_p, ctypes.c_uint32, _P(ctypes.c_uint32), _P(ctypes.c_uint32),
              _P(_lib.Bytes)]),
            ('sluice_stream_load_state', ctypes.c_int,
             [ctypes.c_void_p, ctypes.c_char_p, _P(ctypes.c_uint64), _P(ctypes.c_uint64)]),
            ('sluice_stream_load_state_with', ctypes.c_int,
             [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, _P(ctypes.c_uint64),
              _P(ctypes.c_uint64)]),
            ('sluice_stream_state_with_order', ctypes.c_int,
             [ctypes.c_void_p, ctypes.c_char_p, _P(ctypes.c_void_p)]),
            ('sluice_stream_position_after', ctypes.c_int,
             [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64,
              _P(ctypes.c_uint64)]),
            ('sluice_stream_sample_path', ctypes.c_int,
             [ctypes.c_void_p, ctypes.c_uint64, _P(ctypes.c_void_p)]),
            ('sluice_stream_sample_origin', ctypes.c_int,
             [ctypes.c_void_p, ctypes.c_uint64, _P(ctypes.c_uint64), _P(ctypes.c_uint64)]),
            ('sluice_stream_counters', ctypes.c_int, [ctypes.c_void_p, _P(_Stats)]),
            ('sluice_stream_metrics_json', ctypes.c_int, [ctypes.c_void_p, _P(ctypes.c_void_p)]),
            ('sluice_stream_metrics_prometheus', ctypes.c_int,
             [ctypes.c_void_p, ctypes.c_char_p, _P(ctypes.c_void_p)]),
            ('sluice_stream_metrics_json_scope', ctypes.c_int,
             [ctypes.c_void_p, ctypes.c_char_p, _P(ctypes.c_void_p)]),
            ('sluice_stream_metrics_prometheus_scope', ctypes.c_int,
             [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, _P(ctypes.c_void_p)]),
            ('sluice_stream_publish_metrics', ctypes.c_int, [ctypes.c_void_p]),
            ('sluice_stream_evict_shard', ctypes.c_int, [ctypes.c_void_p, ctypes.c_uint64]),
            ('sluice_stream_shuffle_warning', ctypes.c_int, [ctypes.c_void_p, _P(ctypes.c_void_p)]),
    ):
        _fn = getattr(_lib_, _name)
        _fn.restype = _res
        _fn.argtypes = _args

_BATCH = 64
# Bytes of decoded samples one next_batch call makes live at once. Above
# glibc's heap trim threshold (twice the 128 KiB+ mmap threshold), every
# call's fields land in freshly grown heap pages that fault in zeroed and are
# trimmed again on free: 64 samples of 256 KiB ran at 41% of a reader that
# holds one sample at a time. Below it, the freed chunks are reused.
_LIVE_BYTES = 128 << 10
# Batches of at least this many samples, whose first sample is at most
# _LIVE_BYTES / _PACKED_FROM, are decoded column by column (SampleBatch):
# for small fields the one extra copy costs less than a ctypes call a field.
_PACKED_FROM = 16


class Engine:
    """One sluice_stream handle, opened from Mosaic-style options (a dict)."""

    def __init__(self, config):
        self._config = config
        self._open()

    def _open(self):
        h = ctypes.c_void_p()
        _lib.check(_lib_.sluice_stream_open(json.dumps(self._config).encode(), ctypes.byref(h)))
        self._ptr = h
        n = _lib_.sluice_stream_num_columns(h)
        self.column_names = [_lib_.sluice_stream_column_name(h, i).decode() for i in range(n)]
        self.column_encodings = [_lib_.sluice_stream_column_encoding(h, i).decode()
                                 for i in range(n)]
        self.format = _lib_.sluice_stream_format(h).decode()
        self._n = n
        self._one = (_lib.Bytes * max(n, 1))()
        self._ids = (ctypes.c_int64 * _BATCH)()
        self._batch = (_lib.Bytes * (max(n, 1) * _BATCH))()
        self.num_samples = int(_lib_.sluice_stream_num_samples(h))
        self.length = int(_lib_.sluice_stream_len(h))
        self.num_streams = int(_lib_.sluice_stream_num_streams(h))
        # One call for the whole table: a dataset may have millions of shards.
        num_shards = int(_lib_.sluice_stream_num_shards(h))
        self.samples_per_shard = np.empty(num_shards, dtype=np.uint64)
        stream_per_shard = np.empty(num_shards, dtype=np.uint32)
        _lib.check(_lib_.sluice_stream_shard_table(
            h, self.samples_per_shard.ctypes.data_as(_P(ctypes.c_uint64)),
            stream_per_shard.ctypes.data_as(_P(ctypes.c_uint32)), num_shards))
        # Shards are numbered stream by stream, so each stream's count of
        # them is all that is kept of each shard's stream (4 MB at 1M).
        self.shards_per_stream = np.diff(np.searchsorted(
            stream_per_shard, np.arange(self.num_streams + 1), side='left'))
        del stream_per_shard
        self._set_decoders(h)
        # Masks and pieces are a Parquet stream's (the format whose fields may
        # be null). Without one both switches stay off: the engine collects
        # nothing and no call asks for them, a ctypes call a batch saved.
        self._parquet_parts = self._nulls or self.mixes_in_null_fields()
        if self._parquet_parts:
            # Parquet rows whose packed list holds a null element are read,
            # their masks beside the fields (masked_fields); every reader of
            # this handle's batches applies them.
            _lib.check(_lib_.sluice_stream_read_masks(h, 1))
            # Every reader of this handle's batches copies each field (into a
            # bytes, or a column's buffer through sluice_stream_batch_column),
            # so a large Parquet value comes as its pieces, copied once from
            # them (_pieced_values; batch_column does it itself).
            _lib.check(_lib_.sluice_stream_read_pieces(h, 1))
        self._packed = None
        if self._items:  # every stream has the dataset's columns
            # One format here (_set_decoders): stored 'int' fields are int64.
            stored = holds_stored_bytes(self.format)
            ints = {c for c, e in enumerate(self.column_encodings) if stored and e == 'int'}
            self._packed = SampleBatch(h, self._items, ints, self._batch if self._nulls else None)

    def _set_decoders(self, h):
        """One decoder per column; per stream when streams differ in format,
        encodings or columns (a dataset may mix MDS, JSONL and CSV streams
        with columns of their own, as Mosaic's may: each sample is a dict of
        its own stream's columns, in its shards' order, decoded by its
        stream's format)."""
        # Each stream's columns as dataset column indexes, in its own order
        # (empty for a stream without shards).
        self.stream_columns = [
            [_lib_.sluice_stream_stream_column(h, s, k)
             for k in range(_lib_.sluice_stream_stream_num_columns(h, s))]
            for s in range(self.num_streams)]
        everywhere = list(range(self._n))
        self._stream_items = None
        if (self.format != MIXED and MIXED not in self.column_encodings and
                all(c in ([], everywhere) for c in self.stream_columns)):
            self._items = [(c, name, field_decoder(self.format, e, name)) for c, (name, e)
                           in enumerate(zip(self.column_names, self.column_encodings))]
            # A NULL view is a null value (None) in such a format (Parquet).
            self._nulls = has_null_fields(self.format)
            return
        self._nulls = False
        self._items = None
        self._stream_items = []
        for s in range(self.num_streams):
            fmt = _lib_.sluice_stream_stream_format(h, s).decode()
            items = []
            for c in self.stream_columns[s]:
                enc = _lib_.sluice_stream_stream_column_encoding(h, s, c).decode()
                name = self.column_names[c]
                items.append((c, name, field_decoder(fmt, enc, name)))
            # No shards, no samples; else (items, whether NULL views are nulls).
            self._stream_items.append((items, has_null_fields(fmt)) if fmt else None)
        # Global sample ids number the streams' samples stream by stream (and
        # shards likewise): a stream ends where its last shard does.
        ends = np.zeros(len(self.samples_per_shard) + 1, dtype=np.uint64)
        np.cumsum(self.samples_per_shard, out=ends[1:])
        shard_ends = np.cumsum(self.shards_per_stream)
        self._stream_ends = [int(ends[k]) for k in shard_ends]

    def streams_with_other_columns(self):
        """None when every stream with shards has the same columns (in any
        order), else a text naming each stream's columns."""
        sets = {frozenset(c) for c in self.stream_columns if c}
        if len(sets) <= 1:
            return None
        return '; '.join(f'stream {s}: {[self.column_names[c] for c in cols]}'
                         for s, cols in enumerate(self.stream_columns) if cols)

    def mixes_in_null_fields(self):
        """True when streams of different formats mix and one's fields may be
        null (Parquet's): its columns keep their own types and nulls, which a
        batch of another format's columns has not."""
        return self._stream_items is not None and \
            any(entry is not None and entry[1] for entry in self._stream_items)

    def _items_of(self, idx):
        return self._stream_items[bisect.bisect_right(self._stream_ends, idx)]

    def _decode(self, fields, base, idx, pieced=None):
        """`pieced`: {view index: bytes} of the fields in pieces."""
        out = {}
        items, nulls = (self._items, self._nulls) if self._stream_items is None \
            else self._items_of(idx)
        for c, name, dec in items:
            b = fields[base + c]
            if pieced and base + c in pieced:
                out[name] = dec(pieced[base + c])
            elif b.size:
                out[name] = dec(ctypes.string_at(b.data, b.size))
            else:
                out[name] = dec(None if nulls and not b.data else b'')
        return out

    def masked_fields(self):
        """The last get's / next_batch's fields holding a null element (a
        Parquet packed list): (sample k in the call, column, validity bytes),
        copied; () for most calls. Before the views are released."""
        n = _lib_.sluice_stream_num_masked(self._ptr)
        if not n:
            return ()
        k, c, validity = ctypes.c_uint32(), ctypes.c_uint32(), _lib.Bytes()
        out = []
        for i in range(n):
            _lib.check(_lib_.sluice_stream_masked(self._ptr, i, ctypes.byref(k), ctypes.byref(c),
                                                  ctypes.byref(validity)))
            out.append((k.value, c.value, ctypes.string_at(validity.data, validity.size)))
        return out

    def _mask_nulls(self, samples):
        """Makes the decoded packed lists of the last call that hold a null
        element masked arrays (samples: the call's dicts)."""
        if not self._parquet_parts:
            return samples
        for k, c, validity in self.masked_fields():
            name = self.column_names[c]
            samples[k][name] = with_null_elements(samples[k][name], validity)
        return samples

    def _pieced_values(self):
        """The last next_batch's fields in pieces, each copied from its
        pieces into a bytes (its only copy): {view index k * n + c: bytes},
        or None (most batches)."""
        count = _lib_.sluice_stream_num_pieced(self._ptr) if self._parquet_parts else 0
        if not count:
            return None
        k, c = ctypes.c_uint32(), ctypes.c_uint32()
        kr, cr = ctypes.byref(k), ctypes.byref(c)
        out = {}
        for i in range(count):
            _lib.check(_lib_.sluice_stream_copy_pieced(self._ptr, i, kr, cr, None, 0))
            at = k.value * self._n + c.value
            size = self._batch[at].size
            b = _lib.new_bytes(None, size)
            _lib.check(_lib_.sluice_stream_copy_pieced(self._ptr, i, kr, cr, b, size))
            out[at] = b
        return out

    def _decode_each(self, count):
        """The last next_batch's samples, field by field."""
        n = self._n
        pieced = self._pieced_values()
        if self._stream_items is None:
            return [self._decode(self._batch, k * n, None, pieced) for k in range(count)]
        ids = self._ids
        return [self._decode(self._batch, k * n, ids[k], pieced) for k in range(count)]

    def get(self, idx):
        try:
            _lib.check(_lib_.sluice_stream_get(self._ptr, idx, self._one, self._n))
            return self._mask_nulls([self._decode(self._one, 0, idx)])[0]
        finally:
            _lib_.sluice_stream_release(self._ptr)

    def shard_entry(self, shard):
        """Global shard `shard`'s index entry (a dict, keys as the engine
        writes them; {'samples': n} for a shard no index.json describes)."""
        out, size = ctypes.c_void_p(), ctypes.c_uint64()
        _lib.check(_lib_.sluice_stream_shard_entry(self._ptr, shard, ctypes.byref(out),
                                                   ctypes.byref(size)))
        try:
            return json.loads(ctypes.string_at(out, size.value))
        finally:
            _lib_.sluice_free(out)

    def evict_shard(self, shard):
        """Deletes global shard `shard`'s cached files now (fetched again when read)."""
        _lib.check(_lib_.sluice_stream_evict_shard(self._ptr, shard))

    def begin_iteration(self, epoch, sample_in_epoch, worker, num_workers):
        """Starts this worker's iteration (sluice_stream_iter_begin) and gives
        the warning Mosaic's shuffle gives while planning it, as Mosaic does
        when an epoch's iteration starts (the plan just made says it)."""
        _lib.check(_lib_.sluice_stream_iter_begin(self._ptr, epoch, sample_in_epoch, worker,
                                                  num_workers))
        out = ctypes.c_void_p()
        _lib.check(_lib_.sluice_stream_shuffle_warning(self._ptr, ctypes.byref(out)))
        if out.value:
            try:
                text = ctypes.string_at(out.value).decode('utf-8')
            finally:
                _lib.lib.sluice_free(out)
            warnings.warn(text)

    def sample_origin(self, idx):
        """(global shard, index in the shard) of sample `idx`
        (sluice_stream_sample_origin; IndexError past the last sample)."""
        shard, index = ctypes.c_uint64(), ctypes.c_uint64()
        _lib.check(_lib_.sluice_stream_sample_origin(self._ptr, idx, ctypes.byref(shard),
                                                     ctypes.byref(index)))
        return shard.value, index.value

    def sample_path(self, idx):
        """The local path of the file holding sample `idx` (a raw file itself)."""
        out = ctypes.c_void_p()
        _lib.check(_lib_.sluice_stream_sample_path(self._ptr, idx, ctypes.byref(out)))
        try:
            return ctypes.string_at(out.value).decode('utf-8', 'surrogateescape')
        finally:
            _lib.lib.sluice_free(out)

    def counters(self):
        """What this process did through the handle (sluice_stream_stats), as a dict."""
        stats = _Stats()
        _lib.check(_lib_.sluice_stream_counters(self._ptr, ctypes.byref(stats)))
        return {name: getattr(stats, name) for name, _ in _Stats._fields_}

    def metrics(self, scope='process'):
        """Every counter of the handle summed over `scope` ('process', 'job'
        or 'node'), the window since the previous call of that scope and
        the engine's diagnosis (sluice_stream_metrics_json_scope), as a dict."""
        out = ctypes.c_void_p()
        _lib.check(_lib_.sluice_stream_metrics_json_scope(self._ptr, str(scope).encode(),
                                                          ctypes.byref(out)))
        try:
            return json.loads(ctypes.string_at(out.value).decode('utf-8'))
        finally:
            _lib.lib.sluice_free(out)

    def publish_metrics(self):
        """Writes this process's record of the counts to the node's folder
        now (sluice_stream_publish_metrics)."""
        _lib.check(_lib_.sluice_stream_publish_metrics(self._ptr))

    def metrics_prometheus(self, process, scope='process'):
        """The handle's totals over `scope` as Prometheus text
        (sluice_stream_metrics_prometheus_scope), every series labelled
        process=`process`."""
        out = ctypes.c_void_p()
        _lib.check(_lib_.sluice_stream_metrics_prometheus_scope(
            self._ptr, str(scope).encode(), str(process).encode(), ctypes.byref(out)))
        try:
            return ctypes.string_at(out.value).decode('utf-8')
        finally:
            _lib.lib.sluice_free(out)

    def load_state(self, state, options=None):
        """Loads a state_dict (sluice_stream_load_state_with): `options` is
        {'adapt': [...], 'skip_steps': [...], 'skip_samples': [...],
        'skip_sample_ids': [...]}. Returns
        (epoch, sample_in_epoch) to iterate from; a state the engine refuses
        raises (ValueError naming what changed)."""
        epoch, sie = ctypes.c_uint64(), ctypes.c_uint64()
        _lib.check(_lib_.sluice_stream_load_state_with(
            self._ptr, json.dumps(state).encode(), json.dumps(options or {}).encode(),
            ctypes.byref(epoch), ctypes.byref(sie)))
        return epoch.value, sie.value

    def state_with_order(self, state):
        """Mosaic's five keys of `state` (a dict), then the engine's
        "sluice_order" record for them (sluice_stream_state_with_order)."""
        out = ctypes.c_void_p()
        _lib.check(_lib_.sluice_stream_state_with_order(self._ptr, json.dumps(state).encode(),
                                                        ctypes.byref(out)))
        try:
            return json.loads(ctypes.string_at(out.value).decode('utf-8'))
        finally:
            _lib.lib.sluice_free(out)

    def position_after(self, epoch, start, consumed):
        """sample_in_epoch after `consumed` samples of `epoch` from `start`,
        skipped steps passed over (sluice_stream_position_after)."""
        out = ctypes.c_uint64()
        _lib.check(_lib_.sluice_stream_position_after(self._ptr, epoch, start, consumed,
                                                      ctypes.byref(out)))
        return out.value

    def iterate(self, epoch, sample_in_epoch, worker, num_workers):
        """This worker's samples, one at a time (see iterate_lists)."""
        return itertools.chain.from_iterable(
            self.iterate_lists(epoch, sample_in_epoch, worker, num_workers))

    def iterate_lists(self, epoch, sample_in_epoch, worker, num_workers):
        """This worker's samples as one list per engine batch: a consumer
        that flattens them with itertools.chain walks each list in C, so no
        Python frame resumes per sample."""
        self.begin_iteration(epoch, sample_in_epoch, worker, num_workers)
        count = ctypes.c_uint32()
        n = self._n
        want = _BATCH
        while True:
            try:
                _lib.check(_lib_.sluice_stream_next_batch(self._ptr, want, self._ids,
                                                          self._batch, ctypes.byref(count)))
                k = count.value
                if not k:
                    return
                # Sized by the first sample: one look per call.
                first = sum(self._batch[c].size for c in range(n))
                want = max(1, min(_BATCH, _LIVE_BYTES // max(first, 1)))
                samples = None
                if self._packed is not None and k >= _PACKED_FROM and \
                        first * _PACKED_FROM <= _LIVE_BYTES:
                    samples = self._packed.samples(k)  # None: a column too large
                if samples is None:
                    samples = self._decode_each(k)
                self._mask_nulls(samples)
            finally:
                _lib_.sluice_stream_release(self._ptr)
            yield samples

    def iterate_ids(self, epoch, sample_in_epoch, worker, num_workers):
        """The planned sample ids, as `iterate` walks them (its prefetching
        included) but without reading them: for subclasses that read each
        sample through their own __getitem__ / get_item (whose get counts
        it as delivered, once)."""
        self.begin_iteration(epoch, sample_in_epoch, worker, num_workers)
        count = ctypes.c_uint32()
        while True:
            _lib.check(_lib_.sluice_stream_next_ids(self._ptr, _BATCH, self._ids,
                                                    ctypes.byref(count)))
            ids = self._ids[:count.value]
            if not ids:
                return
            yield from ids

    def close(self):
        if getattr(self, '_ptr', None):
            _lib_.sluice_stream_close(self._ptr)
            self._ptr = None

    def __del__(self):
        self.close()

    def __getstate__(self):
        return {'_config': self._config}

    def __setstate__(self, state):
        self._config = state['_config']
        self._open()
