"""StreamingDataLoader: a torch DataLoader that counts the samples it has
yielded, so its state_dict resumes a StreamingDataset mid-epoch (Mosaic's),
and times how long the training loop waits for each batch (metrics())."""
import math
import time
from array import array

from torch.utils.data import DataLoader

from sluice.dataset import StreamingDataset

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


class StreamingDataLoader(DataLoader):
    """DataLoader with state_dict() / load_state_dict() as Mosaic's, and
    metrics(): the batches it yielded and how long the caller waited for
    them (docs/metrics.rst)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.num_samples_yielded = 0
        # Since the loader was made, across epochs.
        self._batches = 0
        self._samples = 0
        self._wait_s = 0.0
        # The window since the previous metrics() call: each batch's wait (8
        # bytes a batch until the next call), its samples, and its start (the
        # first iteration's start when metrics() was not called yet).
        self._window_waits = array('d')
        self._window_samples = 0
        self._window_start = None
        self.last_wait_s = None

    def __iter__(self):
        self.num_samples_yielded = 0
        start = time.perf_counter()
        if self._window_start is None:
            self._window_start = start
        # Starting the iterator (forking workers, their first fetches) is
        # time the caller waits for the first batch, so it counts there.
        batches = super().__iter__()
        while True:
            try:
                batch = next(batches)
            except StopIteration:
                return
            waited = time.perf_counter() - start
            size = _batch_size(batch)
            self.num_samples_yielded += size
            self._batches += 1
            self._samples += size
            self._wait_s += waited
            self._window_waits.append(waited)
            self._window_samples += size
            self.last_wait_s = waited
            yield batch
            start = time.perf_counter()

    def metrics(self):
        """This loader's view, as a plain dict: 'batches', 'samples' and
        'wait_s' (seconds the caller spent in next() for them) since the
        loader was made; 'window', the same since the previous metrics() call
        with the per-batch wait's p50/p95; and 'dataset', the dataset's own
        metrics() when it reads in this process (num_workers=0). Each call
        starts a new window (the dataset's too). Fields: docs/metrics.rst."""
        now = time.perf_counter()
        waits = sorted(self._window_waits)
        seconds = now - self._window_start if self._window_start is not None else 0.0
        wait_s = math.fsum(waits)
        out = {
            'batches': self._batches, 'samples': self._samples, 'wait_s': self._wait_s,
            'window': {
                'seconds': seconds, 'batches': len(waits), 'samples': self._window_samples,
                'wait_s': wait_s,
                'wait_p50_s': _percentile(waits, 0.50), 'wait_p95_s': _percentile(waits, 0.95),
                'wait_fraction': wait_s / seconds if seconds > 0 else 0.0,
                'samples_per_s': self._window_samples / seconds if seconds > 0 else 0.0,
            },
        }
        self._window_waits = array('d')
        self._window_samples = 0
        self._window_start = now
        if self.num_workers == 0 and isinstance(self.dataset, StreamingDataset):
            out['dataset'] = self.dataset.metrics()
        return out

    def state_dict(self):
        if not isinstance(self.dataset, StreamingDataset):
            return None
        return self.dataset.state_dict(self.dataset._job_samples(self.num_samples_yielded), False)

    def load_state_dict(self, obj, **kwargs):
        # The dataset keeps the resumed offset; this loader counts only what
        # it yields from here (a state_dict before iterating says the offset
        # once, as Mosaic's). kwargs: the dataset's (adapt, skip_steps,
        # skip_samples).
        if isinstance(self.dataset, StreamingDataset):
            self.dataset.load_state_dict(obj, **kwargs)
