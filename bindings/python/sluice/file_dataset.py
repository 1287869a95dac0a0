"""Raw-file datasets: stream unconverted files (images, audio, text) from a
folder (local or FUSE, e.g. /Volumes/...), any store URL, or a manifest,
with the engine's node-wide cache, deterministic partitioning and exact
mid-epoch resumption, and no conversion to shards.

    ds = StreamingFileDataset(remote='s3://bucket/images', local='/tmp/cache',
                              glob='*.jpg', shuffle=True, batch_size=32)
    loader = file_dataloader(ds, batch_size=32, on_batch=print)

Every file is one sample (the planner's unit, as a shard's sample is), so
files are shared among nodes, ranks and DataLoader workers exactly as
StreamingDataset shares samples: each file once per epoch, equal counts per
rank, any num_workers on any rank, state_dict/load_state_dict as Mosaic's.
The order is the paths sorted bytewise; names starting with '_' or '.'
(_SUCCESS, _temporary/, .crc) are left out. A remote's listing is made once
per node and kept in <local>/.sluice/listing.json (delete it to list anew).
"""

from sluice.dataset import Stream, StreamingDataset
from sluice.metrics_sinks import log_to_mlflow

__all__ = ['StreamingFileDataset', 'FileDataLoader', 'file_dataloader']

_OUTPUTS = ('path', 'bytes')


class _FileStream(Stream):
    """A Stream whose files are its samples; always read through the engine
    (a local folder without a remote is read in place)."""

    def __init__(self, *, remote, local, split, glob, manifest, **kwargs):
        if remote is None and local is None:
            raise ValueError('StreamingFileDataset needs remote (a folder, store URL) or local '
                             '(a folder read in place)')
        if remote is None:
            # A folder read in place: the engine walks it and reads its files.
            super().__init__(remote=local, local=local, split=split, **kwargs)
            self.remote = None
            self.local = str(local)
        else:
            super().__init__(remote=remote, local=local, split=split, **kwargs)
        # The engine checks both (one rule, in C++).
        self.engine_keys = {'files': {'glob': glob, 'manifest': manifest}}


class _FileReads:
    """The engine as StreamingDataset's iteration sees it, yielding each
    file's path or bytes (transformed) instead of the sample dict; every other
    call goes to the engine. Paths need no copy of the bytes: the planned ids
    come from the engine (prefetching as for shards), and each names the file
    that its batch keeps open."""

    def __init__(self, engine, output, transform):
        self._inner = engine
        self._output = output
        self._transform = transform

    def __getattr__(self, name):
        if name.startswith('__') or name == '_inner':
            raise AttributeError(name)
        return getattr(self._inner, name)

    def iterate(self, epoch, sample_in_epoch, worker, num_workers):
        if self._output == 'path':
            values = map(self._inner.sample_path,
                         self._inner.iterate_ids(epoch, sample_in_epoch, worker, num_workers))
        else:
            values = (sample['data'] for sample in
                      self._inner.iterate(epoch, sample_in_epoch, worker, num_workers))
        return values if self._transform is None else map(self._transform, values)


class StreamingFileDataset(StreamingDataset):
    """A torch IterableDataset over a dataset's files.

    Yields each file's local path (`output='path'`: the cached copy, or the
    file itself when read in place) or its bytes (`output='bytes'`), passed
    through `transform` when given (e.g. `lambda p: PIL.Image.open(p)`). With
    a cache_limit, a path stays valid until the next sample is asked for
    (the file may be evicted after): open it in `transform`, or use bytes.

    `glob`: a pattern or a list (fnmatch; without '/' it matches the file's
    name at any depth, with '/' the whole relative path). `manifest`: the
    name, under the remote (or folder), of a file naming the dataset's files,
    one per line: a relative path or {"path": ..., "size": ...}; for stores
    that cannot list (https://). `skip_missing`: a file missing or unreadable
    when fetched is skipped and counted (metrics()['files_skipped']) instead
    of raising an error that names it. The other arguments are
    StreamingDataset's.
    """

    def __init__(self, *, remote=None, local=None, split=None, glob=None, manifest=None,
                 output='path', transform=None, skip_missing=False, download_retry=2,
                 download_timeout=60, epoch_size=None, predownload=None, cache_limit=None,
                 sampling_method='balanced', sampling_granularity=1, partition_algo='relaxed',
                 num_canonical_nodes=None, batch_size=None, shuffle=False, shuffle_algo='py1e',
                 shuffle_seed=9176, shuffle_block_size=None, replication=None,
                 metrics_retention_s=None):
        if output not in _OUTPUTS:
            raise ValueError(f'output must be one of {_OUTPUTS}, not {output!r}')
        self.output = output
        self.transform = transform
        self._engine_keys = {'skip_missing_files': bool(skip_missing)}
        stream = _FileStream(remote=remote, local=local, split=split, glob=glob,
                             manifest=manifest, download_retry=download_retry,
                             download_timeout=download_timeout)
        super().__init__(streams=[stream], epoch_size=epoch_size, predownload=predownload,
                         cache_limit=cache_limit, sampling_method=sampling_method,
                         sampling_granularity=sampling_granularity, partition_algo=partition_algo,
                         num_canonical_nodes=num_canonical_nodes, batch_size=batch_size,
                         shuffle=shuffle, shuffle_algo=shuffle_algo, shuffle_seed=shuffle_seed,
                         shuffle_block_size=shuffle_block_size, replication=replication,
                         metrics_retention_s=metrics_retention_s)
        self._engine = _FileReads(self._engine, output, transform)

    def _reads_through_getitem(self):
        """Iteration reads through __getitem__ only for a subclass that
        overrides it (or get_item); this class's own reads are batched."""
        cls = type(self)
        return (cls.__getitem__ is not StreamingDataset.__getitem__ or
                cls.get_item is not StreamingFileDataset.get_item)

    def get_item(self, idx):
        """File `idx` (in the dataset's order): its path or bytes, transformed."""
        idx = int(idx)
        if not -self.num_samples <= idx < self.num_samples:
            raise IndexError(f'file {idx} out of range: the dataset has {self.num_samples}')
        idx %= self.num_samples
        if self.output == 'path':
            # Fetches the file into the cache if needed, then names it.
            self._engine._inner.get(idx)
            value = self._engine.sample_path(idx)
        else:
            value = self._engine._inner.get(idx)['data']
        return self.transform(value) if self.transform is not None else value

    def path_of(self, idx):
        """Where file `idx` is (or will be) on this node, without fetching it."""
        return self._engine.sample_path(int(idx))

    def metrics(self, scope=None):
        """What this process fetched: files and bytes downloaded, cache hits,
        evictions, seconds waited for files, files skipped. With a `scope`
        ('process', 'job' or 'node'), the engine's full metrics of that scope
        instead, as StreamingDataset.metrics gives them."""
        if scope is not None:
            return super().metrics(scope)
        c = self._engine.counters()
        return {'files_downloaded': c['shards_downloaded'],
                'bytes_downloaded': c['bytes_downloaded'],
                'cache_hits': c['cache_hits'], 'files_evicted': c['shards_evicted'],
                'wait_s': c['consumer_wait_ns'] / 1e9, 'files_skipped': c['shards_skipped']}


def _batch_bytes(batch, output):
    import os
    items = batch if isinstance(batch, (list, tuple)) else [batch]
    if output == 'bytes':
        return sum(len(b) for b in items if isinstance(b, (bytes, bytearray)))
    return sum(os.path.getsize(p) for p in items if isinstance(p, str) and os.path.exists(p))


try:
    from sluice.dataloader import StreamingDataLoader
except ImportError:  # torch not installed
    StreamingDataLoader = None
FileDataLoader = None

if StreamingDataLoader is not None:
    class FileDataLoader(StreamingDataLoader):
        """A StreamingDataLoader that measures each batch: the seconds the
        training loop waited for it and the files and bytes it holds. Each
        batch's metrics go to `on_batch(metrics)` when given and, when
        `mlflow` is importable and a run is active, to mlflow.log_metrics as
        sluice.fetch_s and sluice.batch_bytes (sluice.metrics_sinks.log_to_mlflow);
        `last_metrics` holds the latest."""

        _logs_batches_to_mlflow = False  # it logs its own, with the bytes

        def __init__(self, dataset, *args, on_batch=None, **kwargs):
            super().__init__(dataset, *args, **kwargs)
            self.on_batch = on_batch
            self.last_metrics = None

        def __iter__(self):
            output = getattr(self.dataset, 'output', 'path')
            for step, batch in enumerate(super().__iter__()):
                # The wait StreamingDataLoader timed for this batch.
                waited = self.last_wait_s
                files = len(batch) if isinstance(batch, (list, tuple)) else 1
                self.last_metrics = {'batch': step, 'fetch_s': waited, 'files': files,
                                     'bytes': _batch_bytes(batch, output)}
                if self.on_batch is not None:
                    self.on_batch(dict(self.last_metrics))
                log_to_mlflow({'fetch_s': waited, 'batch_bytes': self.last_metrics['bytes']},
                              step=step, required=False)
                yield batch


def _identity(batch):
    return batch


def file_dataloader(dataset, batch_size=None, num_workers=6, prefetch_factor=4,
                    on_batch=None, **kwargs):
    """A FileDataLoader with I/O-friendly defaults for small files: 6 workers,
    4 batches in flight per worker, persistent workers, and batches as plain
    lists of paths or bytes (no tensor collation). `batch_size` defaults to
    the dataset's."""
    if FileDataLoader is None:
        raise ImportError('file_dataloader needs torch')
    kwargs.setdefault('collate_fn', _identity)
    if num_workers > 0:
        kwargs.setdefault('prefetch_factor', prefetch_factor)
        kwargs.setdefault('persistent_workers', True)
    return FileDataLoader(dataset, batch_size=batch_size or dataset.batch_size or 1,
                          num_workers=num_workers, on_batch=on_batch, **kwargs)
