"""Ray Data reads a Sluice or Mosaic dataset in parallel read tasks:

    import sluice.ray
    ds = sluice.ray.read_sluice('s3://bucket/data', local='/cache/data')
    # or ray.data.read_datasource(sluice.ray.SluiceDatasource(remote, local))

The driver opens the dataset through the engine once and asks it for the
shard table (samples per shard, in global shard order); the read tasks get
runs of whole shards, contiguous and balanced by samples, so no two tasks
read a shard. Task k opens the dataset through the engine in its Ray
worker and reads its samples [first, end) as the engine's one-process,
unshuffled order gives them (sample ids in order; checked), in column
batches (sluice.column_batches), fetching its own shards into `local`
and, near its end, what the engine's prefetch window (`predownload`)
opens of the next run's first shards (on one node the next task finds
them cached; on another node that is a few shards fetched twice). The rows are
every sample of the dataset once, in id order with Ray's preserve_order;
shuffling is Ray's (random_shuffle, randomize_block_order), not the
epoch planner's.

Columns: fixed-size MDS columns (int, float, ndarray:DTYPE:SHAPE) are
numpy arrays as Ray converts them (a shaped ndarray is Ray's tensor
column), 'str' and 'bytes' Arrow large_string / large_binary built on the
engine's copied bytes, any other column the Python values the package
decodes (json, pkl, images...), converted by Ray.

This module imports ray; `import sluice` does not import it.
"""
import functools

import numpy as np
import pyarrow as pa
from ray.data.block import BlockAccessor, BlockMetadata
from ray.data.context import DataContext
from ray.data.datasource import Datasource, ReadTask

import ray.data
from sluice.column_batches import (SAMPLE_ID_KEY, ListColumn, ValueColumn, batch_length,
                                   engine_batches)
from sluice.dataset import StreamingDataset
from sluice.formats import field_decoder, holds_stored_bytes

__all__ = ['SluiceDatasource', 'read_sluice']

# StreamingDataset's arguments that say what is read and how it is fetched.
# Those that shape an epoch (shuffle, epoch_size, sampling, world, mixing,
# packing) have no meaning for a read of the whole dataset.
_READ_ARGUMENTS = ('download_retry', 'download_timeout', 'validate_hash', 'keep_zip',
                   'predownload', 'cache_limit', 'allow_unsafe_types', 'columns')

# Samples per engine call of a read task (a block is one or more of them).
_BATCH = 1024
_DEFAULT_BLOCK_BYTES = 128 << 20


class _OnePass(StreamingDataset):
    """A read of one pass: the engine opens nothing of a next epoch when
    the last run's task nears the end (those first shards are the first
    task's)."""
    _engine_keys = {'prefetch_next_epoch': False}


def _open(args):
    """The dataset in the order its tasks read: unshuffled, one canonical
    node, as one process alone (whatever RANK / WORLD_SIZE a Ray worker
    inherits)."""
    return _OnePass(shuffle=False, num_canonical_nodes=1, world=(0, 1), **args)


def _shard_runs(samples_per_shard, parallelism):
    """[(first shard, end shard, first sample, end sample)]: min(parallelism,
    shards with samples) runs of whole shards, contiguous, covering every
    shard, each with samples; run j ends at the shard boundary nearest to
    j equal shares of the samples (empty shards go with the run after
    them, the last run's trailing ones with it)."""
    samples = np.asarray(samples_per_shard, dtype=np.int64)
    full = np.flatnonzero(samples)  # the shards with samples
    if not len(full):
        return []
    sums = np.cumsum(samples[full])
    total, m = int(sums[-1]), len(full)
    n = max(1, min(int(parallelism), m))
    cuts = [0]  # runs j covers full[cuts[j]:cuts[j + 1]]
    for j in range(1, n):
        target = total * j / n
        k = int(np.searchsorted(sums, target))  # the first k + 1 of them reach it
        if k > 0 and target - sums[k - 1] <= sums[k] - target:
            k -= 1
        cuts.append(min(max(k + 1, cuts[-1] + 1), m - (n - j)))
    cuts.append(m)
    runs = []
    for j in range(n):
        first_shard = 0 if j == 0 else int(full[cuts[j]])
        end_shard = len(samples) if j == n - 1 else int(full[cuts[j + 1]])
        first = int(sums[cuts[j] - 1]) if cuts[j] else 0
        runs.append((first_shard, end_shard, first, int(sums[cuts[j + 1] - 1])))
    return runs


class SluiceDatasource(Datasource):
    """A Ray Datasource over one Sluice / Mosaic dataset: `remote` (any
    store URL, or a folder) cached in `local`, or `local` read in place;
    `split` a sub-folder. Keyword arguments: StreamingDataset's that say
    what is read and how it is fetched (download_retry,
    download_timeout, validate_hash, keep_zip, predownload, cache_limit,
    allow_unsafe_types, columns). The dataset is opened here (an error
    names what could not be read) and again in each read task's worker.
    Pickled to the tasks: its arguments and shard table only. num_shards:
    the dataset's shards (global, as the engine numbers them)."""

    def __init__(self, remote=None, local=None, split=None, **dataset_args):
        super().__init__()
        refused = sorted(set(dataset_args) - set(_READ_ARGUMENTS))
        if refused:
            raise TypeError(f'SluiceDatasource: {refused} shape an epoch of a StreamingDataset; '
                            f'a Ray read reads every sample once (shuffle with Ray\'s '
                            f'random_shuffle). Read arguments: {list(_READ_ARGUMENTS)}')
        self._args = dict(dataset_args, remote=remote, local=local, split=split)
        dataset = _open(self._args)
        try:
            self._samples_per_shard = np.asarray(dataset.samples_per_shard, dtype=np.int64)
        finally:
            dataset._engine.close()
        # What the tasks' errors name: the cache or dataset folder, not the
        # remote (a URL may carry a signature in its query).
        self._where = local if local is not None else "the remote's default cache folder"
        self.num_shards = len(self._samples_per_shard)

    def get_name(self):
        return 'Sluice'

    def estimate_inmemory_data_size(self):
        return None

    def shard_runs(self, parallelism):
        """What get_read_tasks deals: [(first shard, end shard, first
        sample, end sample)], one per read task."""
        return _shard_runs(self._samples_per_shard, parallelism)

    def get_read_tasks(self, parallelism, per_task_row_limit=None, data_context=None):
        block_bytes = getattr(data_context or DataContext.get_current(),
                              'target_max_block_size', None) or _DEFAULT_BLOCK_BYTES
        tasks = []
        for first_shard, end_shard, first, end in self.shard_runs(parallelism):
            metadata = BlockMetadata(num_rows=end - first, size_bytes=None, input_files=None,
                                     exec_stats=None)
            read = functools.partial(_read_samples, self._args, self._where, first, end,
                                     block_bytes)
            tasks.append(ReadTask(read, metadata, per_task_row_limit=per_task_row_limit))
        return tasks


def read_sluice(remote=None, local=None, *, split=None, override_num_blocks=None,
                ray_remote_args=None, concurrency=None, **dataset_args):
    """A ray.data.Dataset of every sample of the dataset at `remote` /
    `local` once (see SluiceDatasource), read by up to
    `override_num_blocks` tasks (Ray's default when None), each reading
    whole shards of its own. `ray_remote_args` and `concurrency` are
    ray.data.read_datasource's."""
    options = {k: v for k, v in (('override_num_blocks', override_num_blocks),
                                 ('ray_remote_args', ray_remote_args),
                                 ('concurrency', concurrency)) if v is not None}
    return ray.data.read_datasource(SluiceDatasource(remote, local, split, **dataset_args),
                                    **options)


def _read_samples(args, where, first, end, block_bytes):
    """A read task: samples [first, end) of the dataset as Arrow tables of
    about `block_bytes` each."""
    dataset = _open(args)
    engine = dataset._engine
    try:
        convert = _Converter(engine)
        ids = SAMPLE_ID_KEY not in engine.column_names
        expected = first
        tables, held = [], 0
        for batch in engine_batches(engine, 0, first, 0, 1, _BATCH, with_ids=ids,
                                    limit=end - first):
            got = batch_length(batch)
            if ids:
                # The one-process unshuffled order is the ids in order; a
                # task that read others would duplicate or lose samples.
                sample_ids = batch.pop(SAMPLE_ID_KEY)
                if not np.array_equal(sample_ids, np.arange(expected, expected + got)):
                    raise RuntimeError(f'sluice.ray: {where}: the engine gave samples '
                                       f'{sample_ids[0]}..{sample_ids[-1]} where '
                                       f'{expected}..{expected + got - 1} were to be read')
            expected += got
            table = convert(batch)
            tables.append(table)
            held += table.nbytes
            if held >= block_bytes:
                yield pa.concat_tables(tables)
                tables, held = [], 0
        if tables:
            yield pa.concat_tables(tables)
        if expected != end:
            raise RuntimeError(f'sluice.ray: {where}: the read of samples {first}..{end - 1} '
                               f'ended after {expected - first}')
    finally:
        engine.close()


class _Converter:
    """A batch of engine_batches (column -> array) -> an Arrow table."""

    def __init__(self, engine):
        self._names = engine.column_names
        stored = holds_stored_bytes(engine.format)
        self._kinds = {}
        for name, enc in zip(engine.column_names, engine.column_encodings):
            if stored and enc == 'str':
                self._kinds[name] = pa.large_string()
            elif stored and enc == 'bytes':
                self._kinds[name] = pa.large_binary()
            else:
                self._kinds[name] = field_decoder(engine.format, enc, name)

    def __call__(self, batch):
        native, arrow = {}, {}
        for name, column in batch.items():
            kind = self._kinds[name]
            if isinstance(kind, pa.DataType):
                arrow[name] = _var_array(kind, column)
            elif isinstance(column, np.ndarray):
                native[name] = column  # a fixed-size column: numbers, tensors
            elif isinstance(column, ValueColumn):  # Parquet's fixed-width values
                arrow[name] = pa.array(column.values, mask=column.nulls)
            elif isinstance(column, ListColumn):  # Parquet's packed lists
                arrow[name] = pa.LargeListArray.from_arrays(
                    column.offsets, pa.array(column.values, mask=column.element_nulls),
                    mask=None if column.nulls is None else pa.array(column.nulls))
            else:  # the fields' bytes (None for a null), as the package decodes them
                native[name] = [kind(f) for f in column.to_list()]
        table = BlockAccessor.batch_to_block(native) if native else None
        columns = [arrow[n] if n in arrow else table.column(n) for n in self._names]
        return pa.Table.from_arrays(columns, names=self._names)


def _var_array(kind, column):
    """A VarColumn's fields as one Arrow array of `kind` over its buffers
    (strings checked as UTF-8, as decoding them would)."""
    count = len(column.offsets) - 1
    array = pa.Array.from_buffers(kind, count, [None, pa.py_buffer(column.offsets),
                                                pa.py_buffer(column.data)])
    if kind == pa.large_string():
        array.validate(full=True)
    return array

