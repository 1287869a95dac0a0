"""The repaired manylinux wheel installed in a fresh venv that sees none of
Debian's packages: run by tests/install/wheel.sh with that venv's python,
from a folder outside the source tree, nothing exported but the paths of
the s3rver fixture (SLUICE_TEST_FIXTURES) and the expected version."""
import os
import subprocess
import sys
import sysconfig

import pytest

import sluice

sys.path.append(os.environ['SLUICE_TEST_FIXTURES'])  # tests/bindings/python
from s3rver_fixture import s3, s3rver  # noqa: E402,F401

SITE = sysconfig.get_path('platlib')
PACKAGE = os.path.join(SITE, 'sluice')
LIBS = os.path.join(SITE, 'sluice.libs')


def test_the_package_and_its_engine_come_from_the_venv():
    assert sys.prefix != sys.base_prefix
    assert not [p for p in sys.path if 'dist-packages' in p], sys.path
    assert os.path.dirname(sluice.__file__) == PACKAGE, sluice.__file__
    assert sluice._lib.lib._name == os.path.join(PACKAGE, 'libsluice.so'), sluice._lib.lib._name
    assert sluice.__version__ == os.environ['SLUICE_WHEEL_VERSION']
    import numpy
    assert numpy.__file__.startswith(SITE), numpy.__file__


def test_the_engine_loads_its_bundled_libraries():
    """Every library in sluice.libs is mapped into the process. The engine
    needs them under the names auditwheel gave them (libzstd-<hash>.so...,
    needed.py), so no copy of the machine's can stand in for one; the
    interpreter may still map its own (Python's _ssl and _bz2 do)."""
    assert sluice.engine.available()
    bundled = sorted(os.listdir(LIBS))
    mapped = {line.split()[-1] for line in open('/proc/self/maps') if '.so' in line}
    assert sorted(os.path.basename(m) for m in mapped if m.startswith(LIBS + '/')) == bundled


def write(out, count=100):
    with sluice.MDSWriter(out=out, columns={'id': 'int', 'text': 'str'}, compression='zstd',
                          hashes=['xxh64'], size_limit=1 << 10) as writer:
        for i in range(count):
            writer.write({'id': i, 'text': f'sample {i}'})


def stream(remote, cache):
    ds = sluice.StreamingDataset(remote=remote, local=str(cache), batch_size=4, shuffle=True,
                                 shuffle_seed=7, validate_hash='xxh64')
    samples = list(ds)
    assert [s['text'] for s in samples] == [f'sample {s["id"]}' for s in samples]
    return [int(s['id']) for s in samples]


def test_writes_verifies_and_streams_a_local_dataset(tmp_path):
    remote = str(tmp_path / 'remote')
    write(remote)
    # The CLI on the venv's PATH: auditwheel's launcher of the bundled binary.
    cli = os.path.join(sys.prefix, 'bin', 'sluice')
    verify = subprocess.run([cli, 'verify', remote], capture_output=True, text=True)
    shards = len([f for f in os.listdir(remote) if f.endswith('.mds.zstd')])
    assert (verify.returncode, verify.stdout) == (
        0, f'ok: 100 samples in {shards} shards, hashes and decoding verified\n'), verify.stderr
    order = stream(remote, tmp_path / 'cache')
    assert sorted(order) == list(range(100)) and order != sorted(order)
    assert stream(remote, tmp_path / 'again') == order


def test_writes_to_and_streams_from_s3(s3, tmp_path):
    local = str(tmp_path / 'local')
    write(local)
    url = f'{s3}/wheel'
    write(url)
    assert stream(url, tmp_path / 'cache') == stream(local, tmp_path / 'local_cache')

