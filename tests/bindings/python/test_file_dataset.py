"""StreamingFileDataset: raw files (no shards) through the engine: a folder
read in place and a remote copied into a cache, paths or bytes, globs, the
DataLoader helper and its per-batch metrics, resumption, skipped files and
the errors that name what is wrong."""
import os

import pytest

from sluice.file_dataset import StreamingFileDataset, file_dataloader
from sluice.dataloader import StreamingDataLoader


def _content(i):
    return (f'file {i}:'.encode() * (i % 7 + 1))[: (i * 53) % 700]


@pytest.fixture
def folder(tmp_path):
    """40 files in 3 folders, plus what Spark leaves beside data."""
    root = tmp_path / 'images'
    for i in range(40):
        path = root / f'class{i % 3}' / f'img{i}.jpg'
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(_content(i))
    (root / '_SUCCESS').write_bytes(b'')
    (root / 'class0' / '.img0.jpg.crc').write_bytes(b'crc')
    (root / 'notes.txt').write_bytes(b'not an image')
    return root


def _expected(root):
    """Every data file's relative path in the dataset's order (bytewise)."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(('_', '.'))]
        for name in filenames:
            if not name.startswith(('_', '.')):
                out.append(os.path.relpath(os.path.join(dirpath, name), root))
    return sorted(out, key=lambda p: p.encode())


def test_a_folder_is_read_in_place_as_paths_in_bytewise_order(folder):
    ds = StreamingFileDataset(local=str(folder), batch_size=4)
    want = [str(folder / p) for p in _expected(folder)]
    assert len(ds) == 41 and ds.num_samples == 41
    assert list(ds) == want
    assert ds[3] == want[3] and ds[-1] == want[-1]
    assert not (folder / '.sluice' / 'listing.json').exists()


def test_a_remote_folder_is_cached_and_yields_bytes_or_transformed_values(folder, tmp_path):
    cache = tmp_path / 'cache'
    ds = StreamingFileDataset(remote=str(folder), local=str(cache), glob='*.jpg',
                              output='bytes', batch_size=4)
    names = [p for p in _expected(folder) if p.endswith('.jpg')]
    got = list(ds)
    assert got == [(folder / p).read_bytes() for p in names]
    assert ds.metrics()['files_downloaded'] == 40
    assert ds.metrics()['bytes_downloaded'] == sum(len(b) for b in got)
    assert (cache / '.sluice' / 'listing.json').exists()
    # Paths name the cached copies; a transform sees each value. (Another
    # selection needs its own cache folder while this one is open.)
    cache = tmp_path / 'cache2'
    paths = StreamingFileDataset(remote=str(folder), local=str(cache), glob='class1/*',
                                 transform=lambda p: (os.path.relpath(p, cache),
                                                      open(p, 'rb').read()), batch_size=4)
    assert list(paths) == [(p, (folder / p).read_bytes())
                           for p in names if p.startswith('class1/')]


def test_the_dataloader_reads_every_file_once_and_reports_each_batch(folder, tmp_path):
    ds = StreamingFileDataset(remote=str(folder), local=str(tmp_path / 'cache'),
                              output='bytes', shuffle=True, shuffle_seed=7, batch_size=4)
    seen = []
    loader = file_dataloader(ds, num_workers=2, on_batch=seen.append)
    batches = list(loader)
    files = [b for batch in batches for b in batch]
    want = sorted((folder / p).read_bytes() for p in _expected(folder))
    assert sorted(files) == want
    assert [m['batch'] for m in seen] == list(range(len(batches)))
    assert [m['files'] for m in seen] == [len(b) for b in batches]
    assert [m['bytes'] for m in seen] == [sum(len(x) for x in b) for b in batches]
    assert all(m['fetch_s'] >= 0 for m in seen)
    assert loader.last_metrics == seen[-1]


def test_resumes_mid_epoch_exactly(folder, tmp_path):
    def make():
        return StreamingFileDataset(remote=str(folder), local=str(tmp_path / 'cache'),
                                    shuffle=True, shuffle_seed=3, batch_size=4)
    whole = [p for batch in StreamingDataLoader(make(), batch_size=4) for p in batch]
    loader = StreamingDataLoader(make(), batch_size=4)
    it = iter(loader)
    for _ in range(3):
        next(it)
    state = loader.state_dict()
    assert state['sample_in_epoch'] == 12
    resumed = StreamingDataLoader(make(), batch_size=4)
    resumed.load_state_dict(state)
    rest = [p for batch in resumed for p in batch]
    assert rest == whole[12:]


def test_a_missing_file_is_named_or_skipped_and_counted(folder, tmp_path):
    cache = str(tmp_path / 'cache')
    StreamingFileDataset(remote=str(folder), local=cache, batch_size=1)  # lists, keeps the listing
    victim = _expected(folder)[5]
    os.remove(folder / victim)
    ds = StreamingFileDataset(remote=str(folder), local=cache, batch_size=1, output='bytes')
    with pytest.raises(Exception, match=str(folder / victim)):
        list(ds)
    skipping = StreamingFileDataset(remote=str(folder), local=cache, batch_size=1,
                                    output='bytes', skip_missing=True)
    assert len(list(skipping)) == 40
    assert skipping.metrics()['files_skipped'] == 1


def test_bad_arguments_say_what_is_wrong(folder, tmp_path):
    with pytest.raises(ValueError, match="output must be one of \\('path', 'bytes'\\), not 'text'"):
        StreamingFileDataset(local=str(folder), output='text')
    with pytest.raises(ValueError, match='needs remote'):
        StreamingFileDataset()
    with pytest.raises(FileNotFoundError, match='no data file among the 43 listed that matches "\\*.png"'):
        StreamingFileDataset(local=str(folder), glob='*.png')
    with pytest.raises(Exception, match="'files.glob' must be a string or a list of strings"):
        StreamingFileDataset(local=str(folder), glob=3)


class _StandInMlflow:
    """A stand-in for the mlflow module (not packaged by Debian): records
    what the loader logs while a run is active."""

    def __init__(self):
        self.logged = []

    def active_run(self):
        return object()

    def log_metrics(self, metrics, step):
        self.logged.append((step, dict(metrics)))


def test_batch_metrics_go_to_mlflow_when_a_run_is_active(folder, monkeypatch):
    mlflow = _StandInMlflow()
    monkeypatch.setitem(__import__('sys').modules, 'mlflow', mlflow)
    ds = StreamingFileDataset(local=str(folder), glob='*.jpg', output='bytes', batch_size=8)
    batches = list(file_dataloader(ds, num_workers=0))
    assert [step for step, _ in mlflow.logged] == list(range(len(batches))) == list(range(5))
    assert [m['sluice.batch_bytes'] for _, m in mlflow.logged] == \
        [sum(map(len, b)) for b in batches]
    assert all(m['sluice.fetch_s'] >= 0 for _, m in mlflow.logged)


def test_a_subclass_reads_through_its_own_get_item(folder):
    class Sizes(StreamingFileDataset):
        def get_item(self, idx):
            return len(super().get_item(idx))

    ds = Sizes(local=str(folder), glob='*.jpg', output='bytes', batch_size=4)
    names = [p for p in _expected(folder) if p.endswith('.jpg')]
    assert list(ds) == [len((folder / p).read_bytes()) for p in names]
