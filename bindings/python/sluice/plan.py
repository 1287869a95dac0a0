"""A Python handle on sluice_plan_*: Mosaic's epoch plan from a config dict."""
import ctypes
import json

import numpy as np

from sluice import _lib

__all__ = ['Plan', 'default_num_canonical_nodes', 'plan_steps', 'recorded_mixture_rule']


def default_num_canonical_nodes(shuffle_algo, physical_nodes):
    """Mosaic's default num_canonical_nodes, as the engine's planner takes it."""
    out = ctypes.c_int64()
    _lib.check(_lib.lib.sluice_default_num_canonical_nodes(shuffle_algo.encode(), physical_nodes,
                                                           ctypes.byref(out)))
    return out.value


def recorded_mixture_rule(sampling):
    """The rule a resume from a state draws its schedule by, as the engine
    reads the state's "sluice_order" parts.sampling dict
    (sluice_recorded_mixture_rule): 'tijdeman' or 'deficit', None without a
    schedule."""
    out = ctypes.c_char_p()
    _lib.check(_lib.lib.sluice_recorded_mixture_rule(json.dumps(sampling).encode(), ctypes.byref(out)))
    return None if out.value is None else out.value.decode()


def plan_steps(config, first, end, rank=None):
    """The samples of global steps first..end-1 of the epoch `config` plans
    (Plan's dict, with the DataLoader's workers as world.workers_per_rank),
    as the engine deals them (sluice_plan_steps): an int64 array of rows
    (step, global rank, sample id), step by step, rank by rank; of global
    rank `rank` only, or every rank (None). ValueError for a first step at
    or past the last, saying how many the ranks take."""
    rows = ctypes.POINTER(ctypes.c_int64)()
    n = ctypes.c_uint64()
    _lib.check(_lib.lib.sluice_plan_steps(json.dumps(config).encode(),
                                          -1 if rank is None else int(rank), int(first), int(end),
                                          ctypes.byref(rows), ctypes.byref(n)))
    try:
        return np.ctypeslib.as_array(rows, shape=(n.value, 3)).copy() if n.value else \
            np.zeros((0, 3), dtype=np.int64)
    finally:
        _lib.lib.sluice_free(rows)

class Plan:
    """One epoch's plan. `config` is shaped like the `config` object of
    Mosaic's order vectors (streams/shard_sizes, world, batch_size, shuffle...)."""

    def __init__(self, config):
        h = ctypes.c_void_p()
        _lib.check(_lib.lib.sluice_plan_create(json.dumps(config).encode(), ctypes.byref(h)))
        self._ptr = h
        shape = (ctypes.c_uint64 * 5)()
        _lib.lib.sluice_plan_shape(h, shape)
        self.shape = tuple(int(x) for x in shape)

    def worker_ids(self, node, rank, worker):
        """The global sample ids this worker reads, in order, padding removed (a copy)."""
        ids = ctypes.POINTER(ctypes.c_int64)()
        n = ctypes.c_uint64()
        _lib.check(_lib.lib.sluice_plan_worker_ids(self._ptr, node, rank, worker,
                                                   ctypes.byref(ids), ctypes.byref(n)))
        if n.value == 0:
            return np.zeros(0, dtype=np.int64)
        return np.ctypeslib.as_array(ids, shape=(n.value,)).copy()

    def to_json(self):
        out = ctypes.c_void_p()
        _lib.check(_lib.lib.sluice_plan_to_json(self._ptr, ctypes.byref(out)))
        try:
            return json.loads(ctypes.string_at(out.value).decode())
        finally:
            _lib.lib.sluice_free(out)

    def __del__(self):
        if getattr(self, '_ptr', None):
            _lib.lib.sluice_plan_free(self._ptr)
            self._ptr = None
