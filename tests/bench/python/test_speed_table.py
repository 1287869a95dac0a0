import argparse
import os
import subprocess
import sys

import pytest

import on_bench_path  # noqa: F401
import registry_peers  # noqa: E402
import speed_table  # noqa: E402


def printed(capsys, table):
    table.print(runs=3)
    return capsys.readouterr().out.splitlines()[-1]


def test_cpu_per_gb_row_ratios_favour_the_lower_figure(capsys):
    t = speed_table.Table()
    row = 'cold S3, B, in order: CPU s per GB downloaded'
    for column, value in (('mosaic', 6.0), ('litdata', 9.0), ('sluice', 2.0),
                          ('reference', 1.0)):
        t.add(row, column, value, 's/GB')
    assert printed(capsys, t) == (f'| {row} | 6.00 s (6.00 s-6.00 s) | 9.00 s (9.00 s-9.00 s) | '
                                  '- | 2.00 s (2.00 s-2.00 s) | 1.00 s (1.00 s-1.00 s) | 3.00x | '
                                  '0.50x | - |')


def test_rate_row_ratios_favour_the_higher_figure(capsys):
    t = speed_table.Table()
    row = 'DataLoader, B: samples/s'
    for column, value in (('mosaic', 100.0), ('sluice', 300.0), ('sluice', 200.0),
                          ('sluice', 250.0), ('reference', 500.0)):
        t.add(row, column, value, '/s', 1_000_000)
    assert printed(capsys, t) == (f'| {row} | 100/s (100/s-100/s) | - | - | 250/s (200/s-300/s) | '
                                  '500/s (500/s-500/s) | 2.50x | 0.50x | 250 |')


def test_a_cold_epoch_reading_another_count_is_an_error():
    bench = speed_table.Bench(argparse.Namespace(work=None), ['B'])
    with pytest.raises(RuntimeError, match=r'^cold HTTP, B, epoch, sluice: read 7999 samples, '
                       r'expected 8000$'):
        bench.check_epoch('cold HTTP, B, epoch', 'sluice', 100, 100, 7999, 'B')


def test_a_single_pass_must_read_every_sample_and_keep_no_shard():
    bench = speed_table.Bench(argparse.Namespace(work=None), ['B'])
    bench.check_single_pass('cold HTTP, B, epoch', 9657, 2_097_295_897, 8000, 'B')
    with pytest.raises(RuntimeError, match=r'^cold HTTP, B, epoch, sluice: a single pass left '
                       r'2097295897 B in its cache folder$'):
        bench.check_single_pass('cold HTTP, B, epoch', 2_097_295_897, 2_097_295_897, 8000, 'B')
    with pytest.raises(RuntimeError, match=r'read 7999 samples, expected 8000$'):
        bench.check_single_pass('cold HTTP, B, epoch', 0, 2_097_295_897, 7999, 'B')


def test_each_sluice_keys_option_is_a_variant_named_in_its_rows():
    args = argparse.Namespace(work=None, sluice_keys=['{"serve_in_flight": false}',
                                           '{"serve_in_flight": true, "fetch_concurrency": 8}'])
    assert speed_table.Bench(args, []).variants() == [
        (', serve_in_flight=false', (('serve_in_flight', False),)),
        (', fetch_concurrency=8, serve_in_flight=true',
         (('fetch_concurrency', 8), ('serve_in_flight', True)))]
    args.sluice_keys = ['{"serve_in_flight": true}']
    assert speed_table.Bench(args, []).variants() == [('', (('serve_in_flight', True),))]
    args.sluice_keys = []
    assert speed_table.Bench(args, []).variants() == [('', ())]


def test_the_http_rows_of_a_tiny_run_have_webdataset_and_each_sluice_variant(tmp_path):
    # A 50 x 1 KiB, B 1 x 256 KiB. Every child checks what it read (Sluice's
    # and WebDataset's the count, WebDataset's also each id once and the
    # first sample's payload; Sluice's cache the dataset's bytes): a wrong
    # read fails the run.
    try:
        registry_peers.site_packages()
    except subprocess.CalledProcessError as e:
        pytest.skip(f'the registry peers could not be installed: {e}')
    out = subprocess.run(
        [sys.executable, speed_table.__file__, '--work', str(tmp_path), '--scale', '0.0001',
         '--runs', '1', '--rows', 'http', '--sluice-keys', '{"serve_in_flight": false}',
         '--sluice-keys', '{"serve_in_flight": true}'],
        capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    rows = [line.split(' | ') for line in out.stdout.splitlines() if line.startswith('| cold')]
    names = [f'cold HTTP (nginx), {w}, {order}, serve_in_flight={on}: {what}'
             for w in ('A (50 x 1 KiB)', 'B (1 x 256 KiB)') for order in ('in order', 'shuffled')
             for on in ('false', 'true')
             for what in ('first sample, s', 'epoch, s', 'CPU s per GB downloaded')]
    assert [r[0][2:] for r in rows] == names
    for r in rows:
        # Mosaic and LitData: no plain-HTTP remote; WebDataset, Sluice, curl: a cell
        assert r[1:3] == ['-', '-']
        assert all(c != '-' for c in r[3:6]), r
    assert sorted(os.listdir(tmp_path / 'data' / 'B-1-wds')) == ['shard-000000.tar']
