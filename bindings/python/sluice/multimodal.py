"""mosaicml-streaming's multimodal datasets (`streaming.multimodal`), the
WebVid classes that are thin subclasses: StreamingInsideWebVid (videos
stored inside the shards: the samples as they are),
StreamingOutsideGIWebVid (videos stored beside the shards: get_item
downloads the sample's 'content_path' from `extra_remote` into
`extra_local` once, through Sluice's own stores, and adds its bytes as
'content') and StreamingOutsideDTWebVid (the same samples; while it is
iterated, a download thread fetches the videos of the samples to come,
see sluice.video_prefetch)."""
import os

from sluice.dataset import StreamingDataset
from sluice.download import CloudDownloader

__all__ = ['StreamingInsideWebVid', 'StreamingOutsideGIWebVid', 'StreamingOutsideDTWebVid']


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
            local = self.fetch_video(self._extra_downloader, sample['content_path'])
            with open(local, 'rb') as f:
                sample['content'] = f.read()
        return sample

    def fetch_video(self, downloader, rel_path):
        """The path of video `rel_path` in extra_local, downloaded from
        extra_remote with `downloader` (one per thread) unless it is there."""
        local = os.path.join(self.extra_local, rel_path)
        if not os.path.exists(local):
            downloader.download(os.path.join(self.extra_remote, rel_path), local,
                                self.download_timeout)
        return local


class StreamingOutsideDTWebVid(StreamingOutsideGIWebVid):
    """WebVid with the videos outside the shards, fetched ahead by a
    download thread ("DT") while the dataset is iterated: the samples are
    StreamingOutsideGIWebVid's (its get_item reads each video, fetching it
    if the thread has not yet). The thread follows this worker's planned
    order (the engine's), at most `predownload` samples ahead of the
    consumer."""

    def __iter__(self):
        from sluice.video_prefetch import VideoPrefetch
        epoch, sample_in_epoch, worker, workers = self._begin_iteration()
        if not (self.extra_local and self.extra_remote):
            yield from map(self.__getitem__,
                           self._engine.iterate_ids(epoch, sample_in_epoch, worker, workers))
            return
        with VideoPrefetch(self, epoch, sample_in_epoch, worker, workers) as prefetch:
            self._video_prefetch = prefetch  # the current epoch's (tests look at it)
            for idx in self._engine.iterate_ids(epoch, sample_in_epoch, worker, workers):
                prefetch.consume()
                yield self[idx]
