"""mosaicml-streaming's shared-memory names (`streaming.base.constant`,
`streaming.base.shared.prefix`), so that Sluice can clean what a crashed
Mosaic job left in /dev/shm. Sluice itself keeps no shared memory of that
kind (its node state lives in the cache folder)."""
from multiprocessing import shared_memory

__all__ = ['SHM_TO_CLEAN', 'shm_name', 'clean_leaked_mosaic_shm']

LOCALS = 'locals'
BARRIER = 'barrier'
NEXT_EPOCH = 'next_epoch'
CACHE_USAGE = 'cache_usage'
SHARD_STATES = 'shard_states'
SHARD_ACCESS_TIMES = 'shard_access_times'
RESUME = 'resume'
EPOCH_SHAPE = 'epoch_shape'
EPOCH_DATA = 'epoch_data'
SHM_TO_CLEAN = [LOCALS, BARRIER, NEXT_EPOCH, CACHE_USAGE, SHARD_STATES, SHARD_ACCESS_TIMES,
                RESUME, EPOCH_SHAPE, EPOCH_DATA]
BARRIER_FILELOCK = 'barrier_filelock'
CACHE_FILELOCK = 'cache_filelock'
TICK = 0.007
DEFAULT_TIMEOUT = 60.0


def shm_name(prefix_int, name):
    """The shared memory name Mosaic's datasets with prefix `prefix_int` use."""
    return f'{prefix_int:06}_{name}'


_get_path = shm_name  # Mosaic's name for it


def clean_leaked_mosaic_shm():
    """Unlinks the segments of Mosaic's datasets, prefix by prefix from 0,
    until a prefix has none (Mosaic's clean_stale_shared_memory). Returns the
    names removed."""
    removed = []
    for prefix_int in range(1000000):
        found = False
        for name in SHM_TO_CLEAN:
            path = shm_name(prefix_int, name)
            try:
                segment = shared_memory.SharedMemory(path, create=False)
            except (FileNotFoundError, PermissionError):
                continue
            segment.close()
            segment.unlink()
            removed.append(path)
            found = True
        if not found:
            return removed
    return removed
