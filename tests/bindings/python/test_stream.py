"""sluice.Stream's local folder and a missing index, as Mosaic's Stream."""
import hashlib
import os
import tempfile

import pytest

import sluice


def write(folder, n):
    with sluice.MDSWriter(out=folder, columns={'id': 'int'}, size_limit=64) as w:
        for i in range(n):
            w.write({'id': i})


def test_a_local_remote_without_local_is_cached_in_mosaics_temporary_folder(tmp_path,
                                                                           monkeypatch):
    monkeypatch.setattr(tempfile, 'gettempdir', lambda: str(tmp_path / 'tmp'))
    remote = str(tmp_path / 'remote')
    write(remote, 20)
    digest = hashlib.blake2s(remote.encode('utf-8'), digest_size=16).hexdigest()
    assert sluice.Stream(remote=remote).local == str(tmp_path / 'tmp' / digest) + '/'
    assert sluice.Stream(remote=remote, split='train').local == \
        str(tmp_path / 'tmp' / digest / 'train')
    ds = sluice.StreamingDataset(remote=remote, batch_size=4)
    assert ds.streams[0].local == str(tmp_path / 'tmp' / digest) + '/'
    assert sorted(int(s['id']) for s in ds) == list(range(20))
    assert os.path.isfile(os.path.join(ds.streams[0].local, 'index.json'))


def test_no_remote_and_no_index_is_mosaics_runtime_error(tmp_path):
    (tmp_path / 'empty').mkdir()
    stream = sluice.Stream(local=str(tmp_path / 'empty'))
    index = os.path.join(str(tmp_path / 'empty'), '', 'index.json')
    with pytest.raises(RuntimeError) as e:
        sluice.StreamingDataset(streams=[stream], batch_size=1)
    assert str(e.value) == f'No `remote` provided, but local file {index} does not exist either'
    assert isinstance(e.value, FileNotFoundError)


def test_predownload_below_batch_size_warns_as_mosaic(tmp_path):
    write(str(tmp_path / 'ds'), 4)
    with pytest.warns(UserWarning) as got:
        sluice.StreamingDataset(local=str(tmp_path / 'ds'), predownload=4, batch_size=8)
    assert [str(w.message) for w in got] == [
        'predownload < batch_size (4 < 8).This may result in slower batch time. Recommendation '
        'is to set predownload to at-least batch_size.']


def test_predownload_defaults_as_mosaics(tmp_path):
    write(str(tmp_path / 'ds'), 4)
    local = str(tmp_path / 'ds')
    assert sluice.StreamingDataset(local=local, batch_size=3).predownload == 24
    assert sluice.StreamingDataset(local=local).predownload == 64
    assert sluice.StreamingDataset(local=local, predownload=5, batch_size=3).predownload == 5


def test_a_broken_or_empty_index_has_mosaics_errors(tmp_path):
    import json
    folder = tmp_path / 'ds'
    folder.mkdir()
    (folder / 'index.json').write_text('')
    with pytest.raises(json.JSONDecodeError) as e:
        sluice.StreamingDataset(local=str(folder), batch_size=1)
    index = os.path.join(str(folder), '', 'index.json')
    assert str(e.value) == (f'Index file at {index} is empty or corrupted. Expecting value: line 1 '
                            f'column 1 (char 0)')
    (folder / 'index.json').write_text('{"shards": [], "version": 2}')
    with pytest.raises(RuntimeError) as e:
        sluice.StreamingDataset(local=str(folder), batch_size=1)
    assert str(e.value) == f'Stream contains no samples: {index}.'
    (tmp_path / 'remote').mkdir()
    with pytest.raises(FileNotFoundError, match='No such file or directory'):
        sluice.StreamingDataset(remote=str(tmp_path / 'remote'), local=str(tmp_path / 'cache'),
                                batch_size=1)


def test_iterating_without_batch_size_is_mosaics_error(tmp_path):
    write(str(tmp_path / 'ds'), 4)
    ds = sluice.StreamingDataset(local=str(tmp_path / 'ds'))
    assert ds[1]['id'] == 1  # random access needs no batch_size
    with pytest.raises(ValueError) as e:
        next(iter(ds))
    assert str(e.value) == ('Please pass `batch_size` to StreamingDataset. It should be set the '
                            'same as the DataLoader, and is the number of samples per batch, for '
                            'each device. It is necessary for deterministic resumption and '
                            'optimal performance.')


def test_a_stream_without_remote_or_local_is_mosaics_error(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, 'gettempdir', lambda: str(tmp_path))
    with pytest.raises(FileExistsError) as e:
        sluice.Stream()
    assert str(e.value) == (
        f'Could not create a temporary local directory {tmp_path}/ because it already exists. '
        f'If you want to reuse the locally cached dataset, explicitly pass in a unique local '
        f'directory with the `local` argument. Otherwise, delete this directory and retry.')
    with pytest.raises(ValueError, match=r'^`remote` and/or `local` path must be provided$'):
        sluice.Stream(split='none_here')
    assert not (tmp_path / 'none_here').exists()
