"""Stream: one sub-dataset of a StreamingDataset, with Mosaic's arguments
and weights (proportion / repeat / choose, resolved once a dataset is built),
where its files are (a cache folder, or a local folder read in place), and
Mosaic's streams_registry."""
import hashlib
import os
import tempfile

import numpy as np

from sluice._lib import lib
from sluice.plan import Plan
from sluice.remote import local_path

__all__ = ['Stream']


def _is_remote(remote):
    """A store URL (not a local path or file://), by the engine's one rule."""
    return remote is not None and lib.sluice_is_store_url(os.fsencode(str(remote))) == 1


def _fetched(remote, local):
    """Whether the engine fetches a stream's shards into `local` (from a store,
    or copied from another local folder, as Mosaic copies them); else the
    folder is read in place."""
    if remote is None or local is None:
        return False
    return _is_remote(remote) or os.path.abspath(local_path(remote)) != os.path.abspath(local)


def _default_local(remote, split):
    """Mosaic's cache folder for a remote given without `local`: the temp
    folder / blake2s-128 of the remote URL / split. Unlike Mosaic, an existing
    one is reused rather than refused: the cache is safe to share and resume."""
    digest = hashlib.blake2s(str(remote).encode('utf-8'), digest_size=16).hexdigest()
    return os.path.join(tempfile.gettempdir(), digest, split or '')


def _local_path(remote, local):
    """The stream's folder: its cache, or the folder read in place."""
    if remote is not None and not _fetched(remote, local):
        return local_path(remote)  # a local remote is read in place
    if local is None:
        raise ValueError('a stream needs local (or a local remote)')
    return local


def _check_no_folder(split):
    """A stream given neither remote nor local: Mosaic's default folder for
    it is the temporary folder itself (+ split), refused when it exists with
    Mosaic's FileExistsError; else nothing names a dataset (Mosaic's
    ValueError)."""
    folder = os.path.join(tempfile.gettempdir(), '', split or '')
    if os.path.exists(folder):
        raise FileExistsError(
            f'Could not create a temporary local directory {folder} because it already exists. '
            f'If you want to reuse the locally cached dataset, explicitly pass in a unique local '
            f'directory with the `local` argument. Otherwise, delete this directory and retry.')
    raise ValueError('`remote` and/or `local` path must be provided')


def _columns(columns):
    """`columns` as a list of names, or None."""
    if columns is None:
        return None
    if isinstance(columns, (str, bytes)) or not all(isinstance(c, str) for c in columns):
        raise TypeError(f'`columns` must be a list of column names, got {columns!r}')
    columns = list(columns)
    if not columns:
        raise ValueError('`columns` must name at least one column (None reads them all)')
    return columns


class Stream:
    """One sub-dataset of a StreamingDataset, with Mosaic's arguments. At most
    one of proportion / repeat / choose."""

    def __init__(self, *, remote=None, local=None, split=None, proportion=None, repeat=None,
                 choose=None, download_retry=None, download_timeout=None, validate_hash=None,
                 keep_zip=None, columns=None, manifest=None, single_pass=None):
        given = {k: v for k, v in (('proportion', proportion), ('repeat', repeat),
                                   ('choose', choose)) if v is not None}
        if len(given) > 1:
            raise ValueError('At most one of `proportion`, `repeat`, and `choose` may be '
                             'specified; the others are derived')
        for key, value in given.items():
            if value < 0:
                raise ValueError(f'`{key}` must be non-negative')
        if download_retry is not None and download_retry < 0:
            raise ValueError('`download_retry` must be non-negative')
        if download_timeout is not None and download_timeout <= 0:
            raise ValueError('`download_timeout` must be positive')
        # The weight the user gave (the planner's input); the public
        # proportion / repeat / choose hold the resolved values once a
        # dataset is built over this stream, as Mosaic's do.
        self.weights = given
        if local is None and remote is None:
            _check_no_folder(split)
        if local is None and remote is not None:
            # Mosaic caches any remote given without `local`, a local folder
            # too (then its shards are copied, as Mosaic's are).
            local = _default_local(remote, split)
        self.remote = remote
        self.fetched = _fetched(remote, local)
        self.local = _local_path(remote, local)
        self.split = split
        self.proportion = proportion
        self.repeat = repeat
        self.choose = choose
        self.download_retry = download_retry
        self.download_timeout = download_timeout
        self.validate_hash = validate_hash
        self.keep_zip = keep_zip
        # Sluice's extension: None takes the dataset's `single_pass`.
        self.single_pass = single_pass
        # Sluice's extensions of a Parquet stream: the columns to read (only
        # their column chunks are fetched) and the manifest naming its files
        # (for a remote that cannot list, such as https://); the engine checks
        # both and reads the manifest.
        self.columns = _columns(columns)
        self.manifest = manifest
        parquet = {k: v for k, v in (('columns', self.columns), ('manifest', manifest))
                   if v is not None}
        if parquet:
            self.engine_keys = {'parquet': parquet}

    def spec(self, shard_sizes):
        return dict(self.weights, shard_sizes=list(shard_sizes))

    @classmethod
    def validate_weights(cls, streams):
        """(relative, unspecified): whether the streams are weighted by
        proportion, and whether none has a weight. Mixing relative and
        absolute weights is Mosaic's ValueError."""
        relative = 'proportion' in streams[0].weights
        unspecified = True
        for i, stream in enumerate(streams):
            if len(stream.weights) > 1:
                raise ValueError(f'Streams must provide at most one of `proportion`, `repeat`, '
                                 f'or `choose` (error in stream {i})')
            if ('proportion' in stream.weights) != relative:
                raise ValueError(f'Relative (`proportion`) and absolute (`repeat`, `choose`, '
                                 f'none) stream weights are incompatible with each other (error '
                                 f'in stream {i})')
            unspecified = unspecified and not stream.weights
        return relative, unspecified

    @classmethod
    def apply_weights(cls, streams, samples_per_stream, choose_per_epoch, seed):
        """Resolves every stream's proportion, repeat and choose (the samples
        it gives an epoch) as Mosaic's; returns the epoch's sample count.
        The counts come from the planner (the engine owns the sampling rule)."""
        relative, unspecified = cls.validate_weights(streams)
        if choose_per_epoch and not relative and not unspecified:
            raise ValueError('Only provide `choose` when weighting streams relatively')
        samples = np.asarray(samples_per_stream, dtype=np.int64)
        if unspecified and not choose_per_epoch:
            choose = samples.copy()
        else:
            choose = _planned_choose(streams, samples, choose_per_epoch, seed)
        if relative:
            proportion = np.array([s.weights['proportion'] for s in streams], np.float64)
            proportion /= proportion.sum()
        elif unspecified and choose_per_epoch:
            proportion = samples.astype(np.float64)
            proportion /= proportion.sum()
        else:
            proportion = choose / choose.sum()
        repeat = choose / samples
        for stream, p, r, c in zip(streams, proportion, repeat, choose):
            stream.proportion, stream.repeat, stream.choose = p, r, c
        return int(choose.sum())


def _planned_choose(streams, samples, epoch_size, seed):
    """Samples per stream in an epoch: the planner's plan of one worker,
    unshuffled, over one shard per stream, counted by stream."""
    offsets = np.concatenate([[0], np.cumsum(samples)])
    config = {'streams': [dict(s.weights, shard_sizes=[int(n)]) for s, n in zip(streams, samples)],
              'epoch_size': epoch_size, 'shuffle_seed': seed, 'shuffle': False,
              'world': {'num_nodes': 1, 'ranks_per_node': 1, 'workers_per_rank': 1},
              'batch_size': 1, 'num_canonical_nodes': 1, 'initial_physical_nodes': 1,
              'batching_method': 'random', 'epoch': 0, 'sample_in_epoch': 0}
    ids = Plan(config).worker_ids(0, 0, 0)
    stream_of = np.searchsorted(offsets, ids, side='right') - 1
    return np.bincount(stream_of, minlength=len(streams)).astype(np.int64)


def registry_in_use():
    """Whether streams_registry exists yet: code that registers a stream
    class reaches it first, so until then 'stream' can only be Stream.
    (Importing catalogue costs ~50 ms, which a plain dataset should not pay.)"""
    return 'streams_registry' in globals()


def _streams_registry():
    """Mosaic's streams_registry ('stream' -> Stream), made on first use so
    that `catalogue` is needed only by code that uses registries."""
    registry = globals().get('streams_registry')
    if registry is None:
        from sluice.registry import create_registry
        registry = create_registry('streaming', 'streams_registry', entry_points=True,
                                   description='The streams registry is used for registering '
                                               'Stream classes.')
        registry.register('stream', func=Stream)
        globals()['streams_registry'] = registry
    return registry


def __getattr__(name):
    if name == 'streams_registry':
        return _streams_registry()
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
