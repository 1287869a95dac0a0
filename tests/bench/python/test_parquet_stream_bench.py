"""parquet_stream_bench.py's table: medians per cell, the rows in the order
cold, warm, local, and Sluice's rows/s over the faster peer's; a cell no run
measured is '-' and leaves the ratio to the peers that were."""
import argparse

import on_bench_path  # noqa: F401

import parquet_stream_bench as psb


def bench(results):
    b = psb.Bench(argparse.Namespace(), python=None)
    b.results = results
    return b


def test_cells_are_medians_and_the_ratio_is_over_the_faster_peer():
    key = ('text', 's3 cold', False, 0)
    table = bench({
        key + ('sluice',): [(0.5, 3000.0), (0.1, 1000.0), (0.3, 2000.0)],
        key + ('litdata',): [(1.0, 500.0)],
        key + ('hf',): [(2.0, 800.0), (4.0, 800.0)],
    }).table().splitlines()
    assert table[2] == ('| text | s3 cold | no | none | 2,000 | 0.300 | 500 | 1.000 | '
                        '800 | 3.000 | 2.50 |')


def test_rows_run_cold_warm_local_and_a_missing_peer_is_a_dash():
    results = {}
    for source in ('local', 's3 warm', 's3 cold'):
        results[('bin1k', source, True, 2, 'sluice')] = [(0.01, 100.0)]
        results[('bin1k', source, True, 2, 'hf')] = [(0.02, 50.0)]
    lines = bench(results).table().splitlines()[2:]
    assert [line.split(' | ')[1] for line in lines] == ['s3 cold', 's3 warm', 'local']
    assert lines[0] == ('| bin1k | s3 cold | yes | 2 workers | 100 | 0.010 | - | - | '
                        '50 | 0.020 | 2.00 |')
