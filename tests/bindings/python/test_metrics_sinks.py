"""StreamingDataLoader.metrics() (the caller's wait per batch) and where
metrics go (sluice.metrics_sinks): the MLflow payload, TensorBoard scalars,
the progress line, and the engine's Prometheus file read by
prometheus_client's own parser."""
import io
import os
import pathlib
import re
import sys
import time

import pytest
from prometheus_client.parser import text_string_to_metric_families

import sluice
from sluice.metrics_sinks import Progress, flatten, log_to_mlflow, log_to_tensorboard

DOCS = (pathlib.Path(__file__).resolve().parents[3] / 'docs' / 'metrics.rst').read_text()
SAMPLES = 100
DELAY_S = 0.002  # each sample's delay in slow_ids, the loaders' collate_fn


def write_remote(root):
    with sluice.MDSWriter(out=root, columns={'id': 'int', 'data': 'bytes'},
                          size_limit=1 << 10) as w:
        for i in range(SAMPLES):
            w.write({'id': i, 'data': bytes([i]) * 20})


def ids(batch):
    """The loaders' collate_fn: each sample takes at least DELAY_S, so a batch
    of 10 keeps the caller waiting at least 10 * DELAY_S (in this process
    with num_workers=0, in a worker otherwise)."""
    time.sleep(len(batch) * DELAY_S)
    return [s['id'] for s in batch]


@pytest.fixture
def dataset(tmp_path):
    remote = str(tmp_path / 'remote')
    write_remote(remote)
    return sluice.StreamingDataset(remote=remote, local=str(tmp_path / 'local'), batch_size=10, shuffle=False)


def test_loader_times_each_batch_of_a_slowed_dataset(dataset):
    loader = sluice.StreamingDataLoader(dataset, batch_size=10, num_workers=0, collate_fn=ids)
    start = time.perf_counter()
    got = [i for b in loader for i in b]
    wall = time.perf_counter() - start
    assert got == list(range(SAMPLES))
    assert loader.num_samples_yielded == SAMPLES
    m = loader.metrics()
    assert (m['batches'], m['samples']) == (10, SAMPLES)
    # Every batch's collate slept 10 * DELAY_S in this process; the waits are within
    # the loop's wall time.
    assert SAMPLES * DELAY_S <= m['wait_s'] <= wall
    w = m['window']
    assert (w['batches'], w['samples']) == (10, SAMPLES)
    assert w['wait_s'] == pytest.approx(m['wait_s'])
    assert 10 * DELAY_S <= w['wait_p50_s'] <= w['wait_p95_s'] <= w['wait_s']
    assert w['wait_s'] <= w['seconds']
    assert w['wait_fraction'] == w['wait_s'] / w['seconds']
    assert w['samples_per_s'] == SAMPLES / w['seconds']
    assert loader.last_wait_s >= 10 * DELAY_S
    # The dataset reads in this process: its own metrics come along.
    assert m['dataset']['totals']['samples'] == SAMPLES

    # The next window is empty until the next batches; totals go on.
    m2 = loader.metrics()
    assert (m2['batches'], m2['samples'], m2['wait_s']) == (10, SAMPLES, m['wait_s'])
    assert (m2['window']['batches'], m2['window']['wait_s'], m2['window']['wait_p95_s']) == \
        (0, 0.0, 0.0)
    assert [i for b in loader for i in b] == list(range(SAMPLES))
    m3 = loader.metrics()
    assert (m3['batches'], m3['samples'], m3['window']['batches']) == (20, 2 * SAMPLES, 10)
    assert m3['wait_s'] >= 2 * SAMPLES * DELAY_S
    assert m3['dataset']['window']['samples'] == SAMPLES


@pytest.mark.filterwarnings('ignore:This DataLoader will create')
def test_loader_with_workers_MultiProcess_sees_their_reads(dataset, tmp_path, monkeypatch):
    # A state folder of this test's own, so that no other run's records of
    # a recycled folder identity are summed (the workers inherit it).
    state = tmp_path / 'state'
    state.mkdir()
    monkeypatch.setenv('SLUICE_CACHE_STATE_DIR', str(state))
    plain = sluice.StreamingDataset(remote=dataset.streams[0].remote,
                                    local=str(tmp_path / 'plain'), batch_size=10, shuffle=False)
    assert [s['id'] for s in plain] == list(range(SAMPLES))
    sample_bytes = plain.metrics()['totals']['bytes']
    remote = dataset.streams[0].remote
    shards = [f for f in os.listdir(remote) if f.startswith('shard.')]
    stored = sum(os.path.getsize(os.path.join(remote, f)) for f in shards)

    loader = sluice.StreamingDataLoader(dataset, batch_size=10, num_workers=2, collate_fn=ids)
    out = io.StringIO()
    shown = sluice.progress(loader, every=1e-9, stream=out)
    assert sorted(i for b in shown for i in b) == list(range(SAMPLES))
    lines = [s.rstrip() for s in out.getvalue()[:-1].split('\r')[1:]]
    assert all(re.fullmatch(LINE, s) for s in lines), lines
    # The last line came after both workers ended their passes (and wrote
    # their records): the bytes they read are in its MB/s.
    assert '- MB/s' not in lines[-1]
    d = shown.last['dataset']
    # This process and the two workers.
    assert d['processes'] == 3
    t = d['totals']
    # (Its batches are the engine's calls, which a worker sizes itself.)
    assert (t['samples'], t['bytes']) == (SAMPLES, sample_bytes)
    assert (t['downloads'], t['shards_downloaded'], t['bytes_downloaded']) == \
        (len(shards), len(shards), stored)
    m = loader.metrics()
    assert (m['batches'], m['samples']) == (10, SAMPLES)
    # The workers slept; the main process waited for at least the slowest
    # worker's share (half the samples each).
    assert m['wait_s'] >= SAMPLES // 2 * DELAY_S

    # A second epoch forks two new workers: the first two's counts stay,
    # once; nothing is downloaded again.
    assert sorted(i for b in loader for i in b) == list(range(SAMPLES))
    d = loader.metrics()['dataset']
    assert d['processes'] == 5
    assert (d['totals']['samples'], d['totals']['bytes']) == (2 * SAMPLES, 2 * sample_bytes)
    assert d['totals']['downloads'] == len(shards)
    assert (d['window']['samples'], d['window']['downloads']) == (SAMPLES, 0)
    assert d['window']['mb_per_s'] == sample_bytes / 1e6 / d['window']['seconds']
    # The two new workers read in the window; the share of time waited is
    # each one's (their waits are summed).
    assert d['window']['readers'] == 2
    assert d['window']['wait_fraction'] == pytest.approx(
        d['window']['wait_s'] / d['window']['seconds'] / 2, rel=1e-12)

    # The node's totals as one Prometheus file (the plain dataset used
    # another cache folder: not in them).
    path = dataset.write_prometheus(str(tmp_path), scope='node')
    assert path == str(tmp_path / 'sluice-node.prom')
    families = {f.name: f for f in
                text_string_to_metric_families(pathlib.Path(path).read_text())}
    assert [(s.labels, s.value) for s in families['sluice_samples'].samples] == \
        [({'process': 'node'}, 2 * SAMPLES)]
    assert [s.value for s in families['sluice_downloads'].samples] == [len(shards)]


def test_loader_state_dict_still_resumes(dataset, tmp_path):
    loader = sluice.StreamingDataLoader(dataset, batch_size=10, num_workers=0, collate_fn=ids)
    batches = iter(loader)
    first = [next(batches), next(batches), next(batches)]
    state = loader.state_dict()
    assert state['sample_in_epoch'] == 30 and first[2] == list(range(20, 30))
    assert loader.metrics()['batches'] == 3
    fresh = sluice.StreamingDataset(remote=dataset.streams[0].remote, local=str(tmp_path / 'local2'),
                 batch_size=10, shuffle=False)
    resumed = sluice.StreamingDataLoader(fresh, batch_size=10, num_workers=0, collate_fn=ids)
    resumed.load_state_dict(state)
    assert [i for b in resumed for i in b] == list(range(30, SAMPLES))
    assert resumed.metrics()['batches'] == 7


def test_every_loader_field_is_documented(dataset):
    loader = sluice.StreamingDataLoader(dataset, batch_size=10, num_workers=0, collate_fn=ids)
    next(iter(loader))
    m = loader.metrics()
    fields = set(m) | set(m['window'])
    missing = sorted(k for k in fields if f'``{k}``' not in DOCS)
    assert not missing, missing
    for name in ('flatten', 'log_to_mlflow', 'log_to_tensorboard', 'progress', 'Progress'):
        assert name in DOCS, name


def test_flatten_keeps_numbers_under_dotted_safe_names():
    metrics = {'remote': 's3://b/ds', 'diagnosis': 'not data-bound', 'batches': 3,
               'ok': True, 'window': {'wait_s': 0.5, 'samples': 30},
               'hosts': {'http://127.0.0.1:8000': {'requests': 4, 'errors': {'timeout': 1},
                                                   'first_byte': {'p95_ms': 2.5}}}}
    assert flatten(metrics) == {
        'sluice.batches': 3,
        'sluice.hosts.http___127.0.0.1_8000.errors.timeout': 1,
        'sluice.hosts.http___127.0.0.1_8000.first_byte.p95_ms': 2.5,
        'sluice.hosts.http___127.0.0.1_8000.requests': 4,
        'sluice.window.samples': 30,
        'sluice.window.wait_s': 0.5,
    }
    assert flatten({'a': {'b': 1}}, prefix='') == {'a.b': 1}


class RecordingMlflow:
    """Stands in for the mlflow module to record the payload only (the real
    one is read back in tests/engines/test_metrics_readers.py)."""

    def __init__(self, active):
        self.active = active
        self.logged = []

    def active_run(self):
        return object() if self.active else None

    def log_metrics(self, metrics, step=None):
        self.logged.append((step, dict(metrics)))


def test_loader_logs_each_batch_to_an_active_mlflow_run(dataset, monkeypatch):
    mlflow = RecordingMlflow(active=True)
    monkeypatch.setitem(sys.modules, 'mlflow', mlflow)
    loader = sluice.StreamingDataLoader(dataset, batch_size=10, num_workers=0, collate_fn=ids)
    assert [i for b in loader for i in b] == list(range(SAMPLES))
    assert [step for step, _ in mlflow.logged] == list(range(1, 11))
    assert all(sorted(p) == ['sluice.batch_samples', 'sluice.fetch_s'] and
               p['sluice.batch_samples'] == 10 for _, p in mlflow.logged)
    # The waits logged are the loader's, batch by batch.
    total = 0.0
    for _, p in mlflow.logged:
        total += p['sluice.fetch_s']
    assert total == loader.metrics()['wait_s']
    # No active run: nothing logged.
    mlflow.active = False
    assert len([b for b in loader]) == 10
    assert len(mlflow.logged) == 10


def test_mlflow_payload_of_a_loader(dataset, monkeypatch):
    loader = sluice.StreamingDataLoader(dataset, batch_size=10, num_workers=0, collate_fn=ids)
    assert len(list(loader)) == 10
    m = loader.metrics()
    mlflow = RecordingMlflow(active=True)
    monkeypatch.setitem(sys.modules, 'mlflow', mlflow)
    assert log_to_mlflow(m, step=7) is True
    [(step, payload)] = mlflow.logged
    assert step == 7
    assert payload == flatten(m)
    assert (payload['sluice.batches'], payload['sluice.samples']) == (10, SAMPLES)
    assert payload['sluice.window.wait_p95_s'] == m['window']['wait_p95_s']
    assert payload['sluice.dataset.totals.samples'] == SAMPLES
    assert payload['sluice.dataset.window.downloads'] == m['dataset']['window']['downloads']
    assert not any(k.endswith(('diagnosis', 'remote')) for k in payload)
    assert all(isinstance(v, (int, float)) for v in payload.values())


def test_mlflow_without_a_run_or_installed(monkeypatch):
    idle = RecordingMlflow(active=False)
    monkeypatch.setitem(sys.modules, 'mlflow', idle)
    assert log_to_mlflow({'batches': 1}) is False
    assert idle.logged == []
    # A None entry makes `import mlflow` fail as if it were not installed.
    monkeypatch.setitem(sys.modules, 'mlflow', None)
    with pytest.raises(ImportError, match=r'needs the mlflow package \(pip install mlflow\)'):
        log_to_mlflow({'batches': 1})
    assert log_to_mlflow({'batches': 1}, required=False) is False


class RecordingWriter:
    def __init__(self):
        self.scalars = []

    def add_scalar(self, tag, value, step):
        self.scalars.append((tag, value, step))


def test_tensorboard_scalars():
    writer = RecordingWriter()
    n = log_to_tensorboard(writer, {'batches': 4, 'diagnosis': 'x',
                                    'window': {'wait_s': 0.25, 'wait_p95_s': 0.125}}, step=3)
    assert n == 3
    assert writer.scalars == [('sluice/batches', 4, 3), ('sluice/window/wait_p95_s', 0.125, 3),
                              ('sluice/window/wait_s', 0.25, 3)]


LINE = r'sluice: \d+ samples/s  (\d+\.\d|-) MB/s  waited \d+%'


def test_progress_line_over_a_loader(dataset):
    loader = sluice.StreamingDataLoader(dataset, batch_size=10, num_workers=0, collate_fn=ids)
    out = io.StringIO()
    shown = sluice.progress(loader, every=1e-9, stream=out)
    assert [i for b in shown for i in b] == list(range(SAMPLES))
    text = out.getvalue()
    # One line after each of the 10 batches and a last one, then a newline.
    assert text.count('\r') == 11 and text.endswith('\n') and '\n' not in text[:-1]
    lines = [s.rstrip() for s in text[:-1].split('\r')[1:]]
    assert all(re.fullmatch(LINE, s) for s in lines), lines
    # In-process dataset: its MB/s is known.
    assert '- MB/s' not in lines[0]
    assert shown.last['batches'] == 10


def test_progress_writes_only_every_period():
    class Source:
        calls = 0

        def metrics(self):
            Source.calls += 1
            return {'window': {'seconds': 2.0, 'samples': 300, 'wait_fraction': 0.25}}

    now = [100.0]
    out = io.StringIO()
    p = Progress(Source(), every=5.0, stream=out, clock=lambda: now[0])
    assert p.update() is None
    now[0] = 104.9
    assert p.update() is None and Source.calls == 0
    now[0] = 105.0
    assert p.update() == 'sluice: 150 samples/s  - MB/s  waited 25%'
    assert out.getvalue() == '\rsluice: 150 samples/s  - MB/s  waited 25%'
    assert p.update() is None
    with pytest.raises(ValueError, match='every must be > 0 seconds, got 0'):
        Progress(Source(), every=0)


def test_prometheus_file_read_by_prometheus_client(tmp_path):
    remote = str(tmp_path / 'remote')
    write_remote(remote)
    ds = sluice.StreamingDataset(remote=remote, local=str(tmp_path / 'local'), batch_size=10,
                                 shuffle=False)
    assert len(list(ds)) == SAMPLES
    path = ds.write_prometheus(str(tmp_path))
    families = {f.name: f for f in
                text_string_to_metric_families(pathlib.Path(path).read_text())}
    pid = str(os.getpid())

    def values(name):
        return {tuple(sorted(s.labels.items())): s.value for s in families[name].samples}

    # The parser names a counter's family without its _total suffix.
    assert families['sluice_samples'].type == 'counter'
    assert values('sluice_samples') == {(('process', pid),): SAMPLES}
    shards = len([f for f in os.listdir(remote) if f.startswith('shard.')])
    assert values('sluice_downloads') == {(('process', pid),): shards}
    assert values('sluice_cache_evictions') == {(('process', pid),): 0}
    waits = values('sluice_wait_seconds')
    assert sorted(dict(k)['cause'] for k in waits) == \
        ['cache_room', 'decode', 'download', 'other', 'peer_download']
    assert all(v >= 0 for v in waits.values())
    assert families['sluice_cache_bytes'].type == 'gauge'


def test_progress_over_a_dataset_shows_its_mb_per_s(tmp_path):
    remote = str(tmp_path / 'remote')
    write_remote(remote)
    ds = sluice.StreamingDataset(remote=remote, local=str(tmp_path / 'local'), batch_size=10,
                                 shuffle=False)
    out = io.StringIO()
    assert [s['id'] for s in sluice.progress(ds, every=1e-9, stream=out)] == list(range(SAMPLES))
    lines = [s.rstrip() for s in out.getvalue()[:-1].split('\r')[1:]]
    assert len(lines) == SAMPLES + 1
    assert all(re.fullmatch(LINE, s) and '- MB/s' not in s for s in lines), lines


def test_importing_sluice_imports_no_sink_tool():
    import subprocess
    code = ('import sys, sluice, sluice.metrics_sinks; '
            'print(sorted(m for m in sys.modules if m.split(".")[0] in '
            '("mlflow", "tensorboard", "prometheus_client") or m == "torch.utils.tensorboard"))')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True)
    assert out.stdout == '[]\n'
