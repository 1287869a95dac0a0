"""Hugging Face datasets (pinned) to MDS and back, with no helper of
Sluice's: what a datasets user writes.
To MDS: iterate the Dataset (rows as dicts of Python values) into
sluice.MDSWriter with columns chosen for its Features; None fits only a
'json' (or 'pkl') column, as in Mosaic's MDS, so a nullable column is
'json'; the rows' lists are Python lists, which an 'ndarray:DTYPE' column
does not take as they are (its values are numpy arrays of that dtype, never
empty, as in Mosaic), so a list column is 'json' too. Or, for a Dataset
without nulls in its integer columns nor empty lists,
sluice.dataframe_to_mds(dataset.to_pandas(), ...) infers the columns, a
list<int32> column as 'ndarray:int32' (pandas turns an integer column with
nulls into floats, so that way is not exact for one).
Back: datasets.Dataset.from_generator over a sluice.StreamingDataset, with
the Features given, yields the same rows. Its generator is a module-level
function given gen_kwargs: datasets fingerprints the generator with dill,
which pickles a module outside the interpreter's prefix by value, so with
the source tree's sluice (PYTHONPATH) a closure or a __main__ function
fails (on sluice's ctypes library); with sluice installed in the venv (a
wheel) both work (tried by hand when this was written).
"""
import numpy as np
import pytest

import sluice

ROWS = 61


def make_dataset(datasets):
    features = datasets.Features({
        'id': datasets.Value('int64'),
        'text': datasets.Value('string'),
        'blob': datasets.Value('binary'),
        'score': datasets.Value('float64'),
        'tokens': datasets.Sequence(datasets.Value('int32')),
        'label': datasets.Value('string'),    # nullable
        'count': datasets.Value('int64'),     # nullable
    })
    data = {
        'id': list(range(ROWS)),
        'text': ['text %d é' % i for i in range(ROWS)],
        'blob': [bytes(range(i % 13)) + b'\x00\xff' for i in range(ROWS)],
        'score': [i * 0.25 - 3 for i in range(ROWS)],
        'tokens': [list(range(i, i + i % 5)) for i in range(ROWS)],
        'label': [None if i % 3 == 0 else 'label %d' % i for i in range(ROWS)],
        'count': [None if i % 4 == 1 else i * 1000 for i in range(ROWS)],
    }
    return datasets.Dataset.from_dict(data, features=features), data, features


COLUMNS = {'id': 'int64', 'text': 'str', 'blob': 'bytes', 'score': 'float64',
           'tokens': 'json', 'label': 'json', 'count': 'json'}


@pytest.fixture
def datasets(tmp_path, monkeypatch):
    # datasets' cache (from_generator writes Arrow files there) in the test's folder.
    monkeypatch.setenv('HF_DATASETS_CACHE', str(tmp_path / 'hf-cache'))
    monkeypatch.setenv('HF_HUB_OFFLINE', '1')
    monkeypatch.setenv('HF_DATASETS_OFFLINE', '1')
    import datasets
    return datasets


def as_rows(samples):
    """Samples as plain Python values (ndarray -> list)."""
    return [{k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in s.items()}
            for s in samples]


def stream_samples(local):
    """Dataset.from_generator's generator."""
    yield from sluice.StreamingDataset(local=local, batch_size=4)


def test_dataset_to_mds_and_back(datasets, tmp_path):
    hf, data, features = make_dataset(datasets)
    out = str(tmp_path / 'mds')
    with sluice.MDSWriter(out=out, columns=COLUMNS, size_limit=1 << 10) as w:
        for row in hf:
            w.write(row)

    want = [{k: data[k][i] for k in data} for i in range(ROWS)]
    got = as_rows(sluice.StreamingDataset(local=out, batch_size=4))
    assert got == want
    # The types MDS's encodings decode to, as Mosaic's.
    assert {k: type(v) for k, v in got[2].items()} == {
        'id': np.int64, 'text': str, 'blob': bytes, 'score': np.float64, 'tokens': list,
        'label': str, 'count': int}

    back = datasets.Dataset.from_generator(stream_samples, gen_kwargs={'local': out},
                                           features=features,
                                           cache_dir=str(tmp_path / 'hf-cache'))
    assert back.features == features
    assert back.to_dict() == data
    assert list(back) == list(hf)


def test_to_pandas_through_dataframe_to_mds(datasets, tmp_path):
    hf, data, _ = make_dataset(datasets)
    # An int column with nulls would come back as floats; an empty list is
    # an empty ndarray, which MDS's ndarray encoding refuses.
    hf = hf.remove_columns(['count']).filter(lambda row: len(row['tokens']) > 0)
    keep = [i for i in range(ROWS) if data['tokens'][i]]
    frame = hf.to_pandas()
    assert sluice.dataframe.infer_dataframe_schema(frame, {'label': 'json'})['tokens'] == \
        'ndarray:int32'
    out = str(tmp_path / 'mds')
    sluice.dataframe_to_mds(frame, merge_index=True,
                            mds_kwargs={'out': out, 'columns': {'label': 'json'}})
    got = as_rows(sluice.StreamingDataset(local=out, batch_size=4))
    assert got == [{k: data[k][i] for k in data if k != 'count'} for i in keep]
    assert len(keep) < ROWS
