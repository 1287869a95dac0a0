"""Keeps glibc's heap from being trimmed and faulted in again per batch.

Under a torch DataLoader with workers, the main process unpickles every batch
into fresh heap memory: for 16 samples of 256 KiB, a 4 MiB message and 4 MiB
of bytes objects, freed when the batch is dropped. glibc's dynamic thresholds
settle at about a 4 MiB mmap threshold and twice that as the trim threshold,
the size of what one batch frees: depending on what else sits on the heap, each
batch either reuses the memory or gives 8 MiB back to the kernel and faults it
in again (measured: 20k against 300k-480k page faults in the main process
over 8,000 samples, 2,500 against 3,500 samples/s, from run to run).

tune() sets the values glibc's own heuristic can reach at most (a 32 MiB mmap
threshold, 64 MiB trim threshold), which keep up to 64 MiB of freed memory in
the process. It is process-wide, so it is applied once, only on glibc, never
over thresholds the user chose (MALLOC_*_ or GLIBC_TUNABLES glibc.malloc.*),
and not at all with SLUICE_MALLOC_TUNING=0.
"""
import ctypes
import os
import threading

_M_TRIM_THRESHOLD = -1  # glibc's malloc.h
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 << 20  # glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64-bit
TRIM_THRESHOLD = 2 * MMAP_THRESHOLD  # the ratio the dynamic heuristic keeps

_USER_SETTINGS = ('MALLOC_TRIM_THRESHOLD_', 'MALLOC_MMAP_THRESHOLD_', 'MALLOC_TOP_PAD_',
                  'MALLOC_MMAP_MAX_')
_lock = threading.Lock()
_done = False


def _user_chose(environ):
    if any(name in environ for name in _USER_SETTINGS):
        return True
    return 'glibc.malloc.' in environ.get('GLIBC_TUNABLES', '')


def tune(environ=os.environ):
    """Raises glibc's mmap and trim thresholds once per process (see the
    module's docstring). Returns True if this call set them. Thread-safe."""
    global _done
    with _lock:
        if _done:
            return False
        _done = True
        if environ.get('SLUICE_MALLOC_TUNING', '1') == '0' or _user_chose(environ):
            return False
        try:
            libc = ctypes.CDLL(None)
            libc.gnu_get_libc_version  # only glibc has both
            mallopt = libc.mallopt
        except (OSError, AttributeError):
            return False
        mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
        return bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)) and \
            bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD))
