"""Writers' get_config (Mosaic's): the settings index.json records for every
shard, equal to what the writer then stores, and Mosaic's error for an
unknown writer argument."""
import json
import os

import pytest

import sluice

SHARD_ONLY = ('raw_data', 'zip_data', 'raw_meta', 'zip_meta', 'samples')


def stored_config(folder):
    with open(os.path.join(folder, 'index.json')) as f:
        shard = json.load(f)['shards'][0]
    return {k: v for k, v in shard.items() if k not in SHARD_ONLY}


@pytest.mark.parametrize(('cls', 'kwargs', 'sample', 'expected'), [
    (sluice.MDSWriter, {'columns': {'z': 'ndarray:int16:2', 'a': 'str', 'n': 'int8'},
                        'compression': 'zstd:7', 'hashes': ['sha1'], 'size_limit': '1kb'},
     {'z': None, 'a': 'x', 'n': 3},
     {'version': 2, 'format': 'mds', 'compression': 'zstd:7', 'hashes': ['sha1'],
      'size_limit': 1024, 'column_names': ['a', 'n', 'z'],
      'column_encodings': ['str', 'int8', 'ndarray:int16:2'], 'column_sizes': [None, 1, 4]}),
    (sluice.JSONWriter, {'columns': {'b': 'int', 'a': 'str'}, 'newline': '\r\n'},
     {'b': 1, 'a': 'x'},
     {'version': 2, 'format': 'json', 'compression': None, 'hashes': [], 'size_limit': 1 << 26,
      'columns': {'b': 'int', 'a': 'str'}, 'newline': '\r\n'}),
    (sluice.CSVWriter, {'columns': {'b': 'float', 'a': 'str'}, 'size_limit': None},
     {'b': 1.5, 'a': 'x'},
     {'version': 2, 'format': 'csv', 'compression': None, 'hashes': [], 'size_limit': None,
      'column_names': ['a', 'b'], 'column_encodings': ['str', 'float'], 'newline': '\n'}),
    (sluice.TSVWriter, {'columns': {'a': 'int'}}, {'a': 1},
     {'version': 2, 'format': 'tsv', 'compression': None, 'hashes': [], 'size_limit': 1 << 26,
      'column_names': ['a'], 'column_encodings': ['int'], 'newline': '\n'}),
    (sluice.XSVWriter, {'columns': {'b': 'int', 'a': 'str'}, 'separator': '|'},
     {'b': 1, 'a': 'x'},
     {'version': 2, 'format': 'xsv', 'compression': None, 'hashes': [], 'size_limit': 1 << 26,
      'column_names': ['a', 'b'], 'column_encodings': ['str', 'int'], 'separator': '|',
      'newline': '\n'}),
], ids=['mds', 'json', 'csv', 'tsv', 'xsv'])
def test_get_config_is_mosaics_and_what_index_json_records(tmp_path, cls, kwargs, sample,
                                                         expected):
    import numpy as np
    if 'z' in sample:
        sample = dict(sample, z=np.array([1, 2], np.int16))
    out = str(tmp_path / 'ds')
    with cls(out=out, **kwargs) as w:
        assert w.get_config() == expected
        w.write(sample)
    assert stored_config(out) == expected


def test_an_unknown_writer_argument_is_mosaics_value_error(tmp_path):
    with pytest.raises(ValueError) as e:
        sluice.MDSWriter(out=str(tmp_path / 'ds'), columns={'a': 'int'}, min_workers=1)
    assert str(e.value) == "Invalid Writer argument(s): ['min_workers'] "
