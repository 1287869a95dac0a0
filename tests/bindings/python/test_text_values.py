"""Values of the split text formats that only Python has, written and read
as mosaicml-streaming does: CSV/TSV `int` values beyond int64 (its writers
store str(int), its readers int(text)), and bools in a JSONL `int` column
(its JSONWriter takes them, a bool being an int; json.dumps writes
true/false and json.loads gives the bool back)."""
import pytest

import sluice

# 0 .. int64's edges, just past them, 2**70, and 4300 digits (Python's
# default limit on int <-> str conversions).
BIG = [0, -1, 2**63 - 1, 2**63, -(2**63) - 1, 2**70, -(10**4299) + 1]


def open_dataset(folder, where, tmp_path):
    if where == 'local':
        return sluice.StreamingDataset(local=str(folder), batch_size=1)
    return sluice.StreamingDataset(remote=str(folder), local=str(tmp_path / 'cache'),
                                   batch_size=1)


@pytest.mark.parametrize('where', ['local', 'remote'])
@pytest.mark.parametrize('cls,fmt,sep', [(sluice.CSVWriter, 'csv', ','),
                                         (sluice.TSVWriter, 'tsv', '\t')])
def test_xsv_ints_beyond_int64_round_trip(tmp_path, cls, fmt, sep, where):
    out = tmp_path / 'ds'
    with cls(out=str(out), columns={'n': 'int', 's': 'str'}) as w:
        for i, v in enumerate(BIG):
            w.write({'n': v, 's': f's{i}'})
    # Mosaic's bytes: the header, then str(value) of each column.
    want = f'n{sep}s\n' + ''.join(f'{v}{sep}s{i}\n' for i, v in enumerate(BIG))
    assert (out / f'shard.00000.{fmt}').read_text() == want
    ds = open_dataset(out, where, tmp_path)
    got = list(ds)
    assert [(type(s['n']), s['n'], s['s']) for s in got] == \
        [(int, v, f's{i}') for i, v in enumerate(BIG)]
    assert ds[6]['n'] == -(10**4299) + 1
    assert ds[3] == {'n': 9223372036854775808, 's': 's3'}


@pytest.mark.parametrize('where', ['local', 'remote'])
def test_json_bool_and_big_int_in_int_columns(tmp_path, where):
    out = tmp_path / 'ds'
    samples = [{'flag': True, 'n': 2**70}, {'flag': False, 'n': -(2**64)}, {'flag': 3, 'n': 0}]
    with sluice.JSONWriter(out=str(out), columns={'flag': 'int', 'n': 'int'}) as w:
        for s in samples:
            w.write(s)
    # What Mosaic's JSONWriter writes: json.dumps(sample, sort_keys=True).
    assert (out / 'shard.00000.json').read_bytes() == (
        b'{"flag": true, "n": 1180591620717411303424}\n'
        b'{"flag": false, "n": -18446744073709551616}\n'
        b'{"flag": 3, "n": 0}\n')
    ds = open_dataset(out, where, tmp_path)
    got = list(ds)
    assert got == samples
    assert [type(s['flag']) for s in got] == [bool, bool, int]
    assert ds[0]['flag'] is True and ds[1]['flag'] is False


def test_csv_int_column_refuses_a_bool(tmp_path):
    # Mosaic's CSVWriter would store 'True', which its int() cannot read
    # back: Sluice refuses it when writing.
    with sluice.CSVWriter(out=str(tmp_path / 'ds'), columns={'n': 'int'}) as w:
        with pytest.raises(TypeError, match=r"^column 'n' \(int\): got bool$"):
            w.write({'n': True})
        w.write({'n': 1})
    assert (tmp_path / 'ds' / 'shard.00000.csv').read_text() == 'n\n1\n'
