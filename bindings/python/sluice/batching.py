"""Mosaic's `streaming.base.batching.generate_work`: an epoch's sample ids
for every worker of a world, from Sluice's planner (the order Mosaic's
batching methods give)."""

__all__ = ['generate_work']


def generate_work(batching_method, dataset, world, epoch, sample_in_epoch):
    """Array of shape (nodes, ranks per node, workers per rank, batches,
    batch size) of `dataset`'s sample ids, -1 where a worker has none, for
    `world` (a World) planned with `batching_method`."""
    return dataset.work(world, epoch, sample_in_epoch, batching_method=batching_method)
