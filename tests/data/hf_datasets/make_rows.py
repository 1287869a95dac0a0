"""Writes parquet_rows.json: for every fixture of tests/data/parquet (bad_*
left out; each Spark folder as data_files='FOLDER/*.parquet'), the digest
(canonical.row_digest) of each row as Hugging Face `datasets` reads it:
load_dataset('parquet', data_files=..., split='train')[i]. Run under a
Python with `datasets`:

    python3 -m venv /tmp/hf && /tmp/hf/bin/pip install datasets==5.2.0
    /tmp/hf/bin/python tests/data/hf_datasets/make_rows.py

A fixture `datasets` cannot read is recorded with its error."""
import json
import pathlib
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from canonical import row_digest  # noqa: E402

import datasets  # noqa: E402
import pyarrow  # noqa: E402


def main():
    datasets.disable_progress_bars()
    out = {'writer': f'datasets {datasets.__version__}, pyarrow {pyarrow.__version__}',
           'fixtures': {}}
    parquet = HERE.parent / 'parquet'
    sources = [(p.name, str(p)) for p in sorted(parquet.glob('*.parquet'))
               if not p.name.startswith('bad_')]
    sources += [(p.name, f'{p}/*.parquet') for p in sorted(parquet.glob('spark_*'))]
    with tempfile.TemporaryDirectory() as cache:
        for name, data_files in sources:
            try:
                ds = datasets.load_dataset('parquet', data_files=data_files, split='train',
                                           cache_dir=cache)
                out['fixtures'][name] = [row_digest(row) for row in ds]
            except Exception as e:  # recorded: what datasets says, and why
                cause = f' ({type(e.__cause__).__name__}: {e.__cause__})' if e.__cause__ else ''
                out['fixtures'][name] = {'error': f'{type(e).__name__}: {e}{cause}'}
    # One line per fixture.
    lines = [f' {json.dumps(k)}: {json.dumps(v)}' for k, v in sorted(out['fixtures'].items())]
    text = ('{"writer": ' + json.dumps(out['writer']) + ',\n"fixtures": {\n' +
            ',\n'.join(lines) + '\n}}\n')
    (HERE / 'parquet_rows.json').write_text(text)


if __name__ == '__main__':
    main()
