"""parquet_stream_bench.py's table: medians per cell (rows/s, MB/s over the
median seconds, first row), the rows in the order s3 cold, s3 warm, proxy
cold, proxy warm, local, Sluice's rows/s over the fastest peer's and over
its own MDS path's; a library no run measured has no columns, a cell no run
measured is '-' and leaves the ratios to what was; resume times in a table
of their own; pyarrow and DuckDB only where the bench can run them."""
import argparse

import on_bench_path  # noqa: F401

import parquet_stream_bench as psb


def bench(results, resumes=None):
    b = psb.Bench(argparse.Namespace(), python=None)
    b.results = results
    b.resumes = resumes or {}
    b.parquet_bytes = lambda table: 1e6  # 1 MB a table
    return b


def test_cells_are_medians_and_the_ratios_are_over_the_faster_peer_and_mds():
    key = ('text', 's3 cold', False, 0)
    table = bench({
        key + ('sluice',): [(0.5, 3000.0, 2.0), (0.1, 1000.0, 6.0), (0.3, 2000.0, 3.0)],
        key + ('sluice-mds',): [(0.2, 4000.0, 1.5)],
        key + ('litdata',): [(1.0, 500.0, 12.0)],
        key + ('hf',): [(2.0, 800.0, 7.5), (4.0, 800.0, 7.5)],
    }).table().splitlines()
    assert table[2] == ('| text | s3 cold | no | none | 2,000 | 0.3 | 0.300 | 4,000 | 0.7 | 0.200 | '
                        '500 | 0.1 | 1.000 | 800 | 0.1 | 3.000 | 2.50 | 50% |')


def test_rows_run_cold_warm_proxy_local_and_a_missing_cell_is_a_dash():
    results = {}
    for source in ('local', 'proxy warm', 's3 warm', 'proxy cold', 's3 cold'):
        results[('bin1k', source, True, 2, 'sluice')] = [(0.01, 100.0, 1.0)]
        results[('bin1k', source, True, 2, 'hf')] = [(0.02, 50.0, 2.0)]
    results[('bin1k', 'local', True, 2, 'duckdb')] = [(0.03, 200.0, 0.5)]
    lines = bench(results).table().splitlines()
    assert lines[0].startswith('| table | source | shuffle | loader | sluice rows/s | sluice MB/s '
                               '| sluice first (s) | duckdb rows/s |')
    assert [line.split(' | ')[1] for line in lines[2:]] == [
        's3 cold', 's3 warm', 'proxy cold', 'proxy warm', 'local']
    assert lines[2] == ('| bin1k | s3 cold | yes | 2 workers | 100 | 1.0 | 0.010 | - | - | - | '
                        '50 | 0.5 | 0.020 | 2.00 | - |')
    assert lines[-1] == ('| bin1k | local | yes | 2 workers | 100 | 1.0 | 0.010 | 200 | 2.0 | '
                         '0.030 | 50 | 0.5 | 0.020 | 0.50 | - |')


def test_pyarrow_and_duckdb_are_measured_in_order_in_one_process_duckdb_from_local_files():
    assert psb.supports('pyarrow', 'proxy cold', False, 0)
    assert not psb.supports('pyarrow', 'local', True, 0)
    assert not psb.supports('pyarrow', 'local', False, 2)
    assert psb.supports('duckdb', 'local', False, 0)
    assert not psb.supports('duckdb', 's3 cold', False, 0)
    assert psb.supports('hf', 'proxy cold', True, 2)


def test_resume_times_are_medians_per_table_and_shuffle():
    key = ('bin256k', 's3 cold', False, 0, 'sluice')
    lines = bench({key: [(0.1, 10.0, 1.0)]}, {
        ('bin256k', False, 'sluice'): [0.3, 0.2, 0.25],
        ('bin256k', False, 'sluice-mds'): [0.1],
    }).table().splitlines()
    assert lines[-4:] == ['', '| table | shuffle | Sluice Parquet resume (s) | Sluice MDS resume (s) |',
                          '| --- | --- | ---: | ---: |', '| bin256k | no | 0.250 | 0.100 |']


def test_a_rows_digest_changes_with_any_value_its_type_or_the_order():
    import hashlib

    import numpy as np

    def digest(*rows):
        d = hashlib.blake2b(digest_size=16)
        for row in rows:
            psb.add_row(d, row)
        return d.hexdigest()

    a = {'text': 'ab', 'input_ids': np.array([1, 2], np.int32)}
    b = {'text': 'ab', 'input_ids': np.array([1, 3], np.int32)}
    assert digest(a, b) == digest(dict(a), dict(b))
    assert digest(a, b) != digest(b, a)
    assert digest(a) != digest(b)
    assert digest({'x': 'ab'}) != digest({'x': b'ab'})
    assert digest({'x': np.array([1], np.int32)}) != digest({'x': np.array([1], np.int64)})
    assert digest({'x': None}) != digest({'x': 'None'})
    # A value's bytes do not run into the next's.
    assert digest({'x': 'a', 'y': 'bc'}) != digest({'x': 'ab', 'y': 'c'})
