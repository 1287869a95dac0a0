"""StreamingDataLoader: a torch DataLoader that counts the samples it has
yielded, so its state_dict resumes a StreamingDataset mid-epoch (Mosaic's)."""
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


class StreamingDataLoader(DataLoader):
    """DataLoader with state_dict() / load_state_dict() as Mosaic's."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.num_samples_yielded = 0

    def __iter__(self):
        self.num_samples_yielded = 0
        for batch in super().__iter__():
            self.num_samples_yielded += _batch_size(batch)
            yield batch

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
