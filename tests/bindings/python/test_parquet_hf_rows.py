"""Parquet rows through the package are the rows Hugging Face `datasets`
gives for the same files, value for value and type for type:
tests/data/hf_datasets/parquet_rows.json holds, per fixture, a digest of
each row as `datasets` 5.2.0 read it (make_rows.py there), over the
canonical form of canonical.py, which the rows LocalDataset reads must
match. Two differences are by design and absorbed by that form: lists of
numbers are numpy arrays here (Python lists there; compared as the lists
they hold, a datetime64 array as its naive Timestamps), and a timestamp in a named zone is its UTC instant here (the
zone name lives in the file's Arrow schema, which the reader does not
read). A packed list holding a null element is a numpy masked array here
and a list with None there: compared as that list (its .tolist())."""
import importlib.util
import json
import pathlib

import pytest

from sluice import LocalDataset

DATA = pathlib.Path(__file__).resolve().parents[2] / 'data'
_spec = importlib.util.spec_from_file_location('hf_canonical',
                                               DATA / 'hf_datasets' / 'canonical.py')
canonical = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(canonical)
ROWS = json.loads((DATA / 'hf_datasets' / 'parquet_rows.json').read_text())['fixtures']


@pytest.mark.parametrize('name', sorted(ROWS))
def test_rows_are_those_datasets_gives(name):
    want = ROWS[name]
    if isinstance(want, dict):  # datasets cannot read it; the package can
        assert name == 'duckdb_v2_zstd.parquet'
        assert 'delta bit width larger than integer bit width' in want['error']
        assert len(LocalDataset(str(DATA / 'parquet' / name))) == 60
        return
    ds = LocalDataset(str(DATA / 'parquet' / name))
    assert len(ds) == len(want)
    compared = 0
    for i, digest in enumerate(want):
        row = ds[i]
        assert canonical.row_digest(row) == digest, (name, i, row)
        compared += 1
    assert compared == len(want), (name, compared)
