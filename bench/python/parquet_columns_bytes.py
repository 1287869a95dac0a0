"""Bytes a Parquet stream fetches with and without columns=[...]: four
copies of a test fixture in a folder used as the remote, one epoch read
through the cache, the engine's bytes_downloaded counter (the column chunks'
reads; footers are read apart and not counted).

    SLUICE_LIBRARY=build/bindings/c/libsluice.so.4 PYTHONPATH=bindings/python \
        python3 bench/python/parquet_columns_bytes.py
"""
import pathlib
import shutil
import tempfile

from sluice import StreamingDataset

DATA = pathlib.Path(__file__).resolve().parents[2] / 'tests' / 'data' / 'parquet'
CASES = (('hf_text', ['input_ids']), ('hf_text', ['text']), ('hf_image', ['label']),
         ('pa26_many_row_groups', ['id']))


def fetched(src, cache, columns):
    ds = StreamingDataset(remote=str(src), local=str(cache), batch_size=8, columns=columns)
    rows = sum(1 for _ in ds)
    return rows, ds._engine.counters()['bytes_downloaded']


def main():
    for name, columns in CASES:
        with tempfile.TemporaryDirectory() as d:
            src = pathlib.Path(d) / 'src'
            src.mkdir()
            for k in range(4):
                shutil.copy(DATA / f'{name}.parquet', src / f'part-{k}.parquet')
            rows, every = fetched(src, pathlib.Path(d) / 'all', None)
            _, some = fetched(src, pathlib.Path(d) / 'some', columns)
            print(f'{name} ({rows} rows): all columns {every} B, columns={columns} {some} B')


if __name__ == '__main__':
    main()
