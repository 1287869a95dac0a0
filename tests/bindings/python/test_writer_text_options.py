"""JSONWriter's `newline`, CSV/TSV writers' `newline` and XSVWriter's
`separator` + `newline`: byte-identical to Mosaic. JSON is checked against the
compat dataset Mosaic wrote with newline='\\r\\n'; XSV/CSV/TSV against
`mosaic_xsv_files`, a transcription of Mosaic's XSVWriter algorithm
(streaming/base/format/xsv/writer.py and base/writer.py) used as the oracle."""
import json
import os

import numpy as np
import pytest

import sluice
from conftest import DATA
from test_writer import assert_same_files

COLUMNS = {'id': 'int', 'name': 'str', 'score': 'float'}


def compat_rows(name='json_plain'):
    with open(os.path.join(DATA, name, 'expected.jsonl')) as f:
        return [json.loads(line)['value'] for line in f]


def mosaic_xsv_files(fmt, rows, columns, separator, newline, size_limit):
    """{file name: bytes} that Mosaic's CSV/TSV/XSVWriter writes (no
    compression, no hashes)."""
    names = sorted(columns)
    encodings = [columns[n] for n in names]
    config = {'version': 2, 'format': fmt, 'compression': None, 'hashes': [],
              'size_limit': size_limit, 'column_names': names, 'column_encodings': encodings,
              'separator': separator, 'newline': newline}
    if fmt != 'xsv':
        del config['separator']
    files, shards, pending, size = {}, [], [], 0

    def flush():
        i = len(shards)
        header = (separator.join(names) + newline).encode()
        data = b''.join([header] + pending)
        offsets = len(header) + np.array([0] + [len(p) for p in pending]).cumsum().astype(np.uint32)
        meta = (np.uint32(len(pending)).tobytes() + offsets.tobytes() +
                json.dumps(config, sort_keys=True).encode())
        data_name, meta_name = f'shard.{i:05}.{fmt}', f'shard.{i:05}.{fmt}.meta'
        files[data_name], files[meta_name] = data, meta
        entry = {'samples': len(pending),
                 'raw_data': {'basename': data_name, 'bytes': len(data), 'hashes': {}},
                 'zip_data': None,
                 'raw_meta': {'basename': meta_name, 'bytes': len(meta), 'hashes': {}},
                 'zip_meta': None}
        entry.update(config)
        shards.append(entry)

    for row in rows:
        line = (separator.join(str(row[n]) for n in names) + newline).encode()
        if size_limit and size_limit < size + len(line):
            flush()
            pending, size = [], 0
        pending.append(line)
        size += len(line)
    if pending:
        flush()
    files['index.json'] = json.dumps({'version': 2, 'shards': shards}, sort_keys=True).encode()
    return files


def assert_files(folder, want):
    assert sorted(os.listdir(folder)) == sorted(want)
    for name, data in want.items():
        with open(os.path.join(folder, name), 'rb') as f:
            assert f.read() == data, name


def test_json_writer_crlf_newline_is_byte_identical(tmp_path):
    rows = compat_rows('json_crlf_newline')
    out = tmp_path / 'crlf'
    with sluice.JSONWriter(out=str(out), columns=COLUMNS, size_limit=4096, newline='\r\n') as w:
        for r in rows:
            w.write(r)
    assert_same_files(out, os.path.join(DATA, 'json_crlf_newline'))
    assert json.load(open(out / 'index.json'))['shards'][0]['newline'] == '\r\n'
    back = sluice.LocalDataset(str(out))
    assert [back[i] for i in range(len(back))] == rows


@pytest.mark.parametrize('cls,fmt,separator,newline', [
    (sluice.CSVWriter, 'csv', ',', '\r\n'),
    (sluice.TSVWriter, 'tsv', '\t', '\n\n'),
    (sluice.XSVWriter, 'xsv', '|', '\n'),
    (sluice.XSVWriter, 'xsv', ' ; ', '\r\n'),
])
def test_xsv_separator_and_newline_match_mosaic(tmp_path, cls, fmt, separator, newline):
    rows = compat_rows()
    out = tmp_path / fmt
    kwargs = {'newline': newline}
    if cls is sluice.XSVWriter:
        kwargs['separator'] = separator
    with cls(out=str(out), columns=COLUMNS, size_limit=2048, **kwargs) as w:
        for r in rows:
            w.write(r)
    want = mosaic_xsv_files(fmt, rows, COLUMNS, separator, newline, 2048)
    assert len([n for n in want if n.endswith('.meta')]) > 1  # several shards
    assert_files(out, want)
    back = sluice.LocalDataset(str(out))
    assert [back[i] for i in range(len(back))] == rows


def test_reference_reproduces_mosaics_csv(tmp_path):
    # The oracle above is itself checked against files Mosaic wrote.
    want = mosaic_xsv_files('csv', compat_rows(), COLUMNS, ',', '\n', 2048)
    assert_files(os.path.join(DATA, 'csv_plain'), dict(want, **{
        'expected.jsonl': open(os.path.join(DATA, 'csv_plain', 'expected.jsonl'), 'rb').read()}))


def test_text_option_errors(tmp_path):
    with pytest.raises(TypeError):
        sluice.XSVWriter(out=str(tmp_path / 'a'), columns=COLUMNS)  # separator is required
    with pytest.raises(ValueError, match='separator'):
        sluice.XSVWriter(out=str(tmp_path / 'b'), columns=COLUMNS, separator='')
    w = sluice.XSVWriter(out=str(tmp_path / 'c'), columns=COLUMNS, separator='|')
    with pytest.raises(ValueError):
        w.write({'id': 1, 'name': 'a|b', 'score': 0.5})  # Mosaic asserts the same
    w.finish()
    with pytest.raises(ValueError, match='newline'):
        sluice.JSONWriter(out=str(tmp_path / 'd'), columns=COLUMNS, newline='')
    with pytest.raises(ValueError, match='separator'):
        sluice.MDSWriter(out=str(tmp_path / 'e'), columns={'x': 'int'}, separator=',')
