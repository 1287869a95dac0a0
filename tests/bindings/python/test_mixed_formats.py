"""One dataset whose streams have different shard formats (MDS, JSONL, CSV),
as mosaicml-streaming reads them: each sample decodes by its own stream's
format and encodings, for folders read in place and remotes fetched into a
cache."""
import json
import os

import numpy as np
import pytest

import sluice
from conftest import DATA


def compat_values(name):
    """Mosaic's values of a compat JSONL or CSV dataset, in sample order."""
    out = []
    with open(os.path.join(DATA, name, 'expected.jsonl')) as f:
        for line in f:
            e = json.loads(line)
            if 'fields' in e:  # CSV
                out.append({c: float(v['value_repr']) if v['encoding'] == 'float' else v['value']
                            for c, v in e['fields'].items()})
            else:  # JSONL
                out.append(e['value'])
    return out


def stream(name_or_path, where, tmp_path, i):
    path = name_or_path if os.path.isabs(name_or_path) else os.path.join(DATA, name_or_path)
    if where == 'local':
        return sluice.Stream(local=path)
    return sluice.Stream(remote=path, local=str(tmp_path / f'cache{i}'))


def typed(samples):
    return [{c: (type(v).__name__, repr(v)) for c, v in s.items()} for s in samples]


@pytest.mark.parametrize('where', ['local', 'remote'])
def test_json_and_csv_streams_read_as_mosaic(tmp_path, where):
    ds = sluice.StreamingDataset(streams=[stream('json_plain', where, tmp_path, 0),
                                          stream('csv_plain', where, tmp_path, 1)], batch_size=4)
    want = compat_values('json_plain') + compat_values('csv_plain')
    assert ds.num_samples == len(want) == 300
    # No shuffle, one rank: the samples in order, each with its stream's
    # decoding (JSONL str without its quotes, CSV int and float from text).
    assert typed(ds) == typed(want)
    assert typed([ds[1], ds[151]]) == typed([want[1], want[151]])
    assert ds[151] == {'id': 1, 'name': 'h\u00e9llo1', 'score': -2.8571428571428568}


@pytest.mark.parametrize('where', ['local', 'remote'])
def test_mds_and_jsonl_streams_with_different_encodings(tmp_path, where):
    # MDS stores the float column as float64, JSONL as float: the column's
    # encoding differs between the streams too.
    mds = str(tmp_path / 'mds')
    with sluice.MDSWriter(out=mds, columns={'id': 'int', 'name': 'str', 'score': 'float64'}) as w:
        for i in range(3):
            w.write({'id': -i, 'name': f'm{i}', 'score': i / 4})
    ds = sluice.StreamingDataset(streams=[stream(mds, where, tmp_path, 0),
                                          stream('json_plain', where, tmp_path, 1)],
                                 batch_size=1)
    got = list(ds)
    assert len(got) == 153
    assert typed(got[:3]) == typed([{'id': -i, 'name': f'm{i}', 'score': np.float64(i / 4)}
                                    for i in range(3)])
    assert typed(got[3:]) == typed(compat_values('json_plain'))
    assert typed([ds[2], ds[4]]) == typed([got[2], got[4]])
    assert ds._engine.format == 'mixed'
    assert ds._engine.column_encodings == ['int', 'str', 'mixed']

