"""Token packing: fixed-length rows of token ids, made by the engine
(engine/packing over sluice_pack_*), handed out as numpy arrays.

StreamingDataset(..., pack=PackSpec(column='tokens', seq_len=4096, eos_id=0))
yields dicts {'tokens': int64 array of seq_len} (and for method='bin' also
'segment_ids' and 'position_ids', int32: each token's document piece in the
row, 1, 2, .., 0 for padding, and its place in that piece; 'cu_seqlens',
int32 of seq_len + 1: 0, each piece's start, the last piece's end, that end
repeated, flash-attention varlen's layout; 'num_documents', the row's
pieces, so cu_seqlens[:num_documents + 1] is the row's own) instead of
samples. Each DataLoader worker packs its own samples, in the order the
dataset plans for it; no Python runs per token (a row is a view of an array
the engine filled for many rows).
"""
import ctypes
import json
from typing import NamedTuple, Optional

import numpy as np

from sluice import _lib

__all__ = ['PackSpec', 'Packer', 'resume_point']

_lib_ = _lib.lib
# Tokens the engine fills per call: rows of a call share one array.
_TOKENS_PER_CALL = 1 << 20


class PackSpec(NamedTuple):
    """What rows to make (the engine checks every key: sluice_pack_open).
    method: 'concat' (documents joined, each followed by eos_id, cut into
    rows; a row's rest starts the next) or 'bin' (first-fit decreasing of
    each window of bin_window documents, rows padded with pad_id).
    bytes_dtype: the ints of an MDS `bytes` column. drop_last: concat drops
    the epoch's last partial row instead of padding it."""
    column: str
    seq_len: int
    eos_id: Optional[int] = None
    method: str = 'concat'
    pad_id: Optional[int] = None
    bin_window: int = 256
    bytes_dtype: str = 'int64'
    drop_last: bool = True


def as_spec(pack):
    """A PackSpec or a dict of its keys -> the dict the engine reads, every
    key present (defaults filled in, so that the two forms of one spec are
    equal in a state_dict); the engine refuses unknown or bad keys."""
    if isinstance(pack, PackSpec):
        return pack._asdict()
    if isinstance(pack, dict):
        return {**PackSpec._field_defaults, **pack}
    raise TypeError(f'pack must be a sluice.PackSpec or a dict, not {type(pack).__name__}')


def resume_point(rank_rows, batch_size, worker, num_workers):
    """(role, rows): DataLoader worker `worker` of `num_workers` continues
    the saved run's worker `role`, after the `rows` it handed out, when the
    rank consumed `rank_rows` rows in batches of `batch_size`
    (sluice_pack_resume_point; a new DataLoader deals from worker 0 again)."""
    role, rows = ctypes.c_uint32(), ctypes.c_uint64()
    _lib.check(_lib_.sluice_pack_resume_point(rank_rows, batch_size, worker, num_workers,
                                              ctypes.byref(role), ctypes.byref(rows)))
    return role.value, rows.value


class Packer:
    """One sluice_pack over an Engine's stream handle (which must outlive it)."""

    def __init__(self, engine, spec):
        self._engine = engine  # keeps the stream open while the pack reads it
        self.spec = spec
        h = ctypes.c_void_p()
        _lib.check(_lib_.sluice_pack_open(engine._ptr, json.dumps(spec).encode(),
                                          ctypes.byref(h)))
        self._ptr = h
        self.seq_len = int(_lib_.sluice_pack_seq_len(h))
        self._bin = spec.get('method', 'concat') == 'bin'

    def position(self):
        """Since the last begin: {'rows', 'document', 'offset', 'tokens_in',
        'padding'} (sluice_pack_position)."""
        vals = [ctypes.c_uint64() for _ in range(5)]
        _lib.check(_lib_.sluice_pack_position(self._ptr, *[ctypes.byref(v) for v in vals]))
        return dict(zip(('rows', 'document', 'offset', 'tokens_in', 'padding'),
                        (v.value for v in vals)))

    def resume_point_in(self, epoch, rank_rows, batch_size, worker, num_workers):
        """resume_point, exact in the epoch's tail too (after a worker ran
        out): counts every worker's rows of `epoch` by packing them
        (sluice_pack_resume_point_in). Call before begin."""
        role, rows = ctypes.c_uint32(), ctypes.c_uint64()
        _lib.check(_lib_.sluice_pack_resume_point_in(self._ptr, epoch, rank_rows, batch_size,
                                                     worker, num_workers, ctypes.byref(role),
                                                     ctypes.byref(rows)))
        return role.value, rows.value

    def resume_point_segments(self, epoch, segments, rank, worker):
        """(role, skip_rows) of DataLoader worker `worker` of global rank
        `rank` on the last of `segments` (begin's list), exact in that
        shape's epoch tail too (sluice_pack_resume_point_segments). Call
        before begin."""
        role, rows = ctypes.c_uint32(), ctypes.c_uint64()
        _lib.check(_lib_.sluice_pack_resume_point_segments(
            self._ptr, epoch, json.dumps(segments).encode(), rank, worker, ctypes.byref(role),
            ctypes.byref(rows)))
        return role.value, rows.value

    def begin(self, epoch, worker, num_workers, skip_rows=0, segments=None):
        """Starts worker `worker` of `num_workers`' rows of `epoch` after
        its first `skip_rows` (sluice_pack_begin); with `segments` (the
        world shapes the epoch ran on, oldest first, the last this run's:
        dicts of nodes, ranks_per_node, workers, batch_size, rows) an
        elastic resume where `worker` is the role (global rank x workers +
        worker) of the last shape (sluice_pack_begin_segments)."""
        if segments is None:
            _lib.check(_lib_.sluice_pack_begin(self._ptr, epoch, worker, num_workers, skip_rows))
        else:
            _lib.check(_lib_.sluice_pack_begin_segments(self._ptr, epoch,
                                                        json.dumps(segments).encode(), worker,
                                                        skip_rows))

    def iterate_lists(self, epoch, worker, num_workers, skip_rows=0, segments=None):
        """This worker's rows of `epoch` after its first `skip_rows`, one
        list of row dicts per engine call (begin's arguments)."""
        self.begin(epoch, worker, num_workers, skip_rows, segments)
        n = self.seq_len
        per_call = max(1, _TOKENS_PER_CALL // n)
        count = ctypes.c_uint32()
        while True:
            tokens = np.empty((per_call, n), dtype=np.int64)
            seg = pos = None
            if self._bin:
                seg = np.empty((per_call, n), dtype=np.int32)
                pos = np.empty((per_call, n), dtype=np.int32)
            _lib.check(_lib_.sluice_pack_next(
                self._ptr, per_call, tokens.ctypes.data,
                seg.ctypes.data if seg is not None else None,
                pos.ctypes.data if pos is not None else None, ctypes.byref(count)))
            k = count.value
            if not k:
                return
            if seg is None:
                yield [{'tokens': tokens[i]} for i in range(k)]
            else:
                cu, docs = self._bounds(seg, k)
                yield [{'tokens': tokens[i], 'segment_ids': seg[i], 'position_ids': pos[i],
                        'cu_seqlens': cu[i], 'num_documents': docs[i]} for i in range(k)]

    def _bounds(self, segment_ids, rows):
        """(cu_seqlens, num_documents) of the first `rows` rows of
        `segment_ids`, made by the engine (sluice_pack_bounds)."""
        cu = np.empty((rows, self.seq_len + 1), dtype=np.int32)
        docs = np.empty(rows, dtype=np.int32)
        _lib.check(_lib_.sluice_pack_bounds(self._ptr, rows, segment_ids.ctypes.data,
                                            cu.ctypes.data, docs.ctypes.data))
        return cu, docs

    def iterate_batches(self, epoch, worker, num_workers, skip_rows, segments, batch_size):
        """The same rows as iterate_lists, as dicts of (rows, seq_len) arrays
        of `batch_size` rows each (the worker's last may be shorter): the
        engine fills whole batches in place, so a batch costs no Python per
        row. Arrays of one engine call are views of its arrays, which
        nothing else holds."""
        if not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f'batch_size must be a positive int, got {batch_size!r}')
        self.begin(epoch, worker, num_workers, skip_rows, segments)
        n = self.seq_len
        # Whole batches per call: about _TOKENS_PER_CALL tokens, at least one batch.
        per_call = batch_size * max(1, _TOKENS_PER_CALL // (n * batch_size))
        count = ctypes.c_uint32()
        names = ('tokens', 'segment_ids', 'position_ids', 'cu_seqlens', 'num_documents') \
            if self._bin else ('tokens',)
        while True:
            arrays = [np.empty((per_call, n), dtype=np.int64)]
            if self._bin:
                arrays += [np.empty((per_call, n), dtype=np.int32) for _ in range(2)]
            got = 0
            # sluice_pack_next may hand out fewer rows than asked before the
            # epoch ends: ask again for the rest, after the rows already in.
            while got < per_call:
                at = [a.ctypes.data + a.itemsize * n * got for a in arrays]
                _lib.check(_lib_.sluice_pack_next(
                    self._ptr, per_call - got, at[0], at[1] if self._bin else None,
                    at[2] if self._bin else None, ctypes.byref(count)))
                if not count.value:
                    break
                got += count.value
            if self._bin and got:
                arrays += self._bounds(arrays[1], got)
            for first in range(0, got, batch_size):
                yield {k: a[first:min(first + batch_size, got)] for k, a in zip(names, arrays)}
            if got < per_call:
                return

    def __getstate__(self):  # a spawned worker opens its own pack over its engine
        return {'engine': self._engine, 'spec': self.spec}

    def __setstate__(self, state):
        self.__init__(state['engine'], state['spec'])

    def close(self):
        if getattr(self, '_ptr', None):
            _lib_.sluice_pack_close(self._ptr)
            self._ptr = None

    def __del__(self):
        self.close()
