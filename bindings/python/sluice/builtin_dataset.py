"""BuiltinDataset: the constructor mosaicml-streaming's own dataset classes
(streaming.vision, streaming.text) share. It takes StreamingDataset's
single-stream arguments with the defaults Mosaic gives these classes
(partition_algo 'orig', shuffle_algo 'py1s', shuffle blocks of 1 << 18),
so their sample order is Mosaic's, not Sluice's defaults'."""
from sluice.dataset import StreamingDataset

__all__ = ['BuiltinDataset']


class BuiltinDataset(StreamingDataset):

    def __init__(self, *, remote=None, local=None, split=None, download_retry=2,
                 download_timeout=60, validate_hash=None, keep_zip=False, epoch_size=None,
                 predownload=None, cache_limit=None, partition_algo='orig',
                 num_canonical_nodes=None, batch_size=None, shuffle=False, shuffle_algo='py1s',
                 shuffle_seed=9176, shuffle_block_size=1 << 18):
        super().__init__(remote=remote, local=local, split=split, download_retry=download_retry,
                         download_timeout=download_timeout, validate_hash=validate_hash,
                         keep_zip=keep_zip, epoch_size=epoch_size, predownload=predownload,
                         cache_limit=cache_limit, partition_algo=partition_algo,
                         num_canonical_nodes=num_canonical_nodes, batch_size=batch_size,
                         shuffle=shuffle, shuffle_algo=shuffle_algo, shuffle_seed=shuffle_seed,
                         shuffle_block_size=shuffle_block_size)
