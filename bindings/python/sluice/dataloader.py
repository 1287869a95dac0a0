"""StreamingDataLoader: a torch DataLoader that counts the samples it has
yielded, so its state_dict resumes a StreamingDataset mid-epoch (Mosaic's),
and times how long the training loop waits for each batch (metrics())."""
import math
import sys
import time
from array import array

from torch.utils.data import DataLoader

from sluice.column_batches import ColumnBatches, batch_length
from sluice.dataset import StreamingDataset
from sluice.metrics_sinks import log_to_mlflow

__all__ = ['StreamingDataLoader']


def _batch_size(batch):
    if hasattr(batch, 'shape') and len(getattr(batch, 'shape', ())) > 0:
        return batch.shape[0]
    if isinstance(batch, (list, tuple)):
        return _batch_size(batch[0]) if batch and not isinstance(batch[0], (str, bytes)) and \
            hasattr(batch[0], '__len__') else len(batch)
    if isinstance(batch, dict):
        return _batch_size(next(iter(batch.values())))
    return 1


def _percentile(ordered, q):
    """Nearest-rank percentile of an ascending sequence, 0.0 when empty."""
    if not ordered:
        return 0.0
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


class _Waits:
    """The caller's waits for batches: totals since the loader was made
    (across epochs), and the window since the previous metrics() call (each
    batch's wait, 8 bytes a batch until that call). A plain object: torch's
    DataLoader checks every attribute set, which would cost per batch."""
    __slots__ = ('batches', 'samples', 'wait_s', 'last', 'window', 'window_samples',
                 'window_start')

    def __init__(self):
        self.batches = self.samples = 0
        self.wait_s = 0.0
        self.last = None
        self.window = array('d')
        self.window_samples = 0
        # The first iteration's start until metrics() is first called.
        self.window_start = None

    def add(self, waited, size):
        self.batches += 1
        self.samples += size
        self.wait_s += waited
        self.last = waited
        self.window.append(waited)
        self.window_samples += size

    def take_window(self, now):
        """The metrics() dict without 'dataset'; starts the next window at `now`."""
        waits = sorted(self.window)
        seconds = now - self.window_start if self.window_start is not None else 0.0
        wait_s = math.fsum(waits)
        out = {
            'batches': self.batches, 'samples': self.samples, 'wait_s': self.wait_s,
            'window': {
                'seconds': seconds, 'batches': len(waits), 'samples': self.window_samples,
                'wait_s': wait_s,
                'wait_p50_s': _percentile(waits, 0.50), 'wait_p95_s': _percentile(waits, 0.95),
                'wait_fraction': wait_s / seconds if seconds > 0 else 0.0,
                'samples_per_s': self.window_samples / seconds if seconds > 0 else 0.0,
            },
        }
        self.window = array('d')
        self.window_samples = 0
        self.window_start = now
        return out


class StreamingDataLoader(DataLoader):
    """DataLoader with state_dict() / load_state_dict() as Mosaic's, and
    metrics(): the batches it yielded and how long the caller waited for
    them (docs/metrics.rst). While an MLflow run is active (mlflow imported
    by the user), each batch's wait and size go to it as sluice.fetch_s and
    sluice.batch_samples, at step = batches yielded by the loader."""

    # False in a subclass that logs its own batches (FileDataLoader).
    _logs_batches_to_mlflow = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.num_samples_yielded = 0
        self._waits = _Waits()

    @property
    def last_wait_s(self):
        """Seconds the caller waited for the latest batch (None before one)."""
        return self._waits.last

    def __iter__(self):
        self.num_samples_yielded = 0
        waits = self._waits
        start = time.perf_counter()
        if waits.window_start is None:
            waits.window_start = start
        # Each batch's wait goes to the user's active MLflow run, as the
        # raw-file loader's does: looked for once a pass, and only among the
        # modules the user imported (never importing mlflow here).
        mlflow = sys.modules.get('mlflow')
        to_mlflow = self._logs_batches_to_mlflow and mlflow is not None and \
            mlflow.active_run() is not None
        # Starting the iterator (forking workers, their first fetches) is
        # time the caller waits for the first batch, so it counts there.
        batches = super().__iter__()
        # ColumnBatches' batches are dicts of columns (some several arrays).
        count = batch_length if isinstance(self.dataset, ColumnBatches) else _batch_size
        while True:
            try:
                batch = next(batches)
            except StopIteration:
                return
            size = count(batch)
            waited = time.perf_counter() - start
            waits.add(waited, size)
            if to_mlflow:
                log_to_mlflow({'fetch_s': waited, 'batch_samples': size}, step=waits.batches,
                              required=False)
            self.num_samples_yielded += size
            yield batch
            start = time.perf_counter()

    def metrics(self):
        """This loader's view, as a plain dict: 'batches', 'samples' and
        'wait_s' (seconds the caller spent in next() for them) since the
        loader was made; 'window', the same since the previous metrics() call
        with the per-batch wait's p50/p95; and 'dataset', the dataset's own
        metrics(): this process's with num_workers=0, else summed over the
        workers (scope 'job': each worker's record, written at most once a
        second and when its pass ends). Each call starts a new window (the
        dataset's too). Fields: docs/metrics.rst."""
        out = self._waits.take_window(time.perf_counter())
        dataset = self._streaming_dataset()
        if dataset is not None:
            out['dataset'] = dataset.metrics('process' if self.num_workers == 0 else 'job')
        return out

    def _streaming_dataset(self, resuming=False):
        """The StreamingDataset this loader reads, directly or through
        ColumnBatches (whose batch size must then be the dataset's when
        `resuming`); None for any other dataset."""
        if isinstance(self.dataset, StreamingDataset):
            return self.dataset
        if isinstance(self.dataset, ColumnBatches):
            return self.dataset.resumable_dataset() if resuming else self.dataset.dataset
        return None

    def state_dict(self):
        dataset = self._streaming_dataset(resuming=True)
        if dataset is None:
            return None
        # Packed rows on another world shape need this run's workers.
        dataset.record_pack_workers(self.num_workers)
        return dataset.state_dict(dataset._job_samples(self.num_samples_yielded), False)

    def step_samples(self, steps, epoch=0, sample_in_epoch=0, world=None, rank=None):
        """The samples this job's steps read with this loader's workers:
        StreamingDataset.step_samples (its arguments, workers=num_workers)."""
        if not isinstance(self.dataset, StreamingDataset):
            raise TypeError(f'step_samples: the loader reads a {type(self.dataset).__name__}, '
                            f'not a StreamingDataset whose batches are its samples')
        return self.dataset.step_samples(steps, epoch, sample_in_epoch, world, self.num_workers,
                                         rank)

    def load_state_dict(self, obj, **kwargs):
        # The dataset keeps the resumed offset; this loader counts only what
        # it yields from here (a state_dict before iterating says the offset
        # once, as Mosaic's). kwargs: the dataset's (adapt, skip_steps,
        # skip_samples, skip_sample_ids).
        dataset = self._streaming_dataset(resuming=True)
        if dataset is not None:
            dataset.load_state_dict(obj, **kwargs)
