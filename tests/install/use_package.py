"""The sluice package as a pip user has it: run by tests/install/run.sh with
the venv activated, from a folder outside the source tree, SLUICE_LIBRARY
and PYTHONPATH unset. Writes a small MDS dataset, streams it through the
engine's cache and resumes mid-epoch. Arguments: meson.build's version, the
package's modules (comma-separated names) the wheel must hold, and the wheel
`pip wheel .` built."""
import importlib.metadata
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile

import sluice

version = sys.argv[1]
package = os.path.join(sysconfig.get_path('purelib'), 'sluice')

# The package and its own library, with nothing exported.
assert os.path.dirname(sluice.__file__) == package, sluice.__file__
assert sluice._lib.lib._name == os.path.join(package, 'libsluice.so'), sluice._lib.lib._name
assert sluice.__version__ == importlib.metadata.version('sluice') == version, (
    sluice.__version__, importlib.metadata.version('sluice'), version)

# The wheel carries the package, its library and the CLI, nothing else.
files = sorted(str(f) for f in importlib.metadata.files('sluice')
               if '__pycache__' not in str(f) and '.dist-info/' not in str(f))
modules = sys.argv[2].split(',')  # the source folder's modules (run.sh)
assert files == sorted(['../../../bin/sluice', 'sluice/libsluice.so'] +
                       [f'sluice/{m}.py' for m in modules]), files
# The wheel file itself: the same, plus its metadata; no tests, benchmarks,
# headers or sources. (A platform wheel, so meson-python files the purelib
# package under .data/purelib.)
with zipfile.ZipFile(sys.argv[3]) as wheel_zip:
    names = sorted(wheel_zip.namelist())
purelib = f'sluice-{version}.data/purelib/sluice'
assert names == sorted([f'sluice-{version}.data/scripts/sluice', f'{purelib}/libsluice.so'] +
                       [f'{purelib}/{m}.py' for m in modules] +
                       [f'sluice-{version}.dist-info/{f}' for f in ('METADATA', 'RECORD', 'WHEEL')]
                       ), names
# Not a CPython extension (ctypes): any Python 3 on this platform.
wheel = importlib.metadata.distribution('sluice').read_text('WHEEL')
tags = [line for line in wheel.splitlines() if line.startswith('Tag: ')]
assert tags == [f'Tag: py3-none-{sysconfig.get_platform().replace("-", "_")}'], tags

work = tempfile.mkdtemp()
remote = os.path.join(work, 'remote')
with sluice.MDSWriter(out=remote, columns={'id': 'int', 'text': 'str'}, compression='zstd',
                      hashes=['xxh64'], size_limit=1 << 10) as writer:
    for i in range(100):
        writer.write({'id': i, 'text': f'sample {i}'})

# The CLI on the environment's PATH.
assert shutil.which('sluice') == os.path.join(sys.prefix, 'bin', 'sluice'), shutil.which('sluice')
verify = subprocess.run(['sluice', 'verify', remote], capture_output=True, text=True)
assert verify.returncode == 0, verify.stdout + verify.stderr
num_shards = len([f for f in os.listdir(remote) if f.endswith('.mds.zstd')])
assert num_shards > 1, num_shards
assert verify.stdout == (f'ok: 100 samples in {num_shards} shards, hashes and decoding '
                         'verified\n'), verify.stdout


def dataset(cache):
    """The remote folder streamed through the engine into its own cache."""
    ds = sluice.StreamingDataset(remote=remote, local=os.path.join(work, cache), batch_size=4,
                                 shuffle=True, shuffle_seed=7, validate_hash='xxh64')
    assert ds._engine is not None
    return ds


whole = []
for sample in dataset('whole'):
    assert sample['text'] == f'sample {sample["id"]}', sample
    whole.append(sample['id'])
assert sorted(whole) == list(range(100)) and whole != sorted(whole), whole

first = dataset('first')
seen = []
for sample in first:
    seen.append(sample['id'])
    if len(seen) == 40:
        break
state = first.state_dict(40, True)
# Mosaic's keys first, then Sluice's order record.
assert {k: state[k] for k in list(state)[:5]} == {
    'epoch': 0, 'sample_in_epoch': 40, 'num_canonical_nodes': 1, 'shuffle_seed': 7,
    'initial_physical_nodes': 1}, state
assert list(state)[5:] == ['sluice_order'], state
resumed = dataset('resumed')
resumed.load_state_dict(state)
assert seen + [sample['id'] for sample in resumed] == whole
print('ok: sluice', sluice.__version__, 'from', package)
