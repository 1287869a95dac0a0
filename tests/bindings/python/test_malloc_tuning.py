"""sluice.malloc_tuning: constructing a StreamingDataset raises glibc's mmap
threshold (so a batch-sized allocation comes from the heap, not a fresh
mmap), unless the user chose thresholds or opted out. Each case runs in a
fresh process: the setting is process-wide."""
import os
import subprocess
import sys

import pytest

import sluice

# Allocates 20 MiB (above any threshold glibc's dynamic heuristic reaches
# without a larger free) after constructing a dataset, and prints whether it
# was mmapped: mallinfo2().hblks counts mmapped chunks.
PROBE = r'''
import ctypes, sys
import sluice
class MallInfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ('arena', 'ordblks', 'smblks', 'hblks', 'hblkhd',
                'usmblks', 'fsmblks', 'uordblks', 'fordblks', 'keepcost')]
libc = ctypes.CDLL(None)
libc.mallinfo2.restype = MallInfo2
libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
sluice.StreamingDataset(local=sys.argv[1], batch_size=16)
before = libc.mallinfo2().hblks
p = libc.malloc(20 << 20)
print('mmapped' if libc.mallinfo2().hblks == before + 1 else 'heap')
libc.free(p)
'''


@pytest.fixture(scope='module')
def folder(tmp_path_factory):
    out = str(tmp_path_factory.mktemp('tuning') / 'ds')
    with sluice.MDSWriter(out=out, columns={'x': 'int'}) as w:
        w.write({'x': 1})
    return out


def probe(folder, **env):
    environ = {k: v for k, v in os.environ.items()
               if not k.startswith('MALLOC_') and k not in ('GLIBC_TUNABLES', 'SLUICE_MALLOC_TUNING')}
    environ.update(env)
    done = subprocess.run([sys.executable, '-c', PROBE, folder], env=environ,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_dataset_keeps_batch_sized_allocations_on_the_heap(folder):
    assert probe(folder) == 'heap'


def test_opting_out_leaves_glibc_as_it_was(folder):
    assert probe(folder, SLUICE_MALLOC_TUNING='0') == 'mmapped'


@pytest.mark.parametrize('env', [{'MALLOC_MMAP_THRESHOLD_': '131072'},
                                 {'GLIBC_TUNABLES': 'glibc.malloc.mmap_threshold=131072'}])
def test_thresholds_the_user_chose_are_kept(folder, env):
    assert probe(folder, **env) == 'mmapped'


def test_tune_applies_once_per_process():
    done = subprocess.run([sys.executable, '-c',
                           'import os; from sluice import malloc_tuning as m; '
                           'print(m.tune({}), m.tune({}))'],
                          capture_output=True, text=True, env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ['True', 'False']
