"""Per-DataLoader-worker epoch counters that outlive the workers: which
epoch each worker of this process's dataset reads next."""
import mmap
import struct

__all__ = ['MAX_WORKERS', 'SharedCounters', 'in_dataloader_worker']

MAX_WORKERS = 512


def in_dataloader_worker():
    try:
        from torch.utils.data import get_worker_info
    except ImportError:
        return False
    return get_worker_info() is not None


class SharedCounters:
    """Per-worker epoch counters in anonymous shared memory, so the counts
    survive DataLoader workers forked and exited between epochs."""

    def __init__(self):
        self._mem = mmap.mmap(-1, 8 * MAX_WORKERS)

    def get(self, i):
        return struct.unpack_from('<q', self._mem, 8 * i)[0]

    def set(self, i, v):
        struct.pack_into('<q', self._mem, 8 * i, v)

    def __getstate__(self):  # spawned workers get a copy (no sharing possible)
        return bytes(self._mem)

    def __setstate__(self, state):
        self._mem = mmap.mmap(-1, len(state))
        self._mem[:] = state
