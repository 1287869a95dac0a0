"""A loader's metrics, logged through sluice.metrics_sinks to the real MLflow
(a local file-store run, read back with MlflowClient) and the real
TensorBoard (an event file from torch's SummaryWriter, read back with
TensorBoard's EventAccumulator); both pinned in requirements.txt. And the
loaders' own per-batch logging to an active run, for each dataset kind."""
import mlflow
from mlflow.tracking import MlflowClient
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from torch.utils.tensorboard import SummaryWriter

import sluice
from sluice.metrics_sinks import flatten, log_to_mlflow, log_to_tensorboard

SAMPLES = 60


def ids(batch):
    return [s['id'] for s in batch]


def two_windows(tmp_path):
    """A loader's metrics() after each of two epochs of 6 batches."""
    remote = str(tmp_path / 'remote')
    with sluice.MDSWriter(out=remote, columns={'id': 'int'}, size_limit=1 << 9) as w:
        for i in range(SAMPLES):
            w.write({'id': i})
    ds = sluice.StreamingDataset(remote=remote, local=str(tmp_path / 'local'), batch_size=10,
                                 shuffle=False)
    loader = sluice.StreamingDataLoader(ds, batch_size=10, num_workers=0, collate_fn=ids)
    out = []
    for _ in range(2):
        assert [i for b in loader for i in b] == list(range(SAMPLES))
        out.append(loader.metrics())
    return out


def test_mlflow_run_reads_back_the_loader_metrics(tmp_path, monkeypatch):
    first, second = two_windows(tmp_path)
    # A local file store: no server, no database package (MLflow 3 asks for
    # this opt-in to use one).
    monkeypatch.setenv('MLFLOW_ALLOW_FILE_STORE', 'true')
    mlflow.set_tracking_uri((tmp_path / 'mlruns').as_uri())
    with mlflow.start_run() as run:
        assert log_to_mlflow(first, step=0) is True
        assert log_to_mlflow(second, step=1) is True
    assert log_to_mlflow(second, step=2) is False  # no run active any more
    client = MlflowClient()

    def history(key):
        return [(m.step, m.value) for m in client.get_metric_history(run.info.run_id, key)]

    assert history('sluice.batches') == [(0, 6.0), (1, 12.0)]
    assert history('sluice.window.samples') == [(0, 60.0), (1, 60.0)]
    assert history('sluice.dataset.totals.samples') == [(0, 60.0), (1, 120.0)]
    assert history('sluice.window.wait_p95_s') == \
        [(0, first['window']['wait_p95_s']), (1, second['window']['wait_p95_s'])]
    logged = client.get_run(run.info.run_id).data.metrics
    assert set(logged) == set(flatten(second))


def test_tensorboard_event_file_reads_back_the_loader_metrics(tmp_path):
    first, second = two_windows(tmp_path)
    logdir = str(tmp_path / 'tb')
    writer = SummaryWriter(logdir)
    assert log_to_tensorboard(writer, first, 0) == len(flatten(first))
    log_to_tensorboard(writer, second, 1)
    writer.close()
    events = EventAccumulator(logdir)
    events.Reload()
    tags = events.Tags()['scalars']
    assert sorted(tags) == sorted(k.replace('.', '/') for k in flatten(second))
    assert [(e.step, e.value) for e in events.Scalars('sluice/batches')] == [(0, 6.0), (1, 12.0)]
    assert [(e.step, e.value) for e in events.Scalars('sluice/dataset/totals/samples')] == \
        [(0, 60.0), (1, 120.0)]
    # Stored as 32-bit floats.
    [wait0, wait1] = events.Scalars('sluice/window/wait_s')
    assert abs(wait0.value - first['window']['wait_s']) <= 1e-6 * max(1.0, wait0.value)


def test_every_dataset_kind_logs_its_batches_to_the_active_run(tmp_path, monkeypatch):
    """While a run is active, the loaders log each batch's wait and size by
    themselves, whatever the dataset: MDS shards, Parquet files, raw files
    (read back from the run, step by step)."""
    import pathlib
    import shutil

    from sluice.file_dataset import StreamingFileDataset, file_dataloader
    from sluice.parquet_dataset import load_parquet

    remote = str(tmp_path / 'mds')
    with sluice.MDSWriter(out=remote, columns={'id': 'int'}, size_limit=1 << 9) as w:
        for i in range(SAMPLES):
            w.write({'id': i})
    mds = sluice.StreamingDataset(remote=remote, local=str(tmp_path / 'mds_cache'),
                                  batch_size=10, shuffle=False)
    parquet_folder = tmp_path / 'parquet'
    parquet_folder.mkdir()
    data = pathlib.Path(__file__).resolve().parents[1] / 'data' / 'parquet'
    shutil.copy(data / 'hf_text.parquet', parquet_folder / 'a.parquet')
    parquet = load_parquet(data_files=str(parquet_folder), local=str(tmp_path / 'pq_cache'),
                           batch_size=2, shuffle=False)
    assert isinstance(parquet, sluice.StreamingDataset)
    files = tmp_path / 'files'
    files.mkdir()
    for i in range(12):
        (files / f'{i:02d}.bin').write_bytes(bytes([i]) * (i + 1))
    raw = StreamingFileDataset(local=str(files), glob='*.bin', output='bytes', batch_size=4)

    monkeypatch.setenv('MLFLOW_ALLOW_FILE_STORE', 'true')
    mlflow.set_tracking_uri((tmp_path / 'mlruns').as_uri())
    client = MlflowClient()

    def logged(loader, size_key):
        with mlflow.start_run() as run:
            batches = list(loader)
        history = {key: [(m.step, m.value)
                         for m in client.get_metric_history(run.info.run_id, key)]
                   for key in ('sluice.fetch_s', size_key)}
        return batches, history

    for ds, batch in ((mds, 10), (parquet, 2)):
        # A list of ints per batch: the loader counts its length.
        loader = sluice.StreamingDataLoader(ds, batch_size=batch, num_workers=0,
                                            collate_fn=lambda b: [len(s) for s in b])
        batches, history = logged(loader, 'sluice.batch_samples')
        steps = list(range(1, len(batches) + 1))
        assert [s for s, _ in history['sluice.batch_samples']] == steps
        assert [v for _, v in history['sluice.batch_samples']] == [float(len(b)) for b in batches]
        assert sum(map(len, batches)) == len(ds)
        assert [s for s, _ in history['sluice.fetch_s']] == steps
        assert all(v >= 0 for _, v in history['sluice.fetch_s'])
    batches, history = logged(file_dataloader(raw, num_workers=0), 'sluice.batch_bytes')
    assert [s for s, _ in history['sluice.batch_bytes']] == list(range(len(batches))) == \
        list(range(3))
    assert [v for _, v in history['sluice.batch_bytes']] == \
        [float(sum(map(len, b))) for b in batches]
    assert [s for s, _ in history['sluice.fetch_s']] == list(range(3))


def test_mlflow_takes_the_host_metrics_of_a_remote(s3, tmp_path, monkeypatch):
    # A dataset read from a remote has per-host metrics under its URL's key
    # ("http://127.0.0.1:<port>"): MLflow 3 refuses a name holding its '//'.
    local = tmp_path / 'out'
    with sluice.MDSWriter(out=(str(local), f'{s3}/hosts'), columns={'id': 'int'},
                          size_limit=1 << 9) as w:
        for i in range(SAMPLES):
            w.write({'id': i})
    ds = sluice.StreamingDataset(remote=f'{s3}/hosts', local=str(tmp_path / 'cache'),
                                 batch_size=10, shuffle=False)
    loader = sluice.StreamingDataLoader(ds, batch_size=10, num_workers=0, collate_fn=ids)
    assert [i for b in loader for i in b] == list(range(SAMPLES))
    metrics = loader.metrics()
    names = [n for n in flatten(metrics) if '.hosts.' in n and n.endswith('.requests')]
    assert names and all('//' not in n and ':' not in n for n in names), names
    monkeypatch.setenv('MLFLOW_ALLOW_FILE_STORE', 'true')
    mlflow.set_tracking_uri((tmp_path / 'mlruns').as_uri())
    with mlflow.start_run() as run:
        assert log_to_mlflow(metrics, step=0) is True
    logged = MlflowClient().get_run(run.info.run_id).data.metrics
    assert set(logged) == set(flatten(metrics))
    assert all(logged[n] == flatten(metrics)[n] > 0 for n in names)
