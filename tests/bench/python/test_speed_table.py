import on_bench_path  # noqa: F401
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
                                  '2.00 s (2.00 s-2.00 s) | 1.00 s (1.00 s-1.00 s) | 3.00x | '
                                  '0.50x | - |')


def test_rate_row_ratios_favour_the_higher_figure(capsys):
    t = speed_table.Table()
    row = 'DataLoader, B: samples/s'
    for column, value in (('mosaic', 100.0), ('sluice', 300.0), ('sluice', 200.0),
                          ('sluice', 250.0), ('reference', 500.0)):
        t.add(row, column, value, '/s', 1_000_000)
    assert printed(capsys, t) == (f'| {row} | 100/s (100/s-100/s) | - | 250/s (200/s-300/s) | '
                                  '500/s (500/s-500/s) | 2.50x | 0.50x | 250 |')
