"""mosaicml-streaming's multimodal datasets (`streaming.multimodal`), the
WebVid classes that are thin subclasses: StreamingInsideWebVid (videos
stored inside the shards: the samples as they are) and
StreamingOutsideGIWebVid (videos stored beside the shards: get_item
downloads the sample's 'content_path' from `extra_remote` into
`extra_local` once, through Sluice's own stores, and adds its bytes as
'content'). Mosaic's StreamingOutsideDTWebVid drives Mosaic's internal
iterator from a download thread and has no counterpart."""
import os

from sluice.dataset import StreamingDataset
from sluice.download import CloudDownloader

__all__ = ['StreamingInsideWebVid', 'StreamingOutsideGIWebVid']


class StreamingInsideWebVid(StreamingDataset):
    """WebVid with the videos inside the shards: the samples as stored."""


class StreamingOutsideGIWebVid(StreamingDataset):
    """WebVid with the videos outside the shards, fetched in get_item.
    Takes StreamingDataset's arguments (with Mosaic's defaults for this
    class: partition_algo 'orig', shuffle_algo 'py1s', shuffle blocks of
    1 << 18) and `extra_local` / `extra_remote`, the folders of the videos;
    without both, samples are left as stored."""

    def __init__(self, *, partition_algo='orig', shuffle_algo='py1s',
                 shuffle_block_size=1 << 18, download_timeout=60, extra_local=None,
                 extra_remote=None, **kwargs):
        super().__init__(partition_algo=partition_algo, shuffle_algo=shuffle_algo,
                         shuffle_block_size=shuffle_block_size,
                         download_timeout=download_timeout, **kwargs)
        self.download_timeout = download_timeout
        self.extra_local = extra_local
        self.extra_remote = extra_remote
        self._extra_downloader = CloudDownloader.get(extra_remote)

    def get_item(self, idx):
        sample = super().get_item(idx)
        if self.extra_local and self.extra_remote:
            rel_path = sample['content_path']
            local = os.path.join(self.extra_local, rel_path)
            if not os.path.exists(local):
                self._extra_downloader.download(os.path.join(self.extra_remote, rel_path), local,
                                                self.download_timeout)
            with open(local, 'rb') as f:
                sample['content'] = f.read()
        return sample
