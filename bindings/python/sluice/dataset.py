"""StreamingDataset with Mosaic's constructor arguments.

Every stream is read through the engine (sluice/engine.py over the
sluice_stream_* C ABI): a remote's shards are fetched into its local cache,
a local folder is read in place. The engine plans each epoch (Mosaic's exact
order for the same seed and configuration) and yields this worker's samples,
work[node][rank][worker], as Mosaic's StreamingDataset does under torchrun
(RANK / WORLD_SIZE / LOCAL_WORLD_SIZE) and a torch DataLoader's workers.
Python only turns the engine's fields into Python values. Streams are in
sluice/stream.py, Mosaic's checks of index.json in sluice/dataset_index.py.
"""
import itertools
import os
import warnings

import numpy as np

from sluice import engine
from sluice import malloc_tuning
from sluice import packing as _packing
from sluice import stream as _stream
from sluice._lib import MissingIndexError  # noqa: F401 (public here)
from sluice.dataset_index import check_indexes, missing_local_index
from sluice.epoch_counters import MAX_WORKERS, SharedCounters, in_dataloader_worker
from sluice.local_files import write_file
from sluice.plan import Plan, default_num_canonical_nodes, plan_steps, recorded_mixture_rule
from sluice.shard_info import ShardInfos
from sluice.stream import Stream, _streams_registry
from sluice.world import World, world_option

try:
    from torch.utils.data import IterableDataset as _Base
except ImportError:  # torch is optional: then a plain iterable
    _Base = object

__all__ = ['Stream', 'StreamingDataset']


def __getattr__(name):
    if name == 'streams_registry':  # Mosaic's streaming.base.dataset has it too
        return _stream.streams_registry
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')


class _Spanner:
    """Mosaic's Spanner (spanner[sample_id] -> (shard_id, index in the
    shard), its IndexError text) over the engine's locator."""

    def __init__(self, engine, num_samples):
        self._engine = engine
        self.num_samples = num_samples

    def __getitem__(self, index):
        index = int(index)
        if not 0 <= index < self.num_samples:
            raise IndexError(f'Invalid sample index `{index}`: 0 <= {index} < {self.num_samples}')
        return self._engine.sample_origin(index)


class StreamingDataset(_Base):
    """Mosaic's StreamingDataset over local folders: same arguments, same
    per-worker sample order, len(), random access, state_dict/load_state_dict.

    Sluice's ``single_pass=True`` receives each shard into memory and caches
    nothing. A shuffled single pass keeps a shard it read until the
    shard's last sample in the worker's order, within the engine key
    ``single_pass_memory`` (bytes a reader process holds; default a
    quarter of the machine's memory shared by the node's ranks and their
    workers, at most 16 GiB each; set through ``_engine_keys``); a shard let go
    earlier has its later samples read by one ranged request each, never
    the whole shard again (docs/configuration.rst)."""

    def __init__(self, *, streams=None, remote=None, local=None, split=None, download_retry=2,
                 download_timeout=60, validate_hash=None, keep_zip=False, epoch_size=None,
                 predownload=None, cache_limit=None, sampling_method='balanced',
                 sampling_granularity=1, partition_algo='relaxed', num_canonical_nodes=None,
                 batch_size=None, shuffle=False, shuffle_algo='py1e', shuffle_seed=9176,
                 shuffle_block_size=None, batching_method='random', allow_unsafe_types=False,
                 replication=None, stream_name='stream', stream_config=None, mixture=None,
                 mixture_interpolation='step', pack=None, columns=None, manifest=None,
                 metrics_retention_s=None, world=None, single_pass=False, **kwargs):
        if kwargs:
            raise TypeError(f'unexpected arguments: {sorted(kwargs)}')
        if streams:
            if remote is not None or local is not None:
                raise ValueError('pass either streams or remote/local, not both')
            for name, value in (('columns', columns), ('manifest', manifest)):
                if value is not None:
                    raise ValueError(f'with streams, give each Parquet Stream its own `{name}`')
            self.streams = list(streams)
        elif stream_name != 'stream' or stream_config or _stream.registry_in_use():
            # Built from streams_registry, as Mosaic's: what a user registered
            # under a name (or an entry point names), 'stream' included, wins
            # over Sluice's Stream. Until the registry exists no one has
            # registered at run time, and 'stream' is Stream.
            from sluice.registry import construct_from_registry
            config = dict(stream_config or {}, remote=remote, local=local, split=split,
                          download_retry=download_retry, download_timeout=download_timeout,
                          validate_hash=validate_hash, keep_zip=keep_zip)
            for name, value in (('columns', columns), ('manifest', manifest)):
                if value is not None:
                    config[name] = value
            self.streams = [construct_from_registry(stream_name, _streams_registry(),
                                                    partial_function=False, kwargs=config)]
        else:
            self.streams = [Stream(remote=remote, local=local, split=split, columns=columns,
                                   manifest=manifest)]
        Stream.validate_weights(self.streams)  # before any download, as Mosaic
        if isinstance(epoch_size, str):
            from sluice.util import number_abbrev_to_int
            epoch_size = number_abbrev_to_int(epoch_size)
        if epoch_size is not None and epoch_size < 0:
            raise ValueError(f'Epoch size cannot be negative. Received {epoch_size}.')
        self.split = split
        self._epoch_size_arg = epoch_size  # as given (the planner's input)
        # Mosaic's attribute holds its default when none is given; the engine
        # is told only a predownload the user chose (it sizes its own window).
        self._predownload_arg = predownload
        self.predownload = predownload if predownload is not None else (
            8 * batch_size if batch_size is not None else 64)
        self.cache_limit = cache_limit
        self.sampling_method = sampling_method
        self.sampling_granularity = sampling_granularity
        self.partition_algo = partition_algo
        self.num_canonical_nodes = num_canonical_nodes
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.shuffle_algo = shuffle_algo
        self.shuffle_seed = shuffle_seed
        self.shuffle_block_size = shuffle_block_size
        self.batching_method = batching_method
        self.allow_unsafe_types = allow_unsafe_types
        self.replication = replication
        # Sluice's extension: [(samples seen, [weight per stream]), ...],
        # checked and planned by the engine (engine/planner/README.md).
        self.mixture = mixture
        self.mixture_interpolation = mixture_interpolation
        # Sluice's extension: how long the node's metrics records of ended
        # processes are kept (docs/metrics.rst); the engine checks it and
        # falls back to SLUICE_METRICS_RETENTION_S.
        self.metrics_retention_s = metrics_retention_s
        # Sluice's extension: the rank this dataset reads as, given instead of
        # torchrun's variables (sluice.world.world_option; the engine resolves
        # it), e.g. world=(i, n) in a Ray task reading partition i of n.
        self._world_given = world_option(world)
        self.initial_physical_nodes = None
        self._counters = SharedCounters()
        self._resume_state = None
        self._resume_options = {}  # load_state_dict's adapt and skips, for the engine
        self._engine = None
        malloc_tuning.tune()  # batches unpickled in this process: see the module
        self._given_streams = bool(streams)
        if predownload is not None and batch_size is not None and predownload < batch_size:
            warnings.warn(f'predownload < batch_size ({predownload} < {batch_size}).This may '
                          f'result in slower batch time. Recommendation is to set predownload to '
                          f'at-least batch_size.')  # Mosaic's text, missing space included
        # Mosaic's Stream.apply_default: what a stream leaves unset comes
        # from the dataset's arguments.
        self._stream_defaults = {'download_retry': download_retry,
                                 'download_timeout': download_timeout,
                                 'keep_zip': keep_zip,
                                 # Sluice's extension: shards received into
                                 # memory, nothing cached (the engine's
                                 # single_pass; docs/configuration.rst).
                                 'single_pass': single_pass}
        splits = [self._split_of(s) for s in self.streams]
        try:
            self._open_engine(validate_hash, streams is not None, split)
        except Exception as e:
            # Mosaic's checks of the index.json files come before anything
            # else it checks: read them only now that opening failed (the
            # engine refuses what they refuse, a malformed index or a stream
            # without samples, in its own words; it checks cache_limit by
            # Mosaic's rules and texts).
            check_indexes(self.streams, splits)
            if isinstance(e, FileNotFoundError):
                # Mosaic's error for a local remote without index.json, where
                # the engine found no Parquet files to read instead.
                missing_local_index(self.streams, splits)
            raise
        # Mosaic's epoch_size: the resolved number of samples an epoch draws;
        # with a mixture, the epoch_size given (the engine required it).
        if self.mixture is None:
            self.epoch_size = Stream.apply_weights(self.streams, self.samples_per_stream,
                                                   self._epoch_size_arg, self.shuffle_seed)
        else:
            self.epoch_size = self._epoch_size_arg
        # Sluice's extension: token packing (sluice.packing); the engine
        # checks the spec and the column now.
        self.pack = _packing.as_spec(pack) if pack is not None else None
        self._packer = None
        # DataLoader workers per rank of this run's packed rows, when known
        # here (this process iterates, or a StreamingDataLoader records it).
        self._pack_workers = None
        if self.pack is not None:
            self._packer_for_engine()

    def _packer_for_engine(self):
        """The sluice_pack over this process's engine handle (made again
        when the handle was, e.g. in an unpickled DataLoader worker)."""
        if self._packer is None or self._packer._engine is not self._engine:
            self._packer = _packing.Packer(self._engine, self.pack)
        return self._packer

    def _set_shard_table(self, eng):
        """Mosaic's per-stream and per-shard attributes, from the engine's
        sample count and stream of each shard (numbered stream by stream)."""
        # A view, not a copy: counts fit int64, and a dataset of a million
        # shards keeps one 8 MB array a process, not two.
        self.samples_per_shard = eng.samples_per_shard.view(np.int64)
        self.num_shards = len(self.samples_per_shard)
        self.num_streams = len(self.streams)
        self.shards_per_stream = eng.shards_per_stream.astype(np.int64)
        self.shard_offset_per_stream = np.concatenate(
            [[0], np.cumsum(self.shards_per_stream)[:-1]]).astype(np.int64)
        self.samples_per_stream = np.array(
            [self.samples_per_shard[o:o + n].sum() for o, n in
             zip(self.shard_offset_per_stream.tolist(), self.shards_per_stream.tolist())],
            dtype=np.int64)
        self._stream_per_shard = None  # made when asked: 8 MB at a million shards
        self.sample_offset_per_stream = np.concatenate(
            [[0], np.cumsum(self.samples_per_stream)[:-1]]).astype(np.int64)
        # Described one by one when asked (a dataset may have millions).
        self.shards = ShardInfos(eng, self.num_shards)

    @property
    def stream_per_shard(self):
        """Each shard's stream index (int64, as Mosaic's), made on first use."""
        if self._stream_per_shard is None:
            self._stream_per_shard = np.repeat(
                np.arange(self.num_streams, dtype=np.int64), self.shards_per_stream)
        return self._stream_per_shard

    @stream_per_shard.setter
    def stream_per_shard(self, value):
        self._stream_per_shard = value

    def _stream_of_shard(self, shard):
        """The stream holding global shard `shard`: the last to start at or
        before it (streams are never empty)."""
        return int(np.searchsorted(self.shard_offset_per_stream, shard, side='right')) - 1

    def _shards_of_stream(self, s):
        """Stream s's shards' sample counts, a view."""
        o = int(self.shard_offset_per_stream[s])
        return self.samples_per_shard[o:o + int(self.shards_per_stream[s])]

    def _split_of(self, stream):
        """The split a stream's files are under: its own when the dataset was
        given streams, else the dataset's."""
        return stream.split if self._given_streams else self.split

    def prepare_shard(self, shard_id, blocking=True):
        """Fetches shard `shard_id` into the local cache now (Mosaic's
        prepare_shard); a stream read in place has nothing to fetch."""
        shard_id = int(shard_id)
        if not 0 <= shard_id < self.num_shards:
            raise IndexError(f'shard {shard_id} out of range: the dataset has {self.num_shards}')
        if self.samples_per_shard[shard_id]:
            self._engine.get(int(self.samples_per_shard[:shard_id].sum()))

    # ------------------------------------------------------------------ provenance

    @property
    def spanner(self):
        """Mosaic's spanner: spanner[sample_id] is (shard_id, index in that
        shard), as the engine locates the sample."""
        return _Spanner(self._engine, self.num_samples)

    def sample_origins(self, sample_ids):
        """Where each sample came from, for ids as iter_batches(with_ids=True),
        the planner or ds[i] name them: one dict per id with `sample_id`,
        `stream` (its index in `streams`), `shard` (the global shard id),
        `shard_file` (the shard's data file, as its index names it) and
        `index_in_shard`. Nothing is read or fetched. IndexError past the
        last sample."""
        out = []
        spanner = self.spanner
        for sample_id in np.asarray(sample_ids, dtype=np.int64).reshape(-1).tolist():
            shard, index = spanner[sample_id]
            raw = self.shards[shard].raw_data
            out.append({'sample_id': sample_id, 'stream': self._stream_of_shard(shard),
                        'shard': shard, 'shard_file': raw.basename if raw else None,
                        'index_in_shard': index})
        return out

    def step_samples(self, steps, epoch=0, sample_in_epoch=0, world=None, workers=None,
                     rank=None):
        """The samples global training steps read, as `sluice plan DATASET
        --steps` prints them: at step s every rank takes the s-th batch its
        DataLoader (`workers` workers, this dataset's batch_size) hands out,
        counted from `sample_in_epoch` of `epoch` (a loader resumed from a
        state counts from the state's). `steps`: a step or a range of them
        (range(a, b): steps a to b - 1). `world`: a World (default: this
        process's); `workers`: the DataLoader's num_workers (default: the
        world's workers_per_rank; StreamingDataLoader.step_samples passes
        its own); `rank`: one global rank, None every rank. The engine
        plans it (sluice_plan_steps), planning only the asked ranks' nodes.
        One dict per sample, step by step, rank by rank, each batch in its
        order: `step`, `rank`, then sample_origins' keys. Steps past every
        rank's last are left out; a first step at or past it is a ValueError
        saying how many steps the ranks take. Steps that load_state_dict's
        skips removed are not left out; packed rows are not samples
        (ValueError)."""
        if self.pack is not None:
            raise ValueError('step_samples: a packed dataset\'s steps are rows of packed '
                             'samples, not samples')
        if isinstance(steps, range) and steps.step == 1:
            first, end = steps.start, steps.stop
        elif isinstance(steps, (int, np.integer)):
            first, end = int(steps), int(steps) + 1
        else:
            raise TypeError(f'step_samples: steps is a step or a range(first, end), got {steps!r}')
        world = world or self._world()
        workers = world.workers_per_rank if workers is None else max(1, int(workers))
        state = self._resume_state
        if state is None or state.get('epoch') != epoch:
            state = None
        rows = plan_steps(self._config(world, workers, epoch, sample_in_epoch, state),
                          first, end, rank)
        origins = self.sample_origins(rows[:, 2])
        return [dict(step=int(step), rank=int(r), **origin)
                for (step, r, _), origin in zip(rows.tolist(), origins)]

    def evict_shard(self, shard_id):
        """Deletes shard `shard_id`'s files from the local cache now (Mosaic's
        evict_shard); reading one of its samples fetches it again. A stream
        read in place has nothing to evict (ValueError), nor has a shard that
        some process is reading."""
        shard_id = int(shard_id)
        if not 0 <= shard_id < self.num_shards:
            raise IndexError(f'shard {shard_id} out of range: the dataset has {self.num_shards}')
        self._engine.evict_shard(shard_id)

    def metrics(self, scope='process'):
        """The dataset's counters, as the engine keeps them (docs/metrics.rst
        documents every field): a dict with 'remote', 'processes', 'totals'
        (since the dataset was opened, or a DataLoader worker first read),
        'window' (the same counts since the previous metrics() or
        diagnosis() call of the scope, with rates), 'hosts' (per store host:
        requests, retries, throttles, errors, time to first byte and
        transfer time percentiles) and 'diagnosis' (one sentence naming what
        held the reader back in the window). Each call starts a new window.
        `scope`: 'process' (this process's reads), 'job' (this dataset here
        and in the DataLoader workers forked from this process) or 'node'
        (every process of the node that read through the first stream's
        cache folder, ended ones included): the last two are summed from the
        records each process keeps in the cache's state folder (hosts merged
        by name, percentiles of the merged histograms)."""
        return self._engine.metrics(scope)

    def publish_metrics(self):
        """Writes this process's record of the counts for the 'job' and
        'node' scopes now (reading does it at most once a second and when a
        pass ends)."""
        self._engine.publish_metrics()

    def diagnosis(self):
        """The engine's one-sentence diagnosis of the window since the previous
        metrics() or diagnosis() call (which it ends, as metrics() does)."""
        return self._engine.metrics()['diagnosis']

    def write_prometheus(self, folder, scope='process'):
        """Writes this process's totals in Prometheus' text format to
        `folder`/sluice-<pid>.prom (replacing it whole, by rename), for
        node_exporter's textfile collector: one file per process (each
        DataLoader worker its own), every series labelled process=<pid>, so
        `sum without (process)` gives the node's totals. With scope='node',
        the node's totals instead (as metrics(scope='node')), to
        `folder`/sluice-node.prom labelled process="node": one file for the
        node, which any process may rewrite (use one way or the other in a
        folder, or the node is counted twice). Returns the path. Metric
        names: docs/metrics.rst."""
        if scope == 'node':
            name, label = 'node', 'node'
        elif scope == 'process':
            name = label = os.getpid()
        else:
            raise ValueError(f"write_prometheus: scope {scope!r}: expected 'process' or 'node'")
        path = os.path.join(folder, f'sluice-{name}.prom')
        write_file(path, self._engine.metrics_prometheus(label, scope).encode('utf-8'),
                   'write_prometheus')
        return path

    def _open_engine(self, validate_hash, given_streams, split):
        """Every stream goes through the engine's sluice_stream_* (a remote's
        cache, downloads and prefetch; a local folder read in place); the plan
        and order are the engine's (the same planner)."""
        streams = []
        for s in self.streams:
            spec = {'remote': s.remote if s.fetched else None, 'local': s.local,
                    'split': s.split if given_streams else split}
            spec.update(s.weights)
            for key, default in self._stream_defaults.items():
                value = getattr(s, key, None)
                spec[key] = value if value is not None else default
            v = s.validate_hash if s.validate_hash is not None else validate_hash
            if v:
                spec['validate_hash'] = v
            # A stream's own engine keys (a raw-file stream's 'files').
            spec.update(getattr(s, 'engine_keys', {}))
            streams.append({k: v for k, v in spec.items() if v is not None})
        # This process's place, by Mosaic's rule (sluice.world: RANK,
        # WORLD_SIZE, LOCAL_WORLD_SIZE; LOCAL_RANK is not needed), or the
        # dataset's `world`.
        world = self._world()
        config = {'streams': streams, 'allow_unsafe_types': self.allow_unsafe_types,
                  # Encodings that are not built in are Python's to decode (a
                  # user's own) or to refuse when a sample is read, as Mosaic.
                  'any_custom_encoding': True,
                  # Mosaic's cache_limit errors, checked by the engine.
                  'mosaic_cache_limit_checks': True,
                  'world': {'rank': world.rank, 'world_size': world.num_ranks,
                            'local_rank': world.rank_of_node,
                            'local_world_size': world.ranks_per_node},
                  'shuffle': self.shuffle, 'shuffle_algo': self.shuffle_algo,
                  'shuffle_seed': self.shuffle_seed, 'partition_algo': self.partition_algo,
                  'batching_method': self.batching_method,
                  'sampling_method': self.sampling_method,
                  'sampling_granularity': self.sampling_granularity,
                  # A subclass's own engine keys (StreamingFileDataset's).
                  **getattr(self, '_engine_keys', {})}
        if self._epoch_size_arg is not None:
            config['epoch_size'] = self._epoch_size_arg
        if self.mixture is not None or self.mixture_interpolation != 'step':
            config['mixture'] = self.mixture  # the engine refuses an interpolation alone
            config['mixture_interpolation'] = self.mixture_interpolation
        if self._predownload_arg is not None:
            config['predownload'] = self._predownload_arg
        for key in ('cache_limit', 'num_canonical_nodes',
                    'batch_size', 'shuffle_block_size', 'replication', 'metrics_retention_s'):
            if getattr(self, key) is not None:
                config[key] = getattr(self, key)
        self._engine = engine.Engine(config)
        self.num_samples = self._engine.num_samples
        self._set_shard_table(self._engine)

    # ------------------------------------------------------------------ random access

    @property
    def size(self):
        """Samples in the underlying dataset (all streams)."""
        return self.num_samples

    def get_item(self, idx):
        idx = int(idx)
        if not 0 <= idx < self.num_samples and not -self.num_samples <= idx < 0:
            raise IndexError(f'sample {idx} out of range: the dataset has {self.num_samples}')
        return self._engine.get(idx % self.num_samples)

    def __getitem__(self, idx):
        if isinstance(idx, (int, np.integer)):
            return self.get_item(idx)
        if isinstance(idx, slice):
            return [self.get_item(i) for i in range(*idx.indices(self.num_samples))]
        return [self.get_item(i) for i in np.asarray(idx).reshape(-1)]

    def _reads_through_getitem(self):
        """True when a subclass overrides __getitem__ or get_item: Mosaic's
        iteration maps self.__getitem__ over the planned ids, and such
        subclasses (tokenizing, packing, decoding images) rely on it. Only
        classes that override neither get the batched path."""
        cls = type(self)
        return (cls.__getitem__ is not StreamingDataset.__getitem__ or
                cls.get_item is not StreamingDataset.get_item)

    # ------------------------------------------------------------------ planning

    def _world(self):
        """This process's World as the dataset reads: its `world` argument,
        else torchrun's variables; and the DataLoader worker."""
        return World.resolve(self._world_given)

    def _physical_nodes(self, world, replication):
        """The nodes the plan counts (Mosaic's _parallel_rank_world): the
        real world's, or the replicated world's when replication is set."""
        return world.replicate(replication).num_nodes if replication else world.num_nodes

    def _resolved_canonical_nodes(self, world, state, replication):
        if state is not None and state.get('num_canonical_nodes') is not None:
            return state['num_canonical_nodes']
        if self.num_canonical_nodes is not None:
            return self.num_canonical_nodes
        physical = self.initial_physical_nodes or self._physical_nodes(world, replication)
        return default_num_canonical_nodes(self.shuffle_algo, physical)

    def _config(self, world, workers, epoch, sample_in_epoch, state=None, replication=-1):
        if replication == -1:  # the dataset's
            replication = self.replication
        shard_sizes = [self._shards_of_stream(s).tolist() for s in range(self.num_streams)]
        return {
            'streams': [s.spec(z) for s, z in zip(self.streams, shard_sizes)],
            'epoch_size': self._epoch_size_arg,
            'world': {'num_nodes': world.num_nodes, 'ranks_per_node': world.ranks_per_node,
                      'workers_per_rank': workers},
            'replication': replication,
            'batch_size': self.batch_size,
            'shuffle': self.shuffle,
            'shuffle_algo': self.shuffle_algo,
            'shuffle_seed': state['shuffle_seed'] if state else self.shuffle_seed,
            'shuffle_block_size': self.shuffle_block_size,
            'num_canonical_nodes': self._resolved_canonical_nodes(world, state, replication),
            'partition_algo': self.partition_algo,
            'batching_method': self.batching_method,
            'sampling_method': self.sampling_method,
            'sampling_granularity': self.sampling_granularity,
            'epoch': epoch,
            'sample_in_epoch': sample_in_epoch,
            'initial_physical_nodes': (state or {}).get('initial_physical_nodes',
                                                        self.initial_physical_nodes),
            **({'mixture': self.mixture, 'mixture_interpolation': self.mixture_interpolation,
                **self._resumed_mixture(epoch)}
               if self.mixture is not None else {}),
        }

    def _resumed_mixture(self, epoch):
        """What a loaded state decides of `epoch`'s schedule, as the engine
        records it in its states: the schedules a resume replaced
        (load_state_dict's adapt='schedule') and the rule the resume kept,
        as the engine reads the record (recorded_mixture_rule)."""
        state = self._resume_state
        if not state or state.get('epoch') != epoch or 'sluice_order' not in state:
            return {'mixture_past': []}
        keys = ('epoch', 'sample_in_epoch', 'num_canonical_nodes', 'shuffle_seed',
                'initial_physical_nodes')
        parts = self._engine.state_with_order({k: state.get(k) for k in keys})['sluice_order']['parts']
        rule = recorded_mixture_rule(parts['sampling'])
        return {'mixture_past': parts.get('mixture_past', []), **({'mixture_rule': rule} if rule else {})}

    def _resume(self, epoch):
        """(epoch, sample_in_epoch, state) as Mosaic's _resume: a checkpoint
        older than the current epoch is ignored."""
        state = self._resume_state
        if state is None or state['epoch'] < epoch:
            return epoch, 0, None
        return state['epoch'], state['sample_in_epoch'], state

    def plan(self, epoch=0, sample_in_epoch=0, world=None, workers=1):
        """The epoch's Plan for `world` (default: this process's) and `workers`."""
        world = world or self._world()
        return Plan(self._config(world, workers, epoch, sample_in_epoch))

    def work(self, world, epoch=0, sample_in_epoch=0, batching_method=None):
        """The epoch's sample ids for every worker of `world` (a World), as
        Mosaic's generate_work: shape (nodes, ranks per node, workers per rank,
        batches, batch size), -1 where a worker has no sample."""
        config = self._config(world, world.workers_per_rank, epoch, sample_in_epoch)
        if batching_method is not None:
            config['batching_method'] = batching_method
        plan = Plan(config).to_json()
        return np.array(plan['work'], dtype=np.int64).reshape(plan['work_shape'])

    def epoch_size_resolved(self):
        """Samples an epoch draws from all streams (weights applied)."""
        return self.epoch_size

    def __len__(self):
        if getattr(self, 'pack', None) is not None:
            # Rows depend on every document's length: no count before packing
            # (TypeError, as for any iterable without a length).
            raise TypeError('a packed StreamingDataset has no len(): its rows per epoch are '
                            'known only once the epoch is packed')
        return self._engine.length

    # ------------------------------------------------------------------ iteration

    def __iter__(self):
        if self.pack is not None:
            return itertools.chain.from_iterable(self._packed_pass())
        # The engine's samples come as one list per engine batch, flattened
        # in C (Engine.iterate): no Python frame resumes per sample. Nothing
        # runs before the first next(), as with a generator.
        return itertools.chain.from_iterable(self._pass())

    def _pass(self):
        """Yields one iterable: this pass's samples."""
        epoch, sample_in_epoch, worker, workers = self._begin_iteration()
        if self._reads_through_getitem():
            yield map(self.__getitem__,
                      self._engine.iterate_ids(epoch, sample_in_epoch, worker, workers))
        else:
            yield self._engine.iterate(epoch, sample_in_epoch, worker, workers)

    def _packed_pass(self):
        """This worker's packed rows, one list per engine call."""
        yield from self._packer_for_engine().iterate_lists(*self._packed_begin())

    def _packed_begin(self):
        """(epoch, role, workers, skip_rows, segments) of this worker's
        packed pass (sluice.packing.Packer.begin's arguments): from the
        epoch's start or, resuming on the world the state was saved on,
        where the saved run's worker whose turn this worker's first batch
        is left off (sluice.packing.resume_point); on another world shape,
        an elastic resume over the shapes the epoch ran on (segments)."""
        epoch, _, worker, workers = self._begin_iteration()
        if not in_dataloader_worker():
            self._pack_workers = workers  # this process iterates: its workers are known
        state = self._resume_state
        if (state is None or state.get('epoch') != epoch or 'sluice_pack' not in state or
                not state['sluice_pack']['rows_in_epoch']):
            return epoch, worker, workers, 0, None
        world = self._world()
        segments = self._pack_segments(state, world, workers)
        if len(segments) == 1:  # exact in the epoch's tail too
            rank_rows = segments[-1]['rows'] // self._packed_ranks(world)
            role, skip = self._packer_for_engine().resume_point_in(epoch, rank_rows,
                                                                   self.batch_size, worker,
                                                                   workers)
            return epoch, role, workers, skip, None
        role, skip = self._packer_for_engine().resume_point_segments(
            epoch, segments, self._planning_world(world).rank, worker)
        return epoch, role, workers, skip, segments

    def _planning_world(self, world):
        """The world packed rows are planned and dealt over: under
        replication each group of replicas is one rank (World.replicate)."""
        return world.replicate(self.replication) if self.replication else world

    def _pack_segments(self, state, world, workers):
        """The world shapes this run's epoch of packed rows ran on, oldest
        first, each {nodes, ranks_per_node, workers, batch_size, rows}
        (rows: the job's rows consumed on it), the last this run's shape
        (engine/packing/pack_segments.h): the saved ones (of `state`, None:
        none), and this one when it differs from the last of them. A shape
        is a planning world: a replicated run's ranks are its groups of
        replicas. `workers` None: not known here (the main process of a
        DataLoader), taken as the last one's."""
        planning = self._planning_world(world)
        shape = {'nodes': planning.num_nodes, 'ranks_per_node': planning.ranks_per_node,
                 'workers': workers, 'batch_size': self.batch_size}
        saved = None if state is None else state.get('sluice_pack')
        if saved is None:
            return [dict(shape, rows=0)]
        segments = [dict(s) for s in saved.get('segments') or
                    [{'nodes': None, 'ranks_per_node': None, 'workers': None,
                      'batch_size': self.batch_size, 'rows': saved['rows_in_epoch']}]]
        replication = (((state.get('sluice_order') or {}).get('parts') or {}).get('sampling')
                       or {}).get('replication')
        if replication and not saved.get('planning_worlds'):
            # Saved before shapes were planning worlds: real worlds, merged here.
            for s in segments:
                if s['nodes'] is not None:
                    merged = World.of(s['nodes'], s['ranks_per_node']).replicate(replication)
                    s.update(nodes=merged.num_nodes, ranks_per_node=merged.ranks_per_node)
        last = segments[-1]
        if last['nodes'] is None:  # saved before segments were recorded: that world only
            last.update(nodes=planning.num_nodes, ranks_per_node=planning.ranks_per_node)
        if shape['workers'] is None or last['workers'] is None:
            last['workers'] = last['workers'] or shape['workers']
            shape['workers'] = last['workers']
        if all(last[k] == v for k, v in shape.items()):
            return segments
        return segments + [dict(shape, rows=0)]

    def iter_batches(self, batch_size=None, with_ids=False):
        """Batch mode: the samples __iter__ would yield, as dicts of column ->
        numpy array per `batch_size` samples (see sluice.column_batches).
        with_ids: each batch also has 'sample_id' (int64, the samples' global
        ids, for sample_origins). A packed dataset's batches are its rows
        stacked: 'tokens' (and for 'bin' 'segment_ids', 'position_ids') of
        shape (rows, seq_len), for 'bin' also 'cu_seqlens' (rows, seq_len + 1)
        and 'num_documents' (rows,), filled in place by the engine."""
        from sluice.column_batches import iter_batches
        return iter_batches(self, batch_size, with_ids)

    def _begin_iteration(self):
        """(epoch, sample_in_epoch, worker, workers) of an iteration starting
        now in this process / DataLoader worker; moves the epoch counters on."""
        if not isinstance(self.batch_size, int):  # Mosaic's check and text
            raise ValueError('Please pass `batch_size` to StreamingDataset. It should be set the '
                             'same as the DataLoader, and is the number of samples per batch, '
                             'for each device. It is necessary for deterministic resumption and '
                             'optimal performance.')
        world = self._world()
        if self.initial_physical_nodes is None:
            self.initial_physical_nodes = self._physical_nodes(world, self.replication)
        worker = world.worker_of_rank
        if worker >= MAX_WORKERS:
            raise ValueError(f'at most {MAX_WORKERS} DataLoader workers')
        counter = self._counters.get(worker)
        epoch, sample_in_epoch, state = self._resume(counter)
        if world.workers_per_rank == 1 and not in_dataloader_worker():
            self.next_epoch = epoch + 1  # this process read the epoch: every worker moves on
        else:
            self._counters.set(worker, epoch + 1)
        if state is not None:
            epoch, sample_in_epoch = self._engine.load_state(state, self._resume_options)
        return epoch, sample_in_epoch, worker, world.workers_per_rank

    @property
    def next_epoch(self):
        return self._counters.get(0)

    @next_epoch.setter
    def next_epoch(self, value):
        for i in range(MAX_WORKERS):
            self._counters.set(i, value)

    def _job_samples(self, rank_samples):
        """The samples the job consumed when each rank consumed
        `rank_samples`: what state_dict's num_samples counts (Mosaic's rule:
        rank samples x ranks, divided by replication, as replicas read the
        same samples)."""
        num_samples = rank_samples * self._world().num_ranks
        if self.replication is not None:
            num_samples //= self.replication
        return num_samples

    def state_dict(self, num_samples, from_beginning):
        """Mosaic's checkpoint: {epoch, sample_in_epoch, num_canonical_nodes,
        shuffle_seed, initial_physical_nodes}, then Sluice's "sluice_order":
        the engine's record of what else defines the order (each stream's
        index fingerprint, the sampling options, the worlds this run was on,
        the steps it skips), which load_state_dict checks. `num_samples`
        counts samples the whole job consumed (from the epoch's start when
        from_beginning, else since this run resumed); sample_in_epoch is the
        position they reach, skipped steps passed over. Before any epoch
        (epoch -1, which a resume ignores, as Mosaic's) there is no record."""
        world = self._world()
        epoch = self.next_epoch - 1
        epoch, offset, state = self._resume(epoch)
        if self.pack is not None:
            return self._packed_state_dict(world, epoch, state, num_samples, from_beginning)
        start = 0 if from_beginning else offset
        if epoch < 0:
            sample_in_epoch = start + num_samples
        else:
            sample_in_epoch = self._engine.position_after(int(epoch), int(start),
                                                          int(num_samples))
        mosaic = {
            'epoch': epoch,
            'sample_in_epoch': sample_in_epoch,
            'num_canonical_nodes': self._resolved_canonical_nodes(world, state, self.replication),
            'shuffle_seed': state['shuffle_seed'] if state else self.shuffle_seed,
            'initial_physical_nodes': (state or {}).get('initial_physical_nodes') or
            self.initial_physical_nodes or self._physical_nodes(world, self.replication),
        }
        return mosaic if epoch < 0 else self._engine.state_with_order(mosaic)

    def _packed_state_dict(self, world, epoch, state, num_rows, from_beginning):
        """A packed dataset's state_dict: `num_rows` counts rows (all ranks),
        Mosaic's keys hold the epoch's start (sample_in_epoch 0) and
        "sluice_pack" the rows the job consumed in the epoch, the spec and
        the ranks they were dealt over. Rows are packed per worker from
        their own samples, so a resume is exact on the same world shape
        (ranks and DataLoader workers) and batch_size only."""
        before = 0
        if not from_beginning and state is not None and 'sluice_pack' in state:
            before = state['sluice_pack']['rows_in_epoch']
        mosaic = {
            'epoch': epoch,
            'sample_in_epoch': 0,
            'num_canonical_nodes': self._resolved_canonical_nodes(world, state, self.replication),
            'shuffle_seed': state['shuffle_seed'] if state else self.shuffle_seed,
            'initial_physical_nodes': (state or {}).get('initial_physical_nodes') or
            self.initial_physical_nodes or self._physical_nodes(world, self.replication),
        }
        out = mosaic if epoch < 0 else self._engine.state_with_order(mosaic)
        segments = self._pack_segments(None if from_beginning else state, world,
                                       getattr(self, '_pack_workers', None))
        segments[-1]['rows'] += int(num_rows)
        out['sluice_pack'] = {'rows_in_epoch': int(before + num_rows), 'spec': self.pack,
                              'ranks': self._packed_ranks(world), 'segments': segments,
                              'planning_worlds': True}
        return out

    def record_pack_workers(self, workers):
        """This run's DataLoader workers per rank, for the world shape a
        packed state_dict records (a DataLoader's main process does not
        know them; StreamingDataLoader tells it before its state_dict), so
        that another world shape can resume the state."""
        self._pack_workers = max(1, int(workers))

    def _packed_ranks(self, world):
        """The ranks rows are dealt over: replicas read the same rows."""
        return world.num_ranks // (self.replication or 1)

    def _check_packed_state(self, state, options):
        """A state saved with packing resumes only a dataset packing the
        same way (ValueError naming the difference); on another world shape
        only from a state that records every earlier shape's DataLoader
        workers (an older state: only on its own world), and without new
        skips (`options`') once the epoch changed shape; then the state's
        skips are steps of the shape the epoch started on (options'
        steps_of, for the engine's check). The engine's record checks the
        rest (another world needs adapt='world')."""
        saved = state.get('sluice_pack')
        if saved is None:
            if self.pack is not None and state.get('sample_in_epoch'):
                raise ValueError('a state saved without packing cannot resume packed rows '
                                 'mid-epoch (its position counts samples, not rows)')
            return
        if self.pack is None:
            raise ValueError('the state was saved with token packing (sluice_pack); this dataset '
                             'packs nothing')
        differ = [f'{k}={saved["spec"].get(k)!r} (saved) vs {self.pack.get(k)!r} (now)'
                  for k in sorted(set(saved['spec']) | set(self.pack))
                  if saved['spec'].get(k) != self.pack.get(k)]
        if differ:
            raise ValueError('the state was saved with another pack spec: ' + ', '.join(differ))
        if not saved['rows_in_epoch']:
            return  # nothing consumed: the epoch starts afresh on any world
        world = self._world()
        if saved['ranks'] != self._packed_ranks(world) and not saved.get('segments'):
            raise ValueError(f'packed rows resume on the world they were saved on: saved over '
                             f'{saved["ranks"]} ranks, now {self._packed_ranks(world)} (the state '
                             f'records no world shapes; one saved by this Sluice resumes on '
                             f'another world)')
        segments = self._pack_segments(state, world, None)
        if len(segments) > 1:
            skips = [k for k in ('skip_steps', 'skip_samples', 'skip_sample_ids') if k in options]
            if skips:
                raise ValueError(
                    f'packed rows: {skips[0]} cannot be given once the epoch changed world shape '
                    f'(it runs on {len(segments)} shapes): skipped steps are positions of the '
                    f'epoch\'s samples, which the workers of its first shape packed into rows '
                    f'from its start, so leaving them out now would change rows consumed before '
                    f'the change; skip steps on the shape the epoch started on (those are '
                    f'honoured across changes)')
            unknown = [k for k, s in enumerate(segments[:-1]) if s['workers'] is None]
            if unknown:
                raise ValueError(f'packed rows resume on another world shape only from a state '
                                 f'that records its DataLoader workers (saved through '
                                 f'sluice.StreamingDataLoader): world shape {unknown[0]} of the '
                                 f'epoch has none')
            first = segments[0]
            options['steps_of'] = {'batch_size': first['batch_size'],
                                   'ranks': first['nodes'] * first['ranks_per_node']}

    def load_state_dict(self, obj, *, adapt=(), skip_steps=None, skip_samples=None,
                        skip_sample_ids=None):
        """Resume from a state_dict on the next __iter__ (Mosaic's rules).

        A state that carries "sluice_order" (saved by this Sluice) is checked
        now against this dataset: saved over other data (a stream's index
        fingerprint, shard or sample count, remote, split, weight), with other
        sampling options, or on another world shape, it raises ValueError
        naming each difference with the saved and current values. `adapt`
        names the parts allowed to differ: 'world' (another number of nodes
        or ranks per node, Mosaic's elastic resume), 'streams', 'sampling',
        'schedule' (another mixture schedule: it takes over at the state's
        position, the samples before kept and each stream continuing its
        pass; docs/resumption.rst) (a str or a sequence of them). A state
        without the record (Mosaic's, an older Sluice's) loads unchecked, as
        before.

        skip_steps=[(first, last), ...]: half-open ranges of steps of the
        state's epoch whose samples never come. Step k is every rank's k-th
        batch of the epoch: global positions [k G, (k+1) G) with G =
        batch_size x ranks (world size / replication). Every other step
        keeps its samples and order on every rank. skip_samples: the same
        as positions (sample_in_epoch's unit), bounds multiples of G. The
        state's sample_in_epoch and the ranges still ahead of it must be
        whole steps. Later states keep the ranges, so resuming from them
        skips the same steps. skip_sample_ids=[id, ...]: the steps (ahead
        of the state, on this world) that hold those global sample ids
        (iter_batches' with_ids), every sample of each; an id no rank
        reads after the state is a ValueError naming it. Finding them plans
        every rank's order of the epoch once."""
        if isinstance(adapt, str):
            adapt = (adapt,)
        options = {'adapt': [str(a) for a in adapt]}
        for key, ranges in (('skip_steps', skip_steps), ('skip_samples', skip_samples)):
            if ranges is not None:
                options[key] = [[int(a), int(b)] for a, b in ranges]
        if skip_sample_ids is not None:
            options['skip_sample_ids'] = [int(i) for i in skip_sample_ids]
        state = dict(obj)
        self._check_packed_state(state, options)
        if not isinstance(state.get('epoch'), int) or state['epoch'] >= self.next_epoch:
            # Checked (and its worlds and skips kept for state_dict) now, not
            # at the first batch: __iter__ loads it again where it iterates.
            # A state older than the next epoch is ignored there, as Mosaic's.
            self._engine.load_state(state, options)
        self._resume_state = state
        self._resume_options = options
        if obj.get('initial_physical_nodes') is not None:
            self.initial_physical_nodes = obj['initial_physical_nodes']
