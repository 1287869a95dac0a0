"""dataframe_to_mds on pandas and on a Dask DataFrame computed on a real
distributed.LocalCluster (Spark: tests/engines, with pyspark from the
registry)."""
import os
from decimal import Decimal

import numpy as np
import pandas as pd
import pytest

import sluice


def frame(n=57):
    return pd.DataFrame({
        'id': np.arange(n, dtype=np.int64),
        'x': np.linspace(0, 1, n).astype(np.float32),
        'name': [f'row {i} é' for i in range(n)],
        'blob': [bytes([i % 256]) * (i % 5) for i in range(n)],
    })


def read_all(path):
    ds = sluice.LocalDataset(path)
    return [ds[i] for i in range(len(ds))]


def assert_rows(got, df):
    assert len(got) == len(df)
    for g, (_, r) in zip(got, df.iterrows()):
        assert g['id'] == r['id'] and type(g['id']) is np.int64
        assert g['x'] == r['x'] and type(g['x']) is np.float32
        assert g['name'] == r['name']
        assert g['blob'] == r['blob']


def test_pandas(tmp_path):
    df = frame()
    out, remote = sluice.dataframe_to_mds(df, mds_kwargs={'out': str(tmp_path / 'o'),
                                                          'size_limit': '1kb'})
    assert (out, remote) == (str(tmp_path / 'o'), '')  # Mosaic 0.13's (local, remote)
    cols = sluice.LocalDataset(out)
    assert dict(zip(cols.column_names, cols.column_encodings)) == {
        'blob': 'bytes', 'id': 'int64', 'name': 'str', 'x': 'float32'}
    assert_rows(read_all(out), df)
    assert os.path.isfile(os.path.join(out, '0', 'index.json'))


def test_columns_override_and_udf(tmp_path):
    df = pd.DataFrame({'id': [1, 2, 3], 'amount': [Decimal('1.50'), Decimal('-0'), Decimal('7')]})
    out, _ = sluice.dataframe_to_mds(df, mds_kwargs={'out': str(tmp_path / 'a'),
                                                     'columns': {'id': 'int'}})
    got = read_all(out)
    assert [g['id'] for g in got] == [1, 2, 3] and type(got[0]['id']) is int
    assert [str(g['amount']) for g in got] == ['1.50', '-0', '7']

    def doubled(pdf, factor):
        for v in pdf['id']:
            yield {'v': int(v) * factor}
    out, _ = sluice.dataframe_to_mds(df, mds_kwargs={'out': str(tmp_path / 'b'),
                                                     'columns': {'v': 'int'}},
                                     udf_iterable=doubled, udf_kwargs={'factor': 10})
    assert [g['v'] for g in read_all(out)] == [10, 20, 30]
    with pytest.raises(ValueError, match='columns'):
        sluice.dataframe_to_mds(df, mds_kwargs={'out': str(tmp_path / 'c')},
                                udf_iterable=doubled)
    with pytest.raises(ValueError, match="'when'"):
        sluice.dataframe_to_mds(pd.DataFrame({'when': pd.to_datetime(['2020-01-01'])}),
                                mds_kwargs={'out': str(tmp_path / 'd')})


def test_dask_on_a_local_cluster(tmp_path):
    dd = pytest.importorskip('dask.dataframe')
    distributed = pytest.importorskip('distributed')
    df = frame(101)
    ddf = dd.from_pandas(df, npartitions=4)
    with distributed.LocalCluster(n_workers=1, processes=False, threads_per_worker=2,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        out, _ = sluice.dataframe_to_mds(ddf, mds_kwargs={'out': str(tmp_path / 'o')})
    assert sorted(d for d in os.listdir(out) if d != 'index.json') == ['0', '1', '2', '3']
    assert_rows(read_all(out), df)
    # The result streams back in full through the StreamingDataset too.
    ds = sluice.StreamingDataset(local=out, batch_size=8)
    assert sorted(int(s['id']) for s in ds) == list(range(101))
