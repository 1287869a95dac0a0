"""sluice.load_parquet, the one line Databricks' guide spells
load_dataset("parquet", data_files=...): which files a data_files names
(the engine's listing: every *.parquet under the folder, '_' and '.' files
left out, paths sorted), the values they hold, and that a folder or URL is
a StreamingDataset over the same rows (a single file: read in place)."""
import functools
import http.server
import json
import pathlib
import shutil
import threading

import numpy as np
import pytest

import sluice
from sluice import LocalDataset, StreamingDataset, load_parquet

DATA = pathlib.Path(__file__).resolve().parents[2] / 'data' / 'parquet'


@pytest.fixture
def folder(tmp_path):
    """hf_text.parquet twice (a.parquet, sub/b.parquet) beside what Spark
    leaves (_SUCCESS, .a.parquet.crc) and a file of another kind."""
    root = tmp_path / 'train'
    (root / 'sub').mkdir(parents=True)
    shutil.copy(DATA / 'hf_text.parquet', root / 'a.parquet')
    shutil.copy(DATA / 'hf_text.parquet', root / 'sub' / 'b.parquet')
    (root / '_SUCCESS').write_bytes(b'')
    (root / '.a.parquet.crc').write_bytes(b'crc')
    return root


def rows(ds):
    return [{k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in ds[i].items()}
            for i in range(len(ds))]


def test_a_glob_of_the_folder_gives_its_files_rows_in_path_order(folder):
    one = rows(LocalDataset(str(DATA / 'hf_text.parquet')))
    for data_files in (f'{folder}/**/*.parquet', str(folder), f'{folder}/'):
        ds = load_parquet(data_files=data_files)
        assert isinstance(ds, (LocalDataset, StreamingDataset))
        assert len(ds) == 2 * len(one)
        assert rows(ds) == one + one
    assert rows(load_parquet(data_files=str(folder / 'sub' / 'b.parquet'))) == one
    assert rows(load_parquet(data_files=str(folder.parent), split='train')) == one + one


def test_top_level_glob_refuses_a_folder_whose_sub_folders_hold_more(folder):
    with pytest.raises(ValueError) as info:
        load_parquet(data_files=f'{folder}/*.parquet')
    assert str(info.value) == (
        f'load_parquet: {folder}/*.parquet leaves out the Parquet files in {folder}/sub, which a '
        f'folder\'s files include: write {folder}/**/*.parquet (or move them)')
    # Spark's _temporary/ and hidden files are no part of the folder's files.
    (folder / 'sub' / '_temporary').mkdir()
    shutil.copy(DATA / 'hf_text.parquet', folder / 'sub' / '_temporary' / 'c.parquet')
    shutil.copy(DATA / 'hf_text.parquet', folder / 'sub' / '.c.parquet')
    ds = load_parquet(data_files=f'{folder}/sub/*.parquet')
    assert len(ds) == len(LocalDataset(str(DATA / 'hf_text.parquet')))


def test_data_files_forms_the_engine_cannot_list():
    with pytest.raises(ValueError) as info:
        load_parquet(data_files='/Volumes/main/default/vol/part-*.parquet')
    assert str(info.value) == (
        "load_parquet: data_files '/Volumes/main/default/vol/part-*.parquet': a folder's Parquet "
        "files are all its *.parquet files (sub-folders included), so the pattern may only be "
        "FOLDER/*.parquet or FOLDER/**/*.parquet; name the folder instead")
    with pytest.raises(TypeError) as info:
        load_parquet(data_files=['/a.parquet', '/b.parquet'])
    assert str(info.value) == ('load_parquet: data_files takes one folder, Parquet file, glob or '
                               'URL (a list of them is not supported yet)')


def test_split_is_mosaics_sub_folder(folder):
    with pytest.raises(FileNotFoundError) as info:
        load_parquet(data_files=f'{folder}/**/*.parquet', split='train')
    assert str(info.value) == (
        f"load_parquet: split='train' is a sub-folder of data_files (Mosaic's split), and "
        f"{folder}/train does not exist; a Hugging Face split name selects no folder here: "
        f"leave split out")
    assert len(load_parquet(data_files=str(folder), split='sub')) == \
        len(LocalDataset(str(DATA / 'hf_text.parquet')))


def test_streaming_arguments_give_a_streaming_dataset_over_the_rows(folder):
    ds = load_parquet(data_files=f'{folder}/**/*.parquet', batch_size=4, shuffle=True,
                      shuffle_seed=3)
    assert isinstance(ds, StreamingDataset) and ds.shuffle and ds.batch_size == 4
    local = LocalDataset(str(DATA / 'hf_text.parquet'))
    assert sorted(r['text'] for r in ds) == sorted(2 * [local[i]['text'] for i in range(len(local))])


def test_a_single_file_is_not_streamed(folder):
    with pytest.raises(NotImplementedError) as info:
        load_parquet(data_files=str(folder / 'a.parquet'), batch_size=4)
    assert str(info.value) == (
        f'load_parquet: {folder}/a.parquet is one file, and a StreamingDataset streams a folder '
        f'(name the folder, or one that holds only this file), so [\'batch_size\'] cannot '
        f'apply; without them load_parquet reads the file in place as a LocalDataset (len, '
        f'ds[i], iteration in file order)')
    one = load_parquet(data_files=str(folder / 'a.parquet'))
    assert isinstance(one, LocalDataset)
    assert rows(one) == rows(LocalDataset(str(DATA / 'hf_text.parquet')))


@pytest.fixture
def web_folder():
    """tests/data/parquet over plain HTTP on 127.0.0.1 (no index.json)."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(DATA))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f'http://127.0.0.1:{server.server_port}'
    server.shutdown()
    server.server_close()


def test_a_web_folder_is_looked_up_as_mosaics(web_folder, tmp_path):
    # A web server cannot list a folder's Parquet files: the folder is then
    # what Mosaic takes it for, a dataset whose index.json is missing.
    url = f'{web_folder}/spark_out'
    with pytest.raises(FileNotFoundError) as info:
        load_parquet(data_files=f'{url}/*.parquet', local=str(tmp_path / 'cache'),
                     batch_size=4, download_retry=0)
    assert f'GET {url}/index.json: HTTP 404' in str(info.value), str(info.value)


def test_a_local_remote_folder_streams_through_the_cache(folder, tmp_path):
    cache = tmp_path / 'cache'
    ds = load_parquet(data_files=str(folder), local=str(cache), batch_size=4)
    assert isinstance(ds, StreamingDataset)
    one = rows(LocalDataset(str(DATA / 'hf_text.parquet')))
    assert rows(ds) == one + one  # a.parquet, then sub/b.parquet
    assert (cache / '.sluice').is_dir()


def test_other_failures_are_not_taken_for_parquet(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_parquet(data_files=str(tmp_path / 'missing'))
    mds = tmp_path / 'mds'
    with sluice.MDSWriter(out=str(mds), columns={'id': 'int'}) as w:
        for i in range(5):
            w.write({'id': i})
    ds = load_parquet(data_files=str(mds), batch_size=2)  # an index.json: Mosaic's dataset
    assert isinstance(ds, StreamingDataset)
    assert [s['id'] for s in ds] == list(range(5))


def test_the_folder_a_data_files_names():
    from sluice.parquet_dataset import _folder_of
    assert _folder_of('dbfs:/Volumes/main/default/vol/train/*.parquet') == \
        ('dbfs:/Volumes/main/default/vol/train', True)
    assert _folder_of('s3://bucket/table/**/*.parquet') == ('s3://bucket/table', True)
    assert _folder_of('gs://bucket/table/') == ('gs://bucket/table/', True)
    assert _folder_of(pathlib.Path('/Volumes/main/default/vol/train')) == \
        ('/Volumes/main/default/vol/train', False)
    assert _folder_of('file:///data/train/**/*.parquet') == ('/data/train', False)
    assert _folder_of('/data/**/*.parquet') == ('/data', False)


def test_local_dataset_samples_per_shard_is_the_engines(folder, tmp_path):
    """Row groups of a Parquet folder (which has no index.json to read) and
    an MDS folder's index entries, both as the engine counts them."""
    parquet = LocalDataset(str(folder))
    streamed = StreamingDataset(local=str(folder), batch_size=1)
    assert parquet.samples_per_shard == streamed.samples_per_shard.tolist()
    assert sum(parquet.samples_per_shard) == len(parquet) and parquet.num_shards >= 2
    mds = tmp_path / 'mds'
    with sluice.MDSWriter(out=str(mds), columns={'x': 'int'}, size_limit=200) as w:
        for i in range(100):
            w.write({'x': i})
    index = json.loads((mds / 'index.json').read_text())
    want = [shard['samples'] for shard in index['shards']]
    assert len(want) > 2 and LocalDataset(str(mds)).samples_per_shard == want
