"""Who a process is: node, rank and DataLoader worker, with Mosaic's World
fields. `World()` detects this process (RANK, WORLD_SIZE, LOCAL_WORLD_SIZE
as torchrun sets them, read by the engine's rule: sluice_world_from_env),
and torch.utils.data.get_worker_info(), as Mosaic's World.detect();
`World(num_nodes, ranks_per_node, workers_per_rank, worker)` describes a
given world, as Mosaic's constructor (`worker` counts workers across the
whole job); `World.resolve(given)` a world of explicit values (a dataset's
`world` argument)."""
import ctypes
import json
import warnings

from sluice import _lib

__all__ = ['World']

# The engine's warning once shown in this process (DataLoader workers forked
# after it inherit this): a world is detected many times per job.
_warned = False


def _resolve(given=None):
    """(num_nodes, ranks_per_node, rank) of this process, as the engine
    reads the environment, or the world `given` (a dict with any of rank,
    world_size, local_rank, local_world_size; ValueError for values that
    disagree). The one place the package reads the world, so the one
    place it warns of it (only of a world read from the environment alone)."""
    out = [ctypes.c_int64() for _ in range(3)]
    if given is None:
        _lib.check(_lib.lib.sluice_world_from_env(*[ctypes.byref(x) for x in out]))
        _warn_of_unranked_world()
    else:
        _lib.check(_lib.lib.sluice_world_resolve(json.dumps(given).encode(),
                                                 *[ctypes.byref(x) for x in out]))
    return tuple(x.value for x in out)


def world_option(world):
    """A dataset's `world` argument as the engine's "world" object: None
    (this process, torchrun's variables), a (rank, world_size) pair, or a
    dict with any of rank, world_size, local_rank and local_world_size (the
    environment is then not read: the keys not given take their defaults,
    by the engine's rule)."""
    if world is None:
        return None
    if isinstance(world, dict):
        keys = ('rank', 'world_size', 'local_rank', 'local_world_size')
        unknown = sorted(set(world) - set(keys))
        if unknown:
            raise ValueError(f'world: unknown keys {unknown}; expected any of {list(keys)}')
        return {k: world[k] for k in keys if world.get(k) is not None} or None
    if isinstance(world, (tuple, list)) and len(world) == 2:
        return {'rank': world[0], 'world_size': world[1]}
    raise TypeError(f'world: expected None, (rank, world_size) or a dict of rank, world_size, '
                    f'local_rank, local_world_size; got {world!r}')


def _warn_of_unranked_world():
    """Shows, once per process, the engine's warning for WORLD_SIZE > 1
    without RANK (every process rank 0, all reading the same samples: Mosaic
    reads the world the same way, so this stays no error)."""
    global _warned
    if _warned:
        return
    out = ctypes.c_void_p()
    _lib.check(_lib.lib.sluice_world_env_warning(ctypes.byref(out)))
    if not out.value:
        return
    try:
        text = ctypes.string_at(out).decode()
    finally:
        _lib.lib.sluice_free(out)
    _warned = True
    warnings.warn(text, stacklevel=4)


def _worker_info():
    """(worker of this rank, workers per rank) of the DataLoader worker this
    runs in, (0, 1) outside one."""
    try:
        from torch.utils.data import get_worker_info
        info = get_worker_info()
    except ImportError:
        info = None
    return (info.id, info.num_workers) if info is not None else (0, 1)


class World:
    """Counts are global: num_ranks and num_workers cover every node
    (workers_per_rank is the DataLoader's num_workers)."""

    def __init__(self, num_nodes=None, ranks_per_node=None, workers_per_rank=None, worker=None):
        given = (num_nodes, ranks_per_node, workers_per_rank, worker)
        if all(x is None for x in given):
            num_nodes, ranks_per_node, rank = _resolve()
            worker_of_rank, workers_per_rank = _worker_info()
            worker = rank * workers_per_rank + worker_of_rank
        elif any(x is None for x in given):
            raise TypeError('World: give all of num_nodes, ranks_per_node, workers_per_rank and '
                            'worker, or none (this process)')
        self.num_nodes = num_nodes
        self.ranks_per_node = ranks_per_node
        self.workers_per_rank = workers_per_rank
        self.worker = worker
        self.num_ranks = num_nodes * ranks_per_node
        self.workers_per_node = ranks_per_node * workers_per_rank
        self.num_workers = num_nodes * self.workers_per_node
        self.node = worker // self.workers_per_node
        self.rank = worker // workers_per_rank
        self.rank_of_node = self.rank % ranks_per_node
        self.worker_of_node = worker % self.workers_per_node
        self.worker_of_rank = worker % workers_per_rank
        self.is_multinode = num_nodes > 1
        self.is_leader = worker == 0
        self.is_local_leader = self.worker_of_node == 0

    @classmethod
    def detect(cls):
        """This process's world."""
        return cls()

    @classmethod
    def resolve(cls, given=None):
        """The world `given` (world_option's dict: the rank a process reads
        as without torchrun's variables, e.g. a Ray task reading partition i
        of n), and the DataLoader worker this runs in. None: as detect()."""
        if given is None:
            return cls()
        num_nodes, ranks_per_node, rank = _resolve(given)
        worker_of_rank, workers_per_rank = _worker_info()
        return cls(num_nodes, ranks_per_node, workers_per_rank,
                   rank * workers_per_rank + worker_of_rank)

    @classmethod
    def of(cls, num_nodes, ranks_per_node, rank=0, worker=0, workers_per_rank=1):
        """A given world from a rank and the worker within that rank."""
        return cls(num_nodes, ranks_per_node, workers_per_rank, rank * workers_per_rank + worker)

    def to_json(self):
        return dict(self.__dict__)

    def copy(self):
        return World(self.num_nodes, self.ranks_per_node, self.workers_per_rank, self.worker)

    def detect_workers(self):
        """This world with the DataLoader worker this runs in."""
        worker_of_rank, workers_per_rank = _worker_info()
        return World(self.num_nodes, self.ranks_per_node, workers_per_rank,
                     self.rank * workers_per_rank + worker_of_rank)

    def replicate(self, replication):
        """The planning world of Mosaic's `replication`: each group of
        `replication` consecutive ranks acts as one rank. Its nodes are the
        real ones when ranks_per_node divides the merged ranks, else one."""
        if replication <= 0:
            raise ValueError('Replication factor must be positive.')
        if self.num_ranks % replication:
            raise ValueError('World size must be divisible by your replication factor.')
        num_ranks = self.num_ranks // replication
        num_nodes = num_ranks // self.ranks_per_node if num_ranks % self.ranks_per_node == 0 else 1
        return World.of(num_nodes, num_ranks // num_nodes, rank=self.rank // replication,
                        worker=self.worker_of_rank, workers_per_rank=self.workers_per_rank)
