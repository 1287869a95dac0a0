"""Who this process is: node, rank and DataLoader worker, read as Mosaic reads
them (RANK, WORLD_SIZE, LOCAL_WORLD_SIZE env vars set by torchrun, and
torch.utils.data.get_worker_info())."""
import os

__all__ = ['World']


def _env_int(name, default):
    value = os.environ.get(name)
    return int(value) if value not in (None, '') else default


class World:

    def __init__(self):
        self.rank = _env_int('RANK', 0)
        self.num_ranks = _env_int('WORLD_SIZE', 1)
        self.ranks_per_node = _env_int('LOCAL_WORLD_SIZE', 1)
        if self.num_ranks % self.ranks_per_node:
            raise ValueError(f'WORLD_SIZE {self.num_ranks} is not a multiple of LOCAL_WORLD_SIZE '
                             f'{self.ranks_per_node}')
        self.num_nodes = self.num_ranks // self.ranks_per_node
        self.node = self.rank // self.ranks_per_node
        self.rank_of_node = self.rank % self.ranks_per_node
        self.worker = 0
        self.workers_per_rank = 1
        try:
            from torch.utils.data import get_worker_info
            info = get_worker_info()
        except ImportError:
            info = None
        if info is not None:
            self.worker = info.id
            self.workers_per_rank = info.num_workers

    @classmethod
    def of(cls, num_nodes, ranks_per_node, rank=0, worker=0, workers_per_rank=1):
        """A given world (not this process's), e.g. for planning."""
        out = cls.__new__(cls)
        out.num_nodes = num_nodes
        out.ranks_per_node = ranks_per_node
        out.num_ranks = num_nodes * ranks_per_node
        out.rank = rank
        out.node = rank // ranks_per_node
        out.rank_of_node = rank % ranks_per_node
        out.worker = worker
        out.workers_per_rank = workers_per_rank
        return out

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
                        worker=self.worker, workers_per_rank=self.workers_per_rank)
