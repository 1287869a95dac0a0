import argparse
import os
import sys

import on_bench_path  # noqa: F401

import registry_peers
from litdata_shims import import_litdata

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..')


def test_the_pins_are_the_engines_oracles():
    # Mosaic's and LitData's pins are tests/engines/oracle.txt's, included
    # rather than written again.
    assert registry_peers.pins() == {'mosaicml-streaming': '0.13.0', 'litdata': '0.2.76',
                                     'webdataset': '0.2.111', 'braceexpand': '0.1.7'}
    assert [os.path.relpath(p, ROOT) for p in registry_peers.pin_files()] == [
        'bench/python/peers.txt', 'tests/engines/oracle.txt']


def fake_venv(tmp_path, stamp):
    venv = tmp_path / 'venv'
    (venv / 'bin').mkdir(parents=True)
    (venv / 'bin' / 'python').write_text('')
    site = venv / 'lib' / 'python3.11' / 'site-packages'
    site.mkdir(parents=True)
    (venv / 'bench-peers').write_text(stamp)
    return venv, site


def test_a_filled_venv_is_reused_without_pip(tmp_path, monkeypatch):
    want = ''.join(open(p).read() for p in registry_peers.pin_files())
    venv, site = fake_venv(tmp_path, want)
    monkeypatch.setenv('SLUICE_BENCH_PEERS_VENV', str(venv))
    ran = []
    monkeypatch.setattr(registry_peers.subprocess, 'run', lambda *a, **k: ran.append(a))
    assert registry_peers.site_packages() == str(site)
    assert ran == []


def test_a_changed_pin_file_installs_again_with_no_deps(tmp_path, monkeypatch):
    venv, site = fake_venv(tmp_path, 'mosaicml-streaming==0.12.0\n')
    monkeypatch.setenv('SLUICE_BENCH_PEERS_VENV', str(venv))
    ran = []
    monkeypatch.setattr(registry_peers.subprocess, 'run', lambda cmd, **k: ran.append(cmd))
    assert registry_peers.site_packages() == str(site)
    assert ran == [[str(venv / 'bin' / 'python'), '-m', 'pip', '-q',
                    '--disable-pip-version-check', 'install', '--no-deps', '-r',
                    registry_peers.PINS]]
    assert (venv / 'bench-peers').read_text() == ''.join(
        open(p).read() for p in registry_peers.pin_files())


def parse(argv):
    ap = argparse.ArgumentParser()
    registry_peers.add_arguments(ap)
    return ap.parse_args(argv)


def test_no_registry_leaves_out_the_peers_not_given(tmp_path, capsys):
    args = parse(['--no-registry', '--litdata-src', str(tmp_path)])
    registry_peers.resolve(args)
    assert (args.mosaic_src, args.litdata_src) == (None, str(tmp_path))
    assert capsys.readouterr().out == (f'mosaicml-streaming: left out (--no-registry)\n'
                                       f'LitData: {tmp_path}\n')


def test_the_registry_venv_serves_the_peers_not_given(tmp_path, monkeypatch):
    monkeypatch.setattr(registry_peers, 'site_packages', lambda: '/venv/site-packages')
    args = parse(['--mosaic-src', str(tmp_path)])
    registry_peers.resolve(args)
    assert (args.mosaic_src, args.litdata_src) == (str(tmp_path), '/venv/site-packages')


def test_import_litdata_takes_a_site_packages_folder_or_a_checkout(tmp_path, monkeypatch):
    for folder in (tmp_path / 'site-packages', tmp_path / 'checkout' / 'src'):
        (folder / 'litdata').mkdir(parents=True)
        (folder / 'litdata' / '__init__.py').write_text(f'WHERE = {str(folder)!r}\n')
    for given, found in ((tmp_path / 'site-packages', tmp_path / 'site-packages'),
                         (tmp_path / 'checkout', tmp_path / 'checkout' / 'src')):
        monkeypatch.setattr(sys, 'path', list(sys.path))
        monkeypatch.delitem(sys.modules, 'litdata', raising=False)
        assert import_litdata(str(given)).WHERE == str(found)
