"""Parquet through StreamingDataset, the engine's sluice_stream_* path: the
rows random access (ds[i]), iteration (the batched decoder) and batch mode
(iter_batches) give are the rows LocalDataset reads from the same files,
nulls included. Skipped, saying why, while this library's engine does not
stream a folder of Parquet files (it looks for an index.json there)."""
import pathlib
import shutil

import numpy as np
import pytest

from sluice import LocalDataset, StreamingDataset
from sluice.column_batches import parquet_batch_column

DATA = pathlib.Path(__file__).resolve().parents[2] / 'data' / 'parquet'
# Fixtures whose packed lists hold no null element (every row readable).
FILES = ['pa26_types_v1_snappy', 'pa26_nulls_v1', 'hf_text', 'hf_image', 'pa26_codec_snappy',
         'pa26_many_row_groups']


def streamed(folder, **kwargs):
    try:
        return StreamingDataset(local=str(folder), batch_size=kwargs.pop('batch_size', 8),
                                **kwargs)
    except FileNotFoundError as e:
        if 'index.json' in str(e):
            pytest.skip(f'this libsluice does not stream Parquet folders yet: {e}')
        raise


@pytest.fixture(params=FILES)
def folder(request, tmp_path):
    root = tmp_path / request.param
    root.mkdir()
    shutil.copy(DATA / f'{request.param}.parquet', root / 'part-0.parquet')
    return root


def plain(row):
    return {k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in row.items()}


def test_random_access_and_iteration_give_the_local_rows(folder):
    local = LocalDataset(str(folder))
    want = [plain(local[i]) for i in range(len(local))]
    ds = streamed(folder)
    assert ds._engine.format == 'parquet'
    assert [plain(ds[i]) for i in range(len(ds))] == want
    assert [plain(s) for s in ds] == want  # batches of 64: the column-by-column decoder


def _length(column):
    """Samples in a batch's column."""
    return len(column.offsets) - 1 if hasattr(column, 'offsets') else len(column.values)


def _local_column(local, c, ids):
    """Column c of samples `ids` as batch mode builds it, from LocalDataset's
    fields."""
    fields = [local.raw_fields(i)[c] for i in ids]
    sizes = [0 if f is None else len(f) for f in fields]
    data = np.frombuffer(b''.join(f for f in fields if f), np.uint8).copy()
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    return parquet_batch_column(local.column_names[c], local.column_encodings[c], data, offsets,
                                np.array([f is None for f in fields], bool))


def test_batch_mode_gives_the_local_fields(folder):
    local = LocalDataset(str(folder))
    ds = streamed(folder, batch_size=16)
    start = 0
    for batch in ds.iter_batches():
        ids = range(start, start + _length(batch[local.column_names[0]]))
        for c, name in enumerate(local.column_names):
            want, got = _local_column(local, c, ids), batch[name]
            assert type(got) is type(want), name
            for g, w in zip(got, want):
                assert (g is None) == (w is None), name
                if g is not None:
                    assert g.dtype == w.dtype and g.tobytes() == w.tobytes(), name
        start = ids.stop
    assert start == len(local)
