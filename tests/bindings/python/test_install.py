"""`meson install` puts the sluice package into python3's purelib and
libsluice.so into libdir, and the installed package loads the installed
library: checked by installing the build tree that SLUICE_LIBRARY comes from
into a temporary --destdir and importing sluice from there in a fresh
interpreter (no SLUICE_LIBRARY, no source tree on the path)."""
import json
import os
import shutil
import subprocess

import pytest


def _build_dir():
    lib = os.environ.get('SLUICE_LIBRARY')
    if not lib:
        pytest.skip('SLUICE_LIBRARY is not set, so the build directory is unknown')
    d = os.path.dirname(os.path.realpath(lib))
    while d != os.path.dirname(d):
        if os.path.isdir(os.path.join(d, 'meson-private')):
            return d
        d = os.path.dirname(d)
    pytest.skip(f'SLUICE_LIBRARY={lib} is not inside a meson build directory')


def test_meson_install_into_a_destdir_loads_the_installed_library(tmp_path):
    build = _build_dir()
    meson = shutil.which('meson')
    if meson is None:
        pytest.skip('meson is not installed')
    root = tmp_path / 'root'
    done = subprocess.run([meson, 'install', '-C', build, '--destdir', str(root), '--no-rebuild',
                           '--tags', 'runtime,python-runtime'],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    installed = json.loads(subprocess.run([meson, 'introspect', build, '--installed'],
                                          capture_output=True, text=True, check=True).stdout)
    init = next(dest for src, dest in installed.items()
                if src.replace(os.sep, '/').endswith('bindings/python/sluice/__init__.py'))
    package = str(root) + os.path.dirname(init)
    # Every module of the package is installed (meson.build lists them by hand).
    source = next(os.path.dirname(src) for src in installed
                  if src.replace(os.sep, '/').endswith('bindings/python/sluice/__init__.py'))
    assert sorted(f for f in os.listdir(package) if f.endswith('.py') and f != '_installed.py') \
        == sorted(f for f in os.listdir(source) if f.endswith('.py'))
    purelib = os.path.dirname(package)
    assert os.path.isfile(os.path.join(package, '_installed.py'))
    assert os.path.isfile(os.path.join(package, 'writer.py'))
    libdir = str(root) + os.path.dirname(next(
        dest for src, dest in installed.items() if os.path.basename(src).startswith('libsluice.so')))
    script = (
        'import json, os, sys, tempfile\n'
        'import sluice, sluice._lib as l\n'
        'out = os.path.join(tempfile.mkdtemp(), "ds")\n'
        'with sluice.MDSWriter(out=out, columns={"x": "int"}) as w:\n'
        '    w.write({"x": 7})\n'
        'print(json.dumps({"package": sluice.__file__, "library": l.lib._name,\n'
        '                  "x": int(sluice.LocalDataset(out)[0]["x"])}))\n')
    env = {k: v for k, v in os.environ.items()
           if k not in ('SLUICE_LIBRARY', 'PYTHONPATH', 'LD_LIBRARY_PATH')}
    env['PYTHONPATH'] = purelib
    ran = subprocess.run(['/usr/bin/python3', '-c', script], env=env, cwd=str(tmp_path),
                         capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    got = json.loads(ran.stdout.strip().splitlines()[-1])
    assert got['package'] == os.path.join(package, '__init__.py')
    assert os.path.realpath(got['library']).startswith(os.path.realpath(libdir) + os.sep)
    assert got['x'] == 7
