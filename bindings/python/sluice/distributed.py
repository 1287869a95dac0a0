"""Mosaic's `streaming.base.distributed`: the process's place in a torchrun
job from its environment (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE),
and collectives that act only when torch.distributed is initialized."""
import os

__all__ = ['get_rank', 'get_world_size', 'get_local_rank', 'get_local_world_size', 'barrier',
           'broadcast', 'all_gather', 'all_gather_object', 'maybe_init_dist']


def _env(name, default):
    return int(os.environ.get(name, default))


def get_rank():
    return _env('RANK', 0)


def get_world_size():
    return _env('WORLD_SIZE', 1)


def get_local_rank():
    return _env('LOCAL_RANK', 0)


def get_local_world_size():
    return _env('LOCAL_WORLD_SIZE', 1)


def _dist():
    """torch.distributed when it is initialized, else None."""
    try:
        import torch.distributed as dist
    except ImportError:
        return None
    return dist if dist.is_available() and dist.is_initialized() else None


def barrier():
    dist = _dist()
    if dist is not None:
        dist.barrier()


def broadcast(tensor, src):
    dist = _dist()
    if dist is not None:
        dist.broadcast(tensor, src)


def all_gather(tensor_list, tensor):
    dist = _dist()
    if dist is not None:
        dist.all_gather(tensor_list, tensor)


def all_gather_object(obj):
    """Every rank's `obj`, by rank. Alone (WORLD_SIZE 1), [obj]; several
    ranks without torch.distributed initialized is an error."""
    dist = _dist()
    if dist is not None:
        gathered = [None] * get_world_size()
        dist.all_gather_object(gathered, obj)
        return gathered
    world_size = get_world_size()
    if world_size == 1:
        return [obj]
    raise RuntimeError(f'The world_size({world_size}) > 1, but the distributed package is not '
                       f'available or has not been initialized. Please check you have '
                       f'initialized the distributed runtime and that PyTorch has been built '
                       f'with distributed support.')


def maybe_init_dist():
    """Initializes torch.distributed (nccl with CUDA, else gloo) for a job of
    several ranks that has not; True when this call did."""
    if get_world_size() == 1:
        return False
    try:
        import torch
        import torch.distributed as dist
    except ImportError:
        return False
    if not dist.is_available() or dist.is_initialized():
        return False
    backend = 'nccl' if torch.cuda.is_available() and dist.is_nccl_available() else 'gloo'
    dist.init_process_group(backend=backend, rank=get_rank(), world_size=get_world_size())
    return True
