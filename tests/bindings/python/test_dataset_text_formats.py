"""JSONL and CSV/TSV datasets written by mosaicml-streaming read through
StreamingDataset (the engine, the one read path) as Mosaic's values: `str`
columns as text without JSON quotes, `int` as int, `float` as float; for a
folder read in place and for a remote fetched into a cache."""
import json
import os
import shutil

import pytest

import sluice
from conftest import DATA

TEXT_DATASETS = ['json_plain', 'json_crlf_newline', 'json_zstd_hashed', 'csv_plain', 'csv_bz2',
                 'tsv_plain']


def expected_values(name):
    """Sample -> {column: value} as Mosaic reads it (floats by their repr)."""
    out = []
    with open(os.path.join(DATA, name, 'expected.jsonl')) as f:
        for line in f:
            e = json.loads(line)
            if 'fields' in e:  # CSV/TSV
                out.append({c: float(v['value_repr']) if v['encoding'] == 'float' else v['value']
                            for c, v in e['fields'].items()})
            else:  # JSONL: the line's object
                out.append(e['value'])
    return out


def dataset(name, where, tmp_path):
    if where == 'local':
        # A copy: a shard stored only compressed is decompressed into the
        # folder read in place, as Mosaic does.
        folder = str(tmp_path / name)
        shutil.copytree(os.path.join(DATA, name), folder)
        return sluice.StreamingDataset(local=folder, batch_size=4, validate_hash='xxh64'
                                       if name == 'json_zstd_hashed' else None)
    return sluice.StreamingDataset(remote=os.path.join(DATA, name), local=str(tmp_path / 'cache'),
                                   batch_size=4)


def typed(sample):
    return {c: (type(v).__name__, repr(v)) for c, v in sample.items()}


@pytest.mark.parametrize('where', ['local', 'remote'])
@pytest.mark.parametrize('name', TEXT_DATASETS)
def test_text_dataset_reads_as_mosaic_through_the_engine(name, where, tmp_path):
    exp = expected_values(name)
    ds = dataset(name, where, tmp_path)
    assert ds._engine.format == name.split('_')[0]
    assert len(ds) == ds.num_samples == len(exp)
    # Iteration (the batched path) and random access decode alike, with
    # Python's types: an int column gives int, float gives float, str gives
    # the text itself (no JSON quotes).
    assert [typed(s) for s in ds] == [typed(s) for s in exp]
    assert typed(ds[len(exp) - 1]) == typed(exp[-1])
    assert typed(ds[0]) == typed(exp[0])
    if where == 'local' and 'plain' in name:
        # Read in place: nothing is written into an uncompressed folder.
        assert sorted(os.listdir(tmp_path / name)) == sorted(os.listdir(os.path.join(DATA, name)))
    if where == 'remote':
        assert os.path.isfile(tmp_path / 'cache' / 'index.json')


def test_csv_columns_have_python_types():
    ds = sluice.StreamingDataset(local=os.path.join(DATA, 'csv_plain'), batch_size=1)
    assert typed(ds[1]) == {'id': ('int', '1'), 'name': ('str', "'héllo1'"),
                            'score': ('float', '-2.8571428571428568')}
